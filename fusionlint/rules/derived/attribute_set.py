"""Derived quantities of the ``attribute_set`` scope: one ``cublasLt*SetAttribute`` call (FL100)."""
from __future__ import annotations

from fusionlint.rules.derived.registry import View, blame, derived


@derived("size_matches_attribute", "attribute_set")
def size_matches_attribute(view: View) -> bool | None:
    """Does the ``sizeInBytes`` argument equal the byte size of the attribute's type?"""
    size, expected = view.get("size"), view.get("attribute_size")
    if not isinstance(size, int) or not isinstance(expected, int):
        return None
    return size == expected


@blame("size_matches_attribute")
def _size_blame(view: View) -> list[str]:
    """The buffer when its type is what is wrong (the size is the buffer's), else the size."""
    size, buffer_size = view.get("size"), view.get("buffer_size")
    return ["buffer", "size"] if isinstance(buffer_size, int) and buffer_size == size else ["size", "buffer"]


def _a(word: str) -> str:
    """``an int32_t``, ``a uint64_t``, ``a void *``."""
    return f"an {word}" if word[:1].lower() in "aeio" or word.startswith("un") else f"a {word}"


def _sizeof_of(buffer: str) -> str:
    """``sizeof(x)`` for a buffer argument spelt ``&x``; '' when it is not that simple."""
    import re

    m = re.fullmatch(r"&\s*([A-Za-z_][\w.\->\[\]]*)", buffer or "")
    return f"sizeof({m.group(1)})" if m else ""


@derived("size_fix", "attribute_set")
def size_fix(view: View) -> str | None:
    """The fix of a SetAttribute size mismatch, from what is wrong: the size, the buffer's type, or both."""
    size, expected, attr_type = view.get("size"), view.get("attribute_size"), view.get("attribute_type")
    buf, buf_type, buf_size = view.get("buffer") or "", view.get("buffer_type"), view.get("buffer_size")
    if not isinstance(size, int) or not isinstance(expected, int) or not isinstance(attr_type, str):
        return None
    is_pointer = attr_type.rstrip().endswith("*")
    target = "the pointer itself" if is_pointer else attr_type
    if not isinstance(buf_size, int) or not isinstance(buf_type, str):  # a void * or unknown buffer
        return (f"pass sizeInBytes = {expected} (sizeof({attr_type.strip()})) with a buffer that holds "
                f"{'a pointer' if is_pointer else _a(attr_type)}")
    if buf_size == expected:  # the buffer is right: only the size is wrong
        sizeof = _sizeof_of(buf)
        what = f"{buf} ({buf_type}) is the right buffer for {target}" if not is_pointer else \
            f"{buf} holds the pointer ({buf_type})"
        return (f"{what}: pass {sizeof + ' = ' if sizeof else ''}{expected} as sizeInBytes, not {size}"
                + (" (the size of the pointer, not of what it points to)" if is_pointer else ""))
    if buf_size == size:  # the size is the buffer's: the buffer's type is wrong
        return (f"the buffer {buf} is {buf_type} ({buf_size} bytes) but the attribute holds {attr_type} "
                f"({expected} bytes): {'pass the address of a pointer variable' if is_pointer else 'declare it as ' + attr_type}"
                f", and sizeof of it is then {expected}")
    return (f"both are wrong: the buffer {buf} is {buf_type} ({buf_size} bytes) and sizeInBytes is {size}; use "
            f"{_a(attr_type)} variable and pass sizeof of it ({expected})")
