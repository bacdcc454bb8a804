"""The registry of derived quantities (``REGISTRY``, ``SCOPES``, ``BLAME``), the decorators that
fill it, and the two readers of a fact view every quantity uses (``walk``, ``_get``)."""
from __future__ import annotations

from typing import Any, Callable

View = dict[str, Any]
REGISTRY: dict[str, Callable[[View], Any]] = {}
SCOPES: dict[str, str] = {}  # name -> the rule scope whose fact view the function reads
SCOPE_NAMES = ("attribute_set", "configuration", "cutlass")

# For quantities that read many facts of which few are at fault: the facts to blame when the
# quantity decides a rule (most telling first); the finding is reported at the write of the first
# one the user wrote. A quantity without one is blamed on every fact it reads.
BLAME: dict[str, Callable[[View], list[str]]] = {}


def derived(name: str, scope: str) -> Callable[[Callable[[View], Any]], Callable[[View], Any]]:
    """Register ``fn`` as the derived quantity ``name`` of rules of ``scope`` (the loader refuses it
    in a rule of another scope: it would read a view without its facts and never fire)."""
    assert scope in SCOPE_NAMES, scope

    def register(fn: Callable[[View], Any]) -> Callable[[View], Any]:
        REGISTRY[name] = fn
        SCOPES[name] = scope
        return fn

    return register


def blame(name: str) -> Callable[[Callable[[View], list[str]]], Callable[[View], list[str]]]:
    def register(fn: Callable[[View], list[str]]) -> Callable[[View], list[str]]:
        BLAME[name] = fn
        return fn

    return register


def walk(view: View, path: str, missing: Any = None, not_a_dict: Any = None) -> Any:
    """The value at a dotted fact path (``matmul_desc.EPILOGUE``): ``missing`` when a step is
    absent, ``not_a_dict`` when the path runs into a value. The engine's ``lookup`` uses it too."""
    cur: Any = view
    for step in path.split("."):
        if not isinstance(cur, dict):
            return not_a_dict
        if step not in cur:
            return missing
        cur = cur[step]
    return cur


def _get(view: View, path: str) -> Any:
    """A scalar fact (str, int, float) at ``path``; None for anything else."""
    cur = walk(view, path)
    return cur if isinstance(cur, (str, int, float)) and not isinstance(cur, bool) else None
