"""Read cuBLASLt's API log (cuBLASLt 12.x/13.x, ``CUBLASLT_LOG_LEVEL`` 1-5).

Each line is ``[time][cublasLt][pid][Level][function] text``. For ``Api`` and ``Trace`` lines the
text is ``key=value`` pairs, a value being a token (``0X55C4C04195A0``, ``R_16BF``, ``64``) or a
bracketed group of pairs (``Adesc=[type=R_16BF rows=64 cols=128 ld=64]``), parsed into nested
dicts; ``Info``/``Error`` lines keep their text (``heuristicResults=[66]`` is parsed too).

Nothing here raises on bad input: a line that is not in this format, or whose brackets do not
balance, is skipped and counted (``ParsedLog.skipped``). Standard library only.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

LINE = re.compile(r"^\[(?P<time>[^\]]*)\]\[(?P<lib>[A-Za-z]+)\]\[(?P<pid>\d+)\]\[(?P<level>[A-Za-z]+)\]"
                  r"\[(?P<function>[A-Za-z_][A-Za-z0-9_]*)\] ?(?P<text>.*)$")
LEVELS = ("Error", "Trace", "Hints", "Info", "Api", "Warning")
VERSION = re.compile(r"cuBLASLt v(\d+)\.(\d+)")


@dataclass(frozen=True)
class Record:
    path: str  # the log file as named by the user ("-" for stdin)
    line: int  # 1-based line number
    pid: int
    level: str  # Api | Trace | Info | Error | Hints | Warning
    function: str  # e.g. cublasLtMatmul
    text: str  # everything after the function tag
    fields: dict = field(default_factory=dict)  # parsed key=value pairs (Api/Trace/Info lines)


@dataclass
class ParsedLog:
    path: str
    records: list[Record] = field(default_factory=list)
    lines: int = 0  # lines read (blank ones included)
    skipped: int = 0  # lines that are not cuBLASLt log lines, or whose fields do not parse
    skipped_examples: list[tuple[int, str]] = field(default_factory=list)  # (line, why), the first few
    version: int | None = None  # cuBLASLt version as major*10000 + minor*100 (from the log), if it says

    def skip(self, line: int, why: str) -> None:
        self.skipped += 1
        if len(self.skipped_examples) < 5:
            self.skipped_examples.append((line, why))


class FieldError(ValueError):
    """The text of a line is not key=value pairs with balanced brackets."""


def parse_fields(text: str) -> dict:
    """``A=0X1 Adesc=[type=R_16BF rows=64]`` -> ``{"A": "0X1", "Adesc": {"type": "R_16BF", "rows": "64"}}``.

    A bracketed group without ``=`` (``heuristicResults=[66 55]``) becomes a list of its tokens.
    Words that are not pairs (free text) are collected under ``""``. Raises ``FieldError`` on
    unbalanced brackets."""
    value, _ = _group(text, 0, top=True)
    return value if isinstance(value, dict) else {"": value}


def _group(text: str, pos: int, top: bool) -> tuple[dict | list, int]:
    pairs: dict = {}
    words: list[str] = []
    n = len(text)
    while True:
        while pos < n and text[pos] in " \t":
            pos += 1
        if pos >= n:
            if not top:
                raise FieldError("unclosed '['")
            break
        if text[pos] == "]":
            if top:
                raise FieldError("unbalanced ']'")
            pos += 1
            break
        start = pos
        while pos < n and text[pos] not in " \t=[]":
            pos += 1
        word = text[start:pos]
        if pos < n and text[pos] == "=":
            pos += 1
            if pos < n and text[pos] == "[":
                value, pos = _group(text, pos + 1, top=False)
            else:
                vstart = pos
                while pos < n and text[pos] not in " \t[]":
                    pos += 1
                value = text[vstart:pos]
            pairs[word] = value
        elif pos < n and text[pos] == "[":  # a bracket not after '=': free text in brackets
            inner, pos = _group(text, pos + 1, top=False)
            words.append(word)
            if isinstance(inner, list):
                words += inner
        else:
            if word:
                words.append(word)
    if not top and not pairs:
        return words, pos
    if words:
        pairs[""] = words
    return pairs, pos


def parse_lines(lines: Iterable[str], path: str) -> ParsedLog:
    log = ParsedLog(path)
    for number, raw in enumerate(lines, start=1):
        log.lines = number
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        m = LINE.match(line)
        if m is None:
            log.skip(number, "not a cuBLASLt log line")
            continue
        if m["lib"] != "cublasLt":
            log.skip(number, f"not from cuBLASLt ([{m['lib']}])")
            continue
        level, function, text = m["level"], m["function"], m["text"]
        fields: dict = {}
        if level in ("Api", "Trace") or (level == "Info" and "=" in text and "heuristicResults" in text):
            try:
                fields = parse_fields(text)
            except FieldError as exc:
                log.skip(number, f"{function}: {exc}")
                continue
        if level == "Info" and log.version is None:
            v = VERSION.search(text)
            if v:
                log.version = int(v[1]) * 10000 + int(v[2]) * 100
        if level == "Api" and function == "cublasLtGetVersion" and log.version is None:
            try:
                log.version = int(fields.get("version", ""))
            except ValueError:
                pass
        log.records.append(Record(path, number, int(m["pid"]), level, function, text, fields))
    return log


def read_log(path: str, stdin=None) -> ParsedLog:
    """Parse a log file (``-``: ``stdin``). Raises ``OSError`` when it cannot be read."""
    if path == "-":
        import sys

        return parse_lines(stdin if stdin is not None else sys.stdin, "-")
    with open(path, encoding="utf-8", errors="replace") as f:
        return parse_lines(f, path)
