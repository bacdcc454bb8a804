"""A baseline of accepted (legacy) findings: ``--baseline FILE`` hides the findings recorded in
it, ``--update-baseline`` records the current ones.

A finding is keyed on its rule code, its path relative to the project root (the git work tree
holding the baseline file) and a hash of its source line with whitespace collapsed — not on
its line number — so recorded findings stay hidden when code above them moves, and a new
finding (another line, another rule) is reported. Identical keys are counted.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from fusionlint import __version__
from fusionlint.errors import InputError
from fusionlint.findings import Finding
from fusionlint.paths import project_root, relative_posix
from fusionlint.sourcetext import line_hash, line_text, normalised

VERSION = 1
Key = tuple[str, str, str]


class BaselineError(InputError):
    """A baseline file that cannot be used; one line naming the file."""


def finding_key(f: Finding, root: Path) -> Key:
    path = relative_posix(f.path, root) or Path(f.path).resolve().as_posix()
    return f.code, path, line_hash(f.path, f.line)


def _root(baseline: Path) -> Path:
    return project_root(baseline.resolve().parent)


def load(path: Path) -> Counter[Key]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such baseline file (create it with --update-baseline)") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"{path}: malformed baseline: {str(exc).splitlines()[0]}") from None
    entries = data.get("findings") if isinstance(data, dict) and data.get("version") == VERSION else None
    if not isinstance(entries, list):
        raise BaselineError(f"{path}: malformed baseline: expected {{\"version\": {VERSION}, \"findings\": [...]}}")
    counts: Counter[Key] = Counter()
    for i, e in enumerate(entries):
        try:
            counts[(str(e["code"]), str(e["path"]), str(e["hash"]))] += int(e.get("count", 1))
        except (TypeError, KeyError, ValueError):
            raise BaselineError(f"{path}: malformed baseline: findings[{i}] needs code, path and hash") from None
    return counts


def filter_new(findings: Iterable[Finding], path: Path) -> list[Finding]:
    """The findings not recorded in the baseline at ``path``."""
    remaining = load(path)
    root = _root(path)
    new = []
    for f in findings:
        k = finding_key(f, root)
        if remaining[k] > 0:
            remaining[k] -= 1
        else:
            new.append(f)
    return new


def write(findings: Iterable[Finding], path: Path) -> int:
    """Record ``findings`` in ``path``; returns how many."""
    root = _root(path)
    counts: Counter[Key] = Counter()
    source: dict[Key, str] = {}
    for f in findings:
        k = finding_key(f, root)
        counts[k] += 1
        source.setdefault(k, normalised(line_text(f.path, f.line)))
    entries = [{"code": c, "path": p, "hash": h, "count": n, "source": source[(c, p, h)]}
               for (c, p, h), n in sorted(counts.items())]
    data = {"version": VERSION, "tool": f"fusionlint {__version__}", "findings": entries}
    try:
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write baseline: {exc.strerror or exc}") from None
    return sum(counts.values())
