"""Ruleset files: YAML -> validated ``Rule`` objects, with errors that name file and line.

YAML is read with ``yaml.safe_load`` semantics only (``SafeLoader``): a ruleset is data and
can never run code.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from fusionlint.rules import derived

CONDITION_OPS = ("eq", "ne", "in", "not_in", "lt", "le", "gt", "ge", "multiple_of", "not_multiple_of",
                 "present", "known")


class RulesetError(Exception):
    """A ruleset file that cannot be used; the message is one line: ``file:line: problem``."""


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    severity: str
    scope: str
    when: dict
    message: str
    fix: str
    references: tuple[dict, ...]
    arch: tuple[str, ...] = ()
    summary: str = ""
    evidence: dict = field(default_factory=dict)
    at: str = "heuristic"
    source: str = ""  # file:line of the rule's definition

    def applies_to(self, arch: str) -> bool:
        return not self.arch or arch in self.arch or arch.rstrip("a") in self.arch


@lru_cache(maxsize=1)
def _schema() -> dict:
    return json.loads((resources.files("fusionlint.rules") / "schema.json").read_text(encoding="utf-8"))


def _line_of(node: yaml.Node | None, path: list) -> int:
    """1-based line of the YAML node at ``path`` (as far as it exists)."""
    line = node.start_mark.line + 1 if node is not None else 1
    for step in path:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == step), None)
            if match is None:
                key = next((k for k, v in node.value if k.value == step), None)
                return key.start_mark.line + 1 if key is not None else line
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        else:
            break
        line = node.start_mark.line + 1
    return line


def _check_conditions(cond: Any, path: list, problems: list[tuple[list, str]]) -> None:
    if not isinstance(cond, dict):
        return
    for key in ("all", "any"):
        if key in cond:
            for i, sub in enumerate(cond[key]):
                _check_conditions(sub, [*path, key, i], problems)
            return
    if "not" in cond:
        _check_conditions(cond["not"], [*path, "not"], problems)
        return
    if "derived" in cond and cond["derived"] not in derived.REGISTRY:
        problems.append(([*path, "derived"], f"unknown derived quantity '{cond['derived']}' "
                                             f"(known: {', '.join(sorted(derived.REGISTRY))})"))
    if "fact" in cond:
        head = cond["fact"].split(".")[0]
        if head not in derived.FACT_ROOTS:
            problems.append(([*path, "fact"], f"unknown fact '{cond['fact']}' "
                                              f"(facts start with one of: {', '.join(sorted(derived.FACT_ROOTS))})"))


def load_ruleset(path: Path | str, text: str | None = None) -> list[Rule]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8") if text is None else text
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesetError(f"{path}: cannot read ruleset: {exc}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506 - SafeLoader: plain data only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RulesetError(f"{path}:{line}: YAML syntax error: {problem}") from None
    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        err = min(errors, key=lambda e: -len(e.absolute_path))
        where = list(err.absolute_path)
        field_name = ".".join(str(p) for p in where) or "(top level)"
        message = err.message if len(err.message) < 160 else err.message[:157] + "..."
        if err.validator == "oneOf" and isinstance(err.instance, dict):
            message = f"not a valid condition: {json.dumps(err.instance)[:120]}"
        raise RulesetError(f"{path}:{_line_of(node, where)}: {field_name}: {message}")
    problems: list[tuple[list, str]] = []
    seen: dict[str, int] = {}
    rules: list[Rule] = []
    for i, raw in enumerate(data["rules"]):
        line = _line_of(node, ["rules", i])
        if raw["id"] in seen:
            problems.append((["rules", i, "id"], f"duplicate rule id {raw['id']} (first defined at line {seen[raw['id']]})"))
        seen.setdefault(raw["id"], line)
        _check_conditions(raw["when"], ["rules", i, "when"], problems)
        rules.append(Rule(id=raw["id"], name=raw["name"], severity=raw["severity"], scope=raw["scope"],
                          when=raw["when"], message=raw["message"], fix=raw["fix"],
                          references=tuple(raw["references"]), arch=tuple(raw.get("arch", ())),
                          summary=raw.get("summary", ""), evidence=raw.get("evidence", {}),
                          at=raw.get("at", "heuristic"),
                          source=f"{path}:{line}"))
    if problems:
        where, problem = problems[0]
        raise RulesetError(f"{path}:{_line_of(node, where)}: {problem}")
    return rules


def _rulesets_root() -> Path:
    """The built-in rulesets: the installed ``fusionlint.rulesets`` package (the repository's
    top-level ``rulesets/`` folder), or that folder itself when running from a checkout."""
    try:
        return Path(str(resources.files("fusionlint.rulesets")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "rulesets"


def builtin_ruleset_files() -> list[Path]:
    base = _rulesets_root()
    files: list[Path] = []
    if base.is_dir():
        for sub in sorted(base.iterdir(), key=lambda p: p.name):
            if sub.is_dir():
                files += sorted((Path(str(f)) for f in sub.iterdir() if f.name.endswith(".yaml")), key=str)
            elif sub.name.endswith(".yaml"):
                files.append(Path(str(sub)))
    return files


def load_rules(extra: list[str] | None = None, replace: bool = False) -> list[Rule]:
    """The built-in rulesets (unless ``replace``) plus the user's ruleset files, in order.

    A user rule with the id of an earlier rule replaces it."""
    files = [] if replace else builtin_ruleset_files()
    files += [Path(p) for p in (extra or [])]
    by_id: dict[str, Rule] = {}
    for f in files:
        for rule in load_ruleset(f):
            by_id[rule.id] = rule
    return sorted(by_id.values(), key=lambda r: r.id)
