"""Ruleset files: YAML -> validated ``Rule`` objects, with errors that name file and line.

YAML is read with ``yaml.safe_load`` semantics only (``SafeLoader``): a ruleset is data and
can never run code.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from fusionlint.errors import InputError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up (~6 ms)

if TYPE_CHECKING:
    from typing import Any

    import yaml

# yaml and the derived quantities are imported where a ruleset is read and validated: a run whose
# validated rules come from the cache needs neither.

CONDITION_OPS = ("eq", "ne", "in", "not_in", "lt", "le", "gt", "ge", "multiple_of", "not_multiple_of",
                 "present", "known")


class RulesetError(InputError):
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
    about: tuple[str, ...] = ()  # the facts a finding is about, most telling first (where it is reported)

    def applies_to(self, arch: str) -> bool:
        return not self.arch or arch in self.arch or arch.rstrip("a") in self.arch


@lru_cache(maxsize=1)
def _schema() -> dict:
    return json.loads((Path(__file__).resolve().parent / "schema.json").read_text(encoding="utf-8"))


def _line_of(node: yaml.Node | None, path: list) -> int:
    """1-based line of the YAML node at ``path`` (as far as it exists)."""
    import yaml

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




def _fact_problem(fact: str, scope: str | None) -> str | None:
    """Why ``fact`` names nothing in ``scope`` (None: it is fine)."""
    from fusionlint.rules import views

    head, *rest = fact.split(".")
    roots = views.fact_roots()
    if head not in roots:
        return f"unknown fact '{fact}' (facts start with one of: {', '.join(sorted(roots))})"
    try:
        known = views.fact_fields().get(scope or "")
    except Exception:  # noqa: BLE001 - the fact model itself is broken: check the roots only
        return None
    if known is None or head not in known:
        if known is not None and any(head in roots for roots in views.fact_fields().values()):
            return f"fact '{fact}' does not exist in scope {scope} (its facts: {', '.join(sorted(known))})"
        return None  # a root this check does not know yet
    fields = known[head]
    if fields is views.ANY:
        return None
    if fields is None:
        return f"unknown fact '{fact}': {head} has no fields" if rest else None
    if not rest:
        return None  # the whole group
    if len(rest) > 1 or rest[0] not in fields:
        close = sorted(f for f in fields if f.startswith(rest[0][:3]))[:8] or sorted(fields)[:8]
        return f"unknown fact '{fact}': {head} has no field '{'.'.join(rest)}' (e.g. {', '.join(close)})"
    return None


def _check_conditions(cond: Any, path: list, problems: list[tuple[list, str]], scope: str | None = None) -> None:
    if not isinstance(cond, dict):
        return
    for key in ("all", "any"):
        if key in cond:
            for i, sub in enumerate(cond[key]):
                _check_conditions(sub, [*path, key, i], problems, scope)
            return
    if "not" in cond:
        _check_conditions(cond["not"], [*path, "not"], problems, scope)
        return
    from fusionlint.rules import derived

    if "derived" in cond and cond["derived"] not in derived.REGISTRY:
        problems.append(([*path, "derived"], f"unknown derived quantity '{cond['derived']}' "
                                             f"(known: {', '.join(sorted(derived.REGISTRY))})"))
    elif "derived" in cond and scope and derived.SCOPES.get(cond["derived"], scope) != scope:
        problems.append(([*path, "derived"], f"derived quantity '{cond['derived']}' is computed from "
                                             f"{derived.SCOPES[cond['derived']]} facts, not from the facts of "
                                             f"this {scope} rule (it would never fire)"))
    if "fact" in cond:
        problem = _fact_problem(cond["fact"], scope)
        if problem:
            problems.append(([*path, "fact"], problem))


MAX_NODES = 200_000  # YAML nodes after alias expansion: a "billion laughs" file is refused, not expanded


def _expanded_size(node: yaml.Node | None, limit: int) -> int:
    """Number of YAML nodes with every alias expanded (stops counting past ``limit``)."""
    import yaml

    sizes: dict[int, int] = {}

    def size(n: yaml.Node) -> int:
        if id(n) in sizes:
            return sizes[id(n)]
        sizes[id(n)] = limit + 1  # a node inside itself (a recursive alias) is too large
        total = 1
        if isinstance(n, yaml.SequenceNode):
            children = n.value
        elif isinstance(n, yaml.MappingNode):
            children = [x for pair in n.value for x in pair]
        else:
            children = []
        for child in children:
            total += size(child)
            if total > limit:
                break
        sizes[id(n)] = min(total, limit + 1)
        return sizes[id(n)]

    return size(node) if node is not None else 0


def load_ruleset(path: Path | str, text: str | None = None) -> list[Rule]:
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8") if text is None else text
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesetError(f"{path}: cannot read ruleset: {exc}") from None
    # libyaml's parser when it is there (the built-in rulesets: ~0.1 s instead of ~1 s); a file it
    # refuses is read again by the pure-Python loader, which words the error and its line
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            node = yaml.compose(text, Loader=fast)
            data = yaml.load(text, Loader=fast)  # noqa: S506 - CSafeLoader: plain data only
        except (yaml.YAMLError, RecursionError):
            fast = None
    try:
        if fast is None:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
            data = yaml.load(text, Loader=yaml.SafeLoader)  # noqa: S506 - SafeLoader: plain data only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RulesetError(f"{path}:{line}: YAML syntax error: {problem}") from None
    except RecursionError:
        raise RulesetError(f"{path}:1: YAML nested too deeply") from None
    if _expanded_size(node, MAX_NODES) > MAX_NODES:
        raise RulesetError(f"{path}:1: more than {MAX_NODES} YAML nodes once aliases are expanded "
                           "(a ruleset is not that large: an alias bomb?)")
    import jsonschema  # here, not at the top: a run whose validated rules are cached never needs it (~0.1 s)

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
        _check_conditions(raw["when"], ["rules", i, "when"], problems, raw["scope"])
        if "." in raw.get("at", ""):
            problem = _fact_problem(raw["at"], raw["scope"])
            if problem:
                problems.append((["rules", i, "at"], problem.replace("fact", "field", 1)))
        for j, fact in enumerate(raw.get("about", ())):
            problem = _fact_problem(fact, raw["scope"])
            if problem:
                problems.append((["rules", i, "about", j], problem))
        rules.append(Rule(id=raw["id"], name=raw["name"], severity=raw["severity"], scope=raw["scope"],
                          when=raw["when"], message=raw["message"], fix=raw["fix"],
                          references=tuple(raw["references"]), arch=tuple(raw.get("arch", ())),
                          summary=raw.get("summary", ""), evidence=raw.get("evidence", {}),
                          at=raw.get("at", "heuristic"), about=tuple(raw.get("about", ())),
                          source=f"{path}:{line}"))
    if problems:
        where, problem = problems[0]
        raise RulesetError(f"{path}:{_line_of(node, where)}: {problem}")
    return rules


def _rulesets_root() -> Path:
    """The built-in rulesets: the installed ``fusionlint.rulesets`` package (the repository's
    top-level ``rulesets/`` folder), or that folder itself when running from a checkout."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("fusionlint.rulesets")
    except (ModuleNotFoundError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
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
