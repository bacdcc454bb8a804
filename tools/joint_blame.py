"""Which fields a joint-check disagreement hinges on: each configuration the model got wrong is
measured again with one field at a time set back to the base configuration. A missed failure
that works again once field F is at its base value involves F; the fields found together are the
interaction the per-stage sweep did not cover. Runs on the GPU machine (builds the sweep driver).

    python3 tools/joint_blame.py JOINT_CHECK.json [...] --out BLAME.json [-j 16]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fusionlint.evidence.sweep import runner, space, stages  # noqa: E402


def variants(cfg: dict) -> list[tuple[str, dict]]:
    out = [("as drawn", dict(cfg))]
    for f, base in space.BASE.items():
        if cfg.get(f) == base:
            continue
        v = dict(cfg)
        v[f] = base
        for tied, leader in stages.TIES.items():  # C follows D, as the sweep measures it
            if f == leader:
                v[tied] = v[leader]
        out.append((f, v))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("checks", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("-j", "--jobs", type=int, default=16)
    args = ap.parse_args(argv)
    cases = []
    for path in args.checks:
        for d in json.loads(path.read_text())["disagreements"]:
            cases.append({"check": path.name, "kind": d["kind"], "config": d["config"], "measured": d["measured"],
                          "predicted": d["predicted"], "predicted_stage": d["predicted_stage"]})
    plan = [(i, name, v) for i, c in enumerate(cases) for name, v in variants(c["config"])]
    with tempfile.TemporaryDirectory() as tmp:
        exe = runner.build_driver(Path(tmp))
        got = runner.run_lines(exe, [space.encode(v) for _, _, v in plan], args.jobs)
    for (i, name, _), status in zip(plan, got):
        cases[i].setdefault("reverted", {})[name] = status
    blame = Counter()
    for c in cases:
        first = c["reverted"].pop("as drawn")
        c["measured_again"] = first
        works = first == runner.OK
        # the fields whose base value flips the outcome
        c["hinges_on"] = sorted(f for f, s in c["reverted"].items() if (s == runner.OK) != works)
        blame[(c["predicted_stage"] or "missed", tuple(c["hinges_on"]))] += 1
    args.out.write_text(json.dumps({"cases": cases}, indent=1, sort_keys=True) + "\n")
    for (stage, fields), n in blame.most_common():
        print(f"{n:4d}  {stage:22s} {', '.join(fields) or '(no single field)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
