"""The rules a file is checked with, named by a digest of their files' bytes (part of the result
cache's key) and read on first use: from the cache's validated copy when it has one (reading and
validating the YAML rulesets costs more than a small file's parse), else from the YAML, keeping a
copy. Naming them costs only hashing the ruleset files, so ``check`` can start parsing a single
file before the rules are read (the forked child reads them while libclang parses)."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import lru_cache

from fusionlint import store
from fusionlint.rules.loader import Rule, builtin_ruleset_files, load_rules

_LOADED: dict[str, tuple[Rule, ...]] = {}  # content key -> rules, for this process (and its forks)
_TABLES: dict[str, object] = {}  # support table path -> SupportTable, for this process (and its forks)


@dataclass(frozen=True)
class RuleSource:
    extra: tuple[str, ...]  # ruleset files on top of (or, with ``only``, instead of) the built-in ones
    only: bool
    key: str  # digest of the rules' files (or, for files that cannot be read, of the rules)
    cache_root: str | None = None
    support_table: str | None = None  # the measured cuBLASLt support table FL127 checks against

    def preload(self) -> None:
        """Read the rules and the support table (a single file's child does it while libclang parses)."""
        self.get()
        self.support()

    def support(self):
        """The support table (``fusionlint.model.support_table.SupportTable``), read once per process; None
        without one."""
        if not self.support_table:
            return None
        if self.support_table not in _TABLES:
            from fusionlint.model.support_table import SupportTable

            copy = None
            if self.cache_root:  # the decompressed JSON, named by the table's bytes
                h = store.file_hash(self.support_table)
                copy = store.cache_files(self.cache_root, "support", f"{h}.json") if h else None
            _TABLES[self.support_table] = SupportTable.load(self.support_table, copy)
        return _TABLES[self.support_table]

    def get(self) -> tuple[Rule, ...]:
        """The rules (read once per process; a forked child inherits what its parent read)."""
        if self.key not in _LOADED:
            rules = _cached_rules(self.cache_root, self.key) if self.cache_root else None
            if rules is None:
                rules = load_rules(list(self.extra), replace=self.only)
                if self.cache_root:
                    _keep_rules(self.cache_root, self.key, rules)
            _LOADED[self.key] = tuple(rules)
        return _LOADED[self.key]


# -- the validated rules kept in the cache directory (<dir>/v1/rules/<key>.json) ------------------
def _rule_from_dict(d: dict) -> Rule:
    d = dict(d)
    d["references"] = tuple(d["references"])
    d["arch"] = tuple(d["arch"])
    d["about"] = tuple(d.get("about", ()))
    return Rule(**d)


def _cached_rules(root: str, key: str) -> list[Rule] | None:
    data = store.read_json(store.cache_files(root, "rules", f"{key}.json"))
    if data is None or data.get("key") != key:
        return None
    try:
        return [_rule_from_dict(d) for d in data["rules"]]
    except (KeyError, TypeError):
        return None


def _keep_rules(root: str, key: str, rules: list[Rule]) -> bool:
    """Keep a JSON copy of ``rules``, only when it reads back identical."""
    data = [dataclasses.asdict(r) for r in rules]
    try:
        if [_rule_from_dict(d) for d in json.loads(json.dumps(data))] != list(rules):
            return False
    except (TypeError, ValueError):
        return False
    return store.write_atomic(store.cache_files(root, "rules", f"{key}.json"),
                              json.dumps({"key": key, "rules": data}).encode("utf-8"))


@lru_cache(maxsize=None)
def _read(extra: tuple[str, ...], only: bool) -> tuple[Rule, ...]:
    return tuple(load_rules(list(extra), replace=only))


def rule_source(extra: tuple[str, ...], only: bool, cache_dir: object | None,
                support_table: str | None = None) -> RuleSource:
    """Name the rules of ``extra`` (and the built-in rulesets unless ``only``) and the support
    table without reading them. A ruleset file that cannot be read is read at once, so that its
    error comes now; so is a support table that cannot be read."""
    files = [] if only else [str(f) for f in builtin_ruleset_files()]
    files += list(extra)
    hashes = [store.file_hash(f) for f in files]
    table_hash = None
    if support_table:
        table_hash = store.file_hash(support_table)
        if table_hash is None:
            from fusionlint.model.support_table import TableError

            raise TableError(f"{support_table}: cannot read the support table")
    if any(h is None for h in hashes):  # unreadable: let the loader report it
        rules = _read(extra, only)
        key = store.digest([dataclasses.asdict(r) for r in rules], support_table, table_hash)
        _LOADED[key] = rules
        return RuleSource(extra, only, key, support_table=support_table)
    key = store.digest("rules", store.fusionlint_key(), only, list(zip(files, hashes)), table_hash)
    root = getattr(cache_dir, "root", None)  # the run's result cache (cache.Cache), if any
    return RuleSource(extra, only, key, str(root) if root is not None else None, support_table)
