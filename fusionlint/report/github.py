"""GitHub Actions workflow commands: ``::error file=…,line=…,col=…,title=FLnnn::message``.

Escaping as in @actions/core (``escapeData``/``escapeProperty``): in the message ``%`` -> ``%25``,
CR -> ``%0D``, LF -> ``%0A``; in property values also ``:`` -> ``%3A`` and ``,`` -> ``%2C``.
The message carries the fix and related locations on further (escaped) lines. Paths are
relative to the repository root, which is what GitHub resolves annotation files against.
Notes that are not findings (headers found nowhere) follow as ``::notice`` commands.
"""
from __future__ import annotations

from pathlib import Path

from fusionlint.findings import Finding
from fusionlint.paths import relative_posix

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_note(note, root: Path) -> str:
    props = "title=fusionlint"
    if note.path is not None:
        where = f"file={escape_property(relative_posix(note.path, root) or note.path)}"
        if note.line:
            where += f",line={note.line}" + (f",col={note.column}" if note.column else "")
        props = f"{where},{props}"
    return f"::notice {props}::{escape_data(note.message)}\n"


def format_findings(findings: list[Finding], root: Path, notes: list = ()) -> str:
    out = []
    for f in findings:
        path = relative_posix(f.path, root) or f.path
        text = f.message
        if f.fix:
            text += f"\nfix: {f.fix}"
        for r in f.related:
            text += f"\nnote: {relative_posix(r.path, root) or r.path}:{r.line}:{r.column}: {r.message}"
        props = f"file={escape_property(path)},line={f.line},col={f.column},title={escape_property(f.code)}"
        out.append(f"::{LEVELS.get(f.severity, 'error')} {props}::{escape_data(text)}\n")
    out += [format_note(n, root) for n in notes]
    return "".join(out)
