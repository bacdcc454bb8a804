"""Arithmetic on known values as C++ does it: the binary operators and integer conversions."""
from __future__ import annotations

from typing import Callable

import clang.cindex as ci


def wrap_int(value: int, ctype: ci.Type) -> int:
    """Apply a conversion to an integer type of known size (e.g. ``(int8_t)300``)."""
    canon = ctype.get_canonical()
    if canon.kind == ci.TypeKind.BOOL:
        return int(bool(value))
    size = canon.get_size()
    if size <= 0 or canon.kind not in _INT_KINDS:
        return value
    bits = size * 8
    value &= (1 << bits) - 1
    if canon.kind in _SIGNED_KINDS and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


_SIGNED_KINDS = {ci.TypeKind.CHAR_S, ci.TypeKind.SCHAR, ci.TypeKind.SHORT, ci.TypeKind.INT, ci.TypeKind.LONG,
                 ci.TypeKind.LONGLONG, ci.TypeKind.INT128, ci.TypeKind.WCHAR}
_INT_KINDS = _SIGNED_KINDS | {ci.TypeKind.CHAR_U, ci.TypeKind.UCHAR, ci.TypeKind.USHORT, ci.TypeKind.UINT,
                              ci.TypeKind.ULONG, ci.TypeKind.ULONGLONG, ci.TypeKind.UINT128, ci.TypeKind.ENUM}


BINOPS: dict[str, Callable[[object, object], object]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: (int(a / b) if isinstance(a, int) and isinstance(b, int) else a / b),
    "%": lambda a, b: a - b * int(a / b), "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "<": lambda a, b: int(a < b), ">": lambda a, b: int(a > b), "<=": lambda a, b: int(a <= b),
    ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
}
