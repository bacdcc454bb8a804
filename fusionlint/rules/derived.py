"""Derived quantities that rules may name (``derived: NAME``): one small function each.

A function takes the fact view of the rule's scope and returns a value, or ``None`` when the
facts it needs are unknown (the rule then stays silent).
"""
from __future__ import annotations

from typing import Any, Callable

View = dict[str, Any]
REGISTRY: dict[str, Callable[[View], Any]] = {}

# The first component of every fact path a rule may name (see engine.views).
FACT_ROOTS = {
    # attribute_set scope
    "function", "object_kind", "attribute", "attribute_type", "attribute_size", "size", "value",
    "value_name", "buffer", "buffer_type", "conditional",
    # configuration scope
    "kind", "matmul_desc", "layout_A", "layout_B", "layout_C", "layout_D", "preference", "operands",
}


def derived(name: str) -> Callable[[Callable[[View], Any]], Callable[[View], Any]]:
    def register(fn: Callable[[View], Any]) -> Callable[[View], Any]:
        REGISTRY[name] = fn
        return fn

    return register


@derived("size_matches_attribute")
def size_matches_attribute(view: View) -> bool | None:
    """Does the ``sizeInBytes`` argument equal the byte size of the attribute's type?"""
    size, expected = view.get("size"), view.get("attribute_size")
    if not isinstance(size, int) or not isinstance(expected, int):
        return None
    return size == expected
