"""``path:line:col: severity: message [FLnnn]`` — the shape of gcc/clang diagnostics, which VS
Code's ``$gcc`` problem matcher, fusionlint's own matcher (editors/) and GitHub's matchers
parse. Fixes and related locations follow on ``note:`` lines, which matchers skip.

``show_source`` adds the source line and a caret under the column (clang's layout); ``color``
adds ANSI colours (the caller decides: only on a terminal, never with NO_COLOR).
"""
from __future__ import annotations

from collections import Counter

from fusionlint.findings import Finding
from fusionlint.sourcetext import line_text

_COLORS = {"error": "1;31", "warning": "1;35", "info": "1;36", "note": "1;36", "loc": "1", "caret": "1;32"}


def _paint(text: str, what: str, color: bool) -> str:
    return f"\033[{_COLORS[what]}m{text}\033[0m" if color else text


def source_snippet(path: str, line: int, column: int, color: bool = False) -> list[str]:
    """``   19 | code`` and ``      |   ^`` under the (1-based, byte) column; [] when unreadable."""
    text = line_text(path, line)
    if not text.strip():
        return []
    prefix = text.encode("utf-8")[:max(column - 1, 0)].decode("utf-8", errors="ignore")
    expanded = text.expandtabs(8)
    pad = len(prefix.expandtabs(8))
    gutter = f"{line:>5} | "
    return [f"{gutter}{expanded}", f"{' ' * (len(gutter) - 2)}| {' ' * pad}{_paint('^', 'caret', color)}"]


def format_findings(findings: list[Finding], show_fix: bool = True, show_source: bool = False,
                    color: bool = False) -> str:
    lines = []
    for f in findings:
        loc = _paint(f"{f.path}:{f.line}:{f.column}:", "loc", color)
        lines.append(f"{loc} {_paint(f.severity + ':', f.severity, color)} {f.message} [{f.code}]")
        if show_source:
            lines += source_snippet(f.path, f.line, f.column, color)
        if show_fix and f.fix:
            lines.append(f"{_paint(f'{f.path}:{f.line}:{f.column}:', 'loc', color)} {_paint('note:', 'note', color)} "
                         f"fix: {f.fix}")
        for r in f.related:
            lines.append(f"{_paint(f'{r.path}:{r.line}:{r.column}:', 'loc', color)} {_paint('note:', 'note', color)} "
                         f"{r.message}")
    return "\n".join(lines) + ("\n" if lines else "")


def format_statistics(findings: list[Finding]) -> str:
    """One line per code with findings, most frequent first: ``count  code  name``."""
    counts = Counter(f.code for f in findings)
    names = {f.code: f.name for f in findings}
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return "".join(f"{n:>5}  {code}  {names[code]}\n" for code, n in rows)


def format_undecided(undecided: list) -> str:
    """``-v``: one line per check that unknown facts left undecided, with the reasons."""
    lines = []
    for u in sorted(set(undecided), key=lambda u: (u.path, u.line, u.column, u.code)):
        lines.append(f"{u.path}:{u.line}:{u.column}: undecided: {u.code} ({u.name}): {'; '.join(u.reasons)}")
    return "".join(f"fusionlint: {line}\n" for line in lines)


def format_summary(files: int, findings: int, undecided: int, verbose: bool) -> str:
    """``fusionlint: 12 files checked, 3 findings, 2 checks undecided (unknown values; -v lists them)``."""
    def n(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    text = f"fusionlint: {n(files, 'file')} checked, {n(findings, 'finding')}"
    if undecided:
        text += f", {n(undecided, 'check')} undecided (unknown values; {'listed above' if verbose else '-v lists them'})"
    return text + "\n"
