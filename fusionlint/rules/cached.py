"""The rules a file is checked with, named by a digest of their files' bytes (part of the result
cache's key) and read on first use: from the cache's validated copy when it has one (reading and
validating the YAML rulesets costs more than a small file's parse), else from the YAML, keeping a
copy. Naming them costs only hashing the ruleset files, so ``check`` can start parsing a single
file before the rules are read (the forked child reads them while libclang parses)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fusionlint import cache
from fusionlint.rules.loader import Rule, builtin_ruleset_files, load_rules

_LOADED: dict[str, tuple[Rule, ...]] = {}  # content key -> rules, for this process (and its forks)


@dataclass(frozen=True)
class RuleSource:
    extra: tuple[str, ...]  # ruleset files on top of (or, with ``only``, instead of) the built-in ones
    only: bool
    key: str  # digest of the rules' files (or, for files that cannot be read, of the rules)
    cache_root: str | None = None

    def get(self) -> tuple[Rule, ...]:
        """The rules (read once per process; a forked child inherits what its parent read)."""
        if self.key not in _LOADED:
            store = cache.Cache(Path(self.cache_root)) if self.cache_root else None
            rules = store.load_rules(self.key) if store else None
            if rules is None:
                rules = load_rules(list(self.extra), replace=self.only)
                if store:
                    store.store_rules(self.key, rules)
            _LOADED[self.key] = tuple(rules)
        return _LOADED[self.key]


@lru_cache(maxsize=None)
def _read(extra: tuple[str, ...], only: bool) -> tuple[Rule, ...]:
    return tuple(load_rules(list(extra), replace=only))


def rule_source(extra: tuple[str, ...], only: bool, store: cache.Cache | None) -> RuleSource:
    """Name the rules of ``extra`` (and the built-in rulesets unless ``only``) without reading
    them. A ruleset file that cannot be read is read at once, so that its error comes now."""
    files = [] if only else [str(f) for f in builtin_ruleset_files()]
    files += list(extra)
    hashes = [cache.file_hash(f) for f in files]
    if any(h is None for h in hashes):  # unreadable: let the loader report it
        rules = _read(extra, only)
        key = cache.digest([dataclasses.asdict(r) for r in rules])
        _LOADED[key] = rules
        return RuleSource(extra, only, key)
    key = cache.digest("rules", cache.fusionlint_key(), only, list(zip(files, hashes)))
    return RuleSource(extra, only, key, str(store.root) if store else None)
