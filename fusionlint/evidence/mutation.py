"""The one mutation step both random-mutation sets share: one or two distinct fields of a working
configuration, each given another value of its domain (the way real mistakes are made)."""
from __future__ import annotations

import random


def mutate(rng: random.Random, fields: dict[str, tuple[list, float]], cfg: dict) -> tuple[dict, list[dict]]:
    """``fields``: field -> (its domain, its weight when picking). Returns the mutated configuration
    and the changes (field, old, new). The draws are made in a fixed order, so a seed gives the
    same set every time (the recorded H200 truth depends on it)."""
    names = list(fields)
    weights = [fields[f][1] for f in names]
    count = rng.choice((1, 2))
    picked: list[str] = []
    while len(picked) < count:
        f = rng.choices(names, weights)[0]
        if f not in picked:
            picked.append(f)
    out = dict(cfg)
    changes = []
    for f in picked:
        out[f] = rng.choice([v for v in fields[f][0] if v != cfg[f]])
        changes.append({"field": f, "old": cfg[f], "new": out[f]})
    return out, changes
