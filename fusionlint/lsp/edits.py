"""Text positions and edits for the language server, without the protocol: where a finding is in a
buffer, the quick fixes for it, and the suppression comments.

Findings carry libclang's positions: 1-based lines and 1-based *byte* columns of the buffer's
UTF-8 text. Here a position in a buffer is ``(line, index)``: the 0-based line and the index of a
character in that line's ``str``; the server turns the index into the client's units (UTF-16 by
default) at the protocol's edge. Lines end at ``\\r\\n``, ``\\r`` or ``\\n``, as in the LSP and in clang.

Quick fixes are made only where the edit is certainly right:

- FL100 (``set-attribute-size-mismatch``): the ``sizeInBytes`` argument of a ``SetAttribute`` call the
  user wrote directly (not through a wrapper) becomes ``sizeof(x)`` when the buffer ``&x`` already
  has the attribute's size, or ``sizeof(T)`` of the attribute's integer type ``T`` when the buffer
  is a wider integer holding a value known to fit ``T`` (cuBLASLt copies ``sizeInBytes`` bytes from
  the buffer, so it then reads the value's low bytes: the value itself on the little-endian hosts
  CUDA runs on). The facts come from the parse (``size_fixes``, in the check's child process).
- FL001 (``unused-suppression``): a ``// fusionlint: ignore[...]`` or ``ignore-next-line`` comment that
  suppresses nothing is removed.
- Every finding: ``// fusionlint: ignore[FLnnn]`` at the end of its line, or
  ``// fusionlint: ignore-next-line[FLnnn]`` above it (``fusionlint/decide/suppress.py``'s syntax); an
  existing ``ignore[...]`` list on the line gets the code added.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")
_IDENT = re.compile(r"[A-Za-z_]\w*")


def split_lines(text: str) -> list[str]:
    """The buffer's lines without their line ends (LSP and clang both end lines at CR LF, CR, LF)."""
    return _LINE_END.split(text)


def line_starts(text: str) -> list[int]:
    """The index in ``text`` where each line starts."""
    return [0] + [m.end() for m in _LINE_END.finditer(text)]


def byte_column_to_index(line: str, column: int) -> int:
    """The character index in ``line`` of libclang's 1-based byte ``column`` (clamped to the line)."""
    if column <= 1:
        return 0
    prefix = line.encode("utf-8", "surrogatepass")[:column - 1]
    return min(len(line), len(prefix.decode("utf-8", "ignore")))


def index_to_byte_column(line: str, index: int) -> int:
    return len(line[:index].encode("utf-8", "surrogatepass")) + 1


@dataclass(frozen=True)
class Span:
    """``(line, index)`` to ``(line, index)``, 0-based, end exclusive."""

    start: tuple[int, int]
    end: tuple[int, int]


@dataclass(frozen=True)
class Edit:
    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A quick fix for the finding of ``code`` at one of ``anchors`` (1-based line, byte column):
    the positions a finding about this call may be reported at (the call, its arguments)."""

    code: str
    anchors: tuple[tuple[int, int], ...]
    title: str
    edits: tuple[Edit, ...]


def position(lines: list[str], line: int, column: int) -> tuple[int, int]:
    """A finding's 1-based line and byte column as ``(line, index)`` in the buffer (clamped)."""
    n = min(max(line, 1), len(lines)) - 1
    return n, byte_column_to_index(lines[n], column)


def finding_span(lines: list[str], line: int, column: int) -> Span:
    """What a diagnostic underlines: a call written at the position (name to closing parenthesis,
    when it closes on the same line), else the expression there up to the end of its argument or
    statement on that line (``&transa`` of ``f(desc, &transa, 8)``), else one character."""
    n, i = position(lines, line, column)
    text = lines[n]
    m = _IDENT.match(text, i)
    if m is not None:
        j = m.end()
        while j < len(text) and text[j] in " \t":
            j += 1
        if j < len(text) and text[j] == "(":
            close = _matching_paren(text, j)
            if close is not None:
                return Span((n, i), (n, close + 1))
    end = _expression_end(text, i)
    return Span((n, i), (n, end if end > i else min(i + 1, len(text))))


def _expression_end(text: str, i: int) -> int:
    """Where the expression starting at ``text[i]`` ends on its line: before a ``,``, ``)``, ``]``,
    ``}`` or ``;`` outside brackets it opened, or a comment (blanks before it excluded)."""
    depth = 0
    j = i
    while j < len(text):
        c = text[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif c in ",;" and depth == 0:
            break
        elif c in "\"'":
            j = _skip_literal(text, j)
            continue
        elif text.startswith("//", j) or text.startswith("/*", j):
            break
        j += 1
    while j > i and text[j - 1].isspace():
        j -= 1
    return j


def _skip_literal(text: str, i: int) -> int:
    """The index after the string or character literal starting at ``text[i]``."""
    quote = text[i]
    i += 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == quote or c == "\n":
            return i + 1
        i += 1
    return i


def _matching_paren(text: str, open_index: int) -> int | None:
    split = split_arguments(text, open_index)
    return None if split is None else split[1]


def split_arguments(text: str, open_index: int) -> tuple[list[tuple[int, int]], int] | None:
    """The arguments of the call whose ``(`` is at ``open_index``: ``[(start, end)]`` of each, without
    surrounding blanks, and the index of the closing ``)``; None when it does not close. Strings,
    character literals and comments are skipped; a raw string literal or a ``<...>`` with a comma
    at the top level splits wrongly, so a caller checks what it got."""
    depth = 0
    i = open_index
    args: list[tuple[int, int]] = []
    start = open_index + 1
    n = len(text)
    while i < n:
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(_trim(text, start, i))
                return ([] if args == [(i, i)] else args), i
        elif c == "," and depth == 1:
            args.append(_trim(text, start, i))
            start = i + 1
        elif c in "\"'":
            i = _skip_literal(text, i)
            continue
        elif text.startswith("//", i):
            nl = text.find("\n", i)
            if nl < 0:
                return None
            i = nl
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close < 0:
                return None
            i = close + 2
            continue
        i += 1
    return None


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _to_span(starts: list[int], start: int, end: int) -> Span:
    def at(i: int) -> tuple[int, int]:
        lo, hi = 0, len(starts) - 1
        while lo < hi:  # the last line starting at or before i
            mid = (lo + hi + 1) // 2
            if starts[mid] <= i:
                lo = mid
            else:
                hi = mid - 1
        return lo, i - starts[lo]

    return Span(at(start), at(end))


# -- FL100: the size argument ------------------------------------------------------------------
_INT_TYPE = re.compile(r"(u?)int(8|16|32|64)_t")
_INTEGER_SPELLING = re.compile(
    r"(?:const\s+)?(?:(?:unsigned|signed|short|long|int|char|size_t|ptrdiff_t|u?int(?:8|16|32|64)_t|"
    r"std::u?int(?:8|16|32|64)_t|std::size_t|cublas\w*_t|cuda\w*_t)\s*)+")
_FIXED_SIZES = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4, "int": 4,
                "unsigned": 4, "unsigned int": 4, "float": 4, "int64_t": 8, "uint64_t": 8, "size_t": 8,
                "double": 8, "long long": 8, "unsigned long long": 8}


def _fits(value: int, ctype: str) -> bool:
    m = _INT_TYPE.fullmatch(ctype.strip())
    if m is None:
        return False
    bits = int(m.group(2))
    lo, hi = (0, 2 ** bits - 1) if m.group(1) else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    return lo <= value <= hi


def _buffer_size(s) -> int | None:
    size = getattr(s, "buffer_size", None)
    if isinstance(size, int):
        return size
    spelling = " ".join((s.buffer_type or "").replace("const ", " ").split())
    if spelling.endswith("*"):
        return 8  # LP64
    return _FIXED_SIZES.get(spelling.removeprefix("std::"))


def _squash(s: str) -> str:
    return "".join(s.split())


def size_fixes(facts, text: str, model=None) -> list[Fix]:
    """The FL100 quick fixes of a file's facts (``FileFacts`` of the parse of ``text``); ``model``:
    the API model (default: the shipped one)."""
    from fusionlint.model.cublaslt_api import load_model
    from fusionlint.model.values import Known

    model = model or load_model()
    lines = split_lines(text)
    starts = line_starts(text)
    out: list[Fix] = []
    for s in facts.attribute_sets:
        spec = model.attribute(s.attribute) if s.attribute else None
        if spec is None or not isinstance(spec.size, int) or not spec.type or spec.array or spec.readonly:
            continue
        if not isinstance(s.size, Known) or not isinstance(s.size.value, int) or s.size.value == spec.size:
            continue
        if s.site != s.loc or s.site.path != facts.path or s.conditional:
            continue  # through a wrapper (the size is its parameter), in another file, or only on some paths
        args = _call_arguments(text, lines, starts, s.site.line, s.site.column, s.function)
        if args is None or len(args) != 4:
            continue
        size_start, size_end = args[3]
        size_at = getattr(s, "size_at", None)
        if size_at is not None:
            n, i = position(lines, size_at.line, size_at.column)
            if starts[n] + i != size_start:
                continue
        elif not s.size.via or _squash(s.size.via) != _squash(text[size_start:size_end]):
            continue
        buffer = _squash(text[args[2][0]:args[2][1]])
        if _squash(s.buffer or "") not in ("", buffer):
            continue
        buffer_size = _buffer_size(s)
        attr_type = spec.type.strip()
        if buffer_size == spec.size:
            m = re.fullmatch(r"&([A-Za-z_]\w*(?:(?:\.|->)[A-Za-z_]\w*)*)", buffer)
            new = f"sizeof({m.group(1)})" if m else f"sizeof({attr_type})"
            title = f"Pass {new} as sizeInBytes ({spec.size} bytes, the size of {attr_type})"
        elif (isinstance(buffer_size, int) and buffer_size > spec.size and isinstance(s.value, Known)
              and isinstance(s.value.value, int) and not isinstance(s.value.value, bool)
              and _fits(s.value.value, attr_type)
              and _INTEGER_SPELLING.fullmatch((s.buffer_type or "").strip())):
            new = f"sizeof({attr_type})"
            shown = s.value_name or s.value.value
            title = (f"Pass {new} as sizeInBytes: cuBLASLt then reads the low {spec.size} bytes of "
                     f"{buffer.lstrip('&') or 'the buffer'} ({shown}, little-endian)")
        else:
            continue
        anchors = {(s.site.line, s.site.column)}
        for at in (getattr(s, "attribute_at", None), getattr(s, "buffer_at", None), size_at):
            if at is not None:
                anchors.add((at.line, at.column))
        out.append(Fix("FL100", tuple(sorted(anchors)), title,
                       (Edit(_to_span(starts, size_start, size_end), new),)))
    return out


def _call_arguments(text: str, lines: list[str], starts: list[int], line: int, column: int,
                    function: str) -> list[tuple[int, int]] | None:
    """The arguments of the call of ``function`` written at (or, inside a macro such as
    ``CHECK(...)``, just after) the 1-based line and byte column, in the same statement."""
    n, i = position(lines, line, column)
    begin = starts[n] + i
    m = re.compile(rf"\b{re.escape(function)}\s*\(").search(text, begin, min(len(text), begin + 4000))
    if m is None or ";" in text[begin:m.start()]:
        return None
    split = split_arguments(text, m.end() - 1)
    return None if split is None else split[0]


# -- suppressions ------------------------------------------------------------------------------
_IGNORE_LIST = re.compile(r"(?://|/\*)\s*fusionlint:\s*ignore\[(?P<codes>[^\]]*)\]", re.IGNORECASE)
_NEXT_LINE_LIST = re.compile(r"^\s*//\s*fusionlint:\s*ignore-next-line\[(?P<codes>[^\]]*)\]\s*$", re.IGNORECASE)


def _eol(text: str, starts: list[int], n: int, lines: list[str]) -> str:
    end = starts[n] + len(lines[n])
    m = _LINE_END.match(text, end)
    return m.group(0) if m else "\n"


def suppression_fixes(text: str, code: str, line: int) -> list[tuple[str, Edit]]:
    """(title, edit) of each way to suppress ``code`` on 1-based ``line``: a trailing
    ``// fusionlint: ignore[CODE]`` (or the code added to the line's list), and an
    ``ignore-next-line`` comment above. None where a comment would break a macro continuation."""
    lines = split_lines(text)
    if not 1 <= line <= len(lines):
        return []
    n = line - 1
    current = lines[n]
    out: list[tuple[str, Edit]] = []
    existing = _IGNORE_LIST.search(current)
    if existing is not None:
        codes = [c.strip() for c in existing["codes"].split(",") if c.strip()]
        at = existing.end("codes")
        new = (", " if codes else "") + code
        out.append((f"Suppress {code} on this line (add it to '{existing.group(0).lstrip('/* ')}')",
                    Edit(Span((n, at), (n, at)), new)))
    elif not current.rstrip().endswith("\\"):
        end = len(current.rstrip())
        out.append((f"Suppress {code} on this line (// fusionlint: ignore[{code}])",
                    Edit(Span((n, end), (n, len(current))), f"  // fusionlint: ignore[{code}]")))
    above = lines[n - 1] if n > 0 else ""
    m = _NEXT_LINE_LIST.match(above) if n > 0 else None
    if m is not None:
        at = m.end("codes")
        codes = [c.strip() for c in m["codes"].split(",") if c.strip()]
        out.append((f"Suppress {code} with the comment above (add it to its ignore-next-line list)",
                    Edit(Span((n - 1, at), (n - 1, at)), (", " if codes else "") + code)))
    elif not above.rstrip().endswith("\\"):
        indent = current[:len(current) - len(current.lstrip())]
        eol = _eol(text, line_starts(text), n, lines)
        out.append((f"Suppress {code} with a comment above (// fusionlint: ignore-next-line[{code}])",
                    Edit(Span((n, 0), (n, 0)), f"{indent}// fusionlint: ignore-next-line[{code}]{eol}")))
    return out


_UNUSED_WHOLE = re.compile(r"unused suppression: '(?P<kind>ignore|ignore-next-line)(?:\[[^\]]*\])?' matches no finding")


def unused_suppression_fix(text: str, line: int, column: int, message: str) -> tuple[str, Edit] | None:
    """Removing the comment of an FL001 finding that suppresses nothing at all (not one that names
    some unused codes among used ones, nor an ignore-begin/end)."""
    if _UNUSED_WHOLE.match(message) is None:
        return None
    lines = split_lines(text)
    if not 1 <= line <= len(lines):
        return None
    n = line - 1
    current = lines[n]
    i = byte_column_to_index(current, column)
    if current.startswith("/*", i):
        close = current.find("*/", i + 2)
        if close < 0:
            return None
        end = close + 2
    elif current.startswith("//", i):
        end = len(current)
        if current.rstrip().endswith("\\"):
            return None
    else:
        return None
    start = len(current[:i].rstrip())
    rest = current[:start] + current[end:]
    title = "Remove the unused suppression comment"
    if not rest.strip():  # the comment is the whole line: remove the line
        starts = line_starts(text)
        if n + 1 < len(starts):
            return title, Edit(Span((n, 0), (n + 1, 0)), "")
        return title, Edit(Span((n, 0), (n, len(current))), "")
    return title, Edit(Span((n, start), (n, end)), "")


def apply_edits(text: str, edits: list[Edit]) -> str:
    """``text`` with non-overlapping ``edits`` applied (what a client does with a workspace edit)."""
    starts = line_starts(text)

    def offset(p: tuple[int, int]) -> int:
        return starts[p[0]] + p[1]

    for e in sorted(edits, key=lambda e: offset(e.span.start), reverse=True):
        text = text[:offset(e.span.start)] + e.new_text + text[offset(e.span.end):]
    return text
