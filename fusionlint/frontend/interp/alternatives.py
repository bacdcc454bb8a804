"""Runtime choices over a finite set: a configuration whose values differ by an ``if``
on a flag, a ``?:`` or a ``switch`` over an enum is checked once per alternative.

The interpreter merges the paths of a condition it cannot decide, and a value that differs
between them becomes ``Unknown`` naming the choice (``Unknown.choices``). Here each root
function with such a configuration is run again once per combination of those choices
(``Interpreter.decisions`` forces them), and every configuration of a run records the
conditions it was reached under (``Configuration.when``). A configuration that comes out the
same in every run is one configuration without a condition; the others say when they hold. At
most ``MAX_CHOICES`` choices and ``MAX_RUNS`` runs per root function (``MAX_FILE_RUNS`` per
file): past that the remaining choices stay merged (their values unknown, counted as
undecided). A value that is runtime data (a size from a tensor) is not a choice and stays
unknown.
"""
from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterable

from fusionlint.frontend.interp.choices import Choice
from fusionlint.frontend.interp.interpreter import Interpreter
from fusionlint.model.call_context import IndexContext
from fusionlint.model.cublaslt_facts import Configuration
from fusionlint.model.values import Unknown, Value

MAX_CHOICES = 5
MAX_RUNS = 32
MAX_FILE_RUNS = 256
# interpreter steps the alternative runs of one file may take (shared out among its root functions
# by what one run of each costs): a bound on time that is the same on every machine (about 25 s
# here for TransformerEngine's cublaslt_gemm.cu, four entry points into one large GEMM function)
MAX_FILE_STEPS = 500_000
ID_SPAN = 100_000  # object ids of one root function's runs: ID_SPAN * (its index + 1) + 1 on


def _values(cfg: Configuration) -> Iterable[Value]:
    for fields in cfg.effective.values():
        for f in fields.values():
            yield f.value
    yield from cfg.operands.values()


def choices_of(cfg: Configuration) -> list[str]:
    """The runtime choices the configuration's unknown values differ by."""
    keys: list[str] = []
    for v in _values(cfg):
        if isinstance(v, Unknown):
            keys += [k for k in v.choices if k not in keys]
    return keys


def _signature(cfg: Configuration) -> str:
    d = cfg.to_dict()
    d.pop("when", None)
    return json.dumps(d, sort_keys=True, default=str)


def expand(configs: list[Configuration], interp: Interpreter, new_handler: Callable[[int], object],
           contexts: IndexContext | None = None) -> list[Configuration]:
    """``configs`` (from ``interp``'s run) with each configuration that depends on runtime choices
    replaced by its alternatives. Each root function is expanded on its own, over the choices its
    own configurations differ by (at most ``MAX_CHOICES`` of them, ``MAX_RUNS`` runs), so that a
    file of many entry points spends its runs on each of them rather than on the product of all;
    ``MAX_FILE_RUNS`` bounds the runs of the whole file. ``new_handler(first_id)``: a handler for
    one run, numbering its objects from ``first_id`` (the same in every run of one root function,
    so that an object keeps its id across alternatives; apart from the other root functions')."""
    by_root: dict[str, list[Configuration]] = {}
    for cfg in configs:
        by_root.setdefault(cfg.root, []).append(cfg)
    out: list[Configuration] = []
    left, steps_left = MAX_FILE_RUNS, MAX_FILE_STEPS
    wanted = {root: _keys(group, interp) for root, group in by_root.items()}
    roots_left = sum(1 for keys in wanted.values() if keys)
    for j, (root, group) in enumerate(by_root.items()):
        keys = wanted[root]
        if keys:  # this root's share of the steps left, at what one run of it cost
            share = steps_left // max(roots_left, 1)
            roots_left -= 1
            keys = _keys(group, interp, max(1, share // max(interp.root_steps.get(root, 0), 1)))
        if not keys or _runs(interp, keys) > left:
            out += group
            continue
        left -= _runs(interp, keys)
        steps_left -= _runs(interp, keys) * interp.root_steps.get(root, 0)
        out += _alternatives(root, keys, interp, lambda j=j: new_handler(ID_SPAN * (j + 1) + 1), contexts)
    return sorted(out, key=lambda c: (c.site.line, c.site.column, c.kind))


def _keys(group: list[Configuration], interp: Interpreter, max_runs: int = MAX_RUNS) -> list[str]:
    """The choices (at most ``MAX_CHOICES``, in source order, their product at most ``max_runs``
    (``MAX_RUNS`` at most) arms) that the root function's configurations are expanded over; [] when
    there are none."""
    max_runs = min(max_runs, MAX_RUNS)
    keys: list[str] = []
    for cfg in group:
        keys += [k for k in choices_of(cfg) if k in interp.choices and k not in keys and not interp.choices[k].fixed]
    keys.sort(key=lambda k: (interp.choices[k].loc.line, interp.choices[k].loc.column))
    keys = keys[:MAX_CHOICES]
    while len(keys) > 1 and _runs(interp, keys) > max_runs:
        keys.pop()
    return keys if keys and _runs(interp, keys) <= max_runs else []


def _alternatives(root: str, keys: list[str], interp: Interpreter, new_handler: Callable[[], object],
                  contexts: IndexContext | None) -> list[Configuration]:
    """The root function run once per combination of ``keys``' arms: its configurations, each
    saying under which conditions it holds (none when it comes out the same in every run)."""
    combos = [c for c in itertools.product(*[range(len(interp.choices[k].arms)) for k in keys])
              if _possible(c, [interp.choices[k] for k in keys])]
    groups: dict[tuple[str, tuple[str, ...]], tuple[Configuration, set[int]]] = {}
    every: dict[str, set[int]] = {}
    for i, combo in enumerate(combos):
        handler = new_handler()
        run = Interpreter(interp.tu, interp.main_path, handler)  # type: ignore[arg-type]
        run.decisions = dict(zip(keys, combo))
        run.forced = {k: interp.choices[k] for k in keys}
        run.run(contexts, only={root})
        for cfg in handler.finish():  # type: ignore[attr-defined]
            sig = _signature(cfg)
            every.setdefault(sig, set()).add(i)
            first = groups.setdefault((sig, cfg.when), (cfg, set()))
            first[1].add(i)
    n = len(combos)
    out: list[Configuration] = []
    done: set[str] = set()
    for (sig, _), (cfg, runs) in groups.items():
        if len(every[sig]) == n:  # the same in every alternative: no condition
            if sig in done:
                continue
            done.add(sig)
            cfg.when, cfg.when_arms, cfg.alternatives = (), (), 1
            cfg.alternative_runs = frozenset((root, r) for r in range(n))
        else:
            cfg.alternatives = n
            cfg.alternative_runs = frozenset((root, r) for r in runs)
        out.append(cfg)
    return out


# a test of what a template parameter is: ``std::is_same<T, double>::value``, ``std::is_same_v<T, X>``
_TYPE_TEST = re.compile(r"^(?:std::)?is_same(?:_v)?<\s*(\w+)\s*,\s*(.+?)\s*>(?:::value)?$")


def _possible(combo: tuple[int, ...], choices: list[Choice]) -> bool:
    """Whether a combination of arms can happen: a type is one type, so two tests of the same
    template parameter against two different types are not both true (``std::is_same<T, half>``
    and ``std::is_same<T, double>``)."""
    true_of: dict[str, str] = {}
    for arm, choice in zip(combo, choices):
        m = _TYPE_TEST.match(choice.text)
        if m is None or choice.arms[arm] != "true":
            continue
        param, type_ = m.group(1), re.sub(r"\s+", "", m.group(2))
        if true_of.setdefault(param, type_) != type_:
            return False
    return True


def _runs(interp: Interpreter, keys: list[str]) -> int:
    total = 1
    for k in keys:
        total *= len(interp.choices[k].arms)
    return total
