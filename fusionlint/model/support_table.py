"""The measured cuBLASLt support table: what one GPU's cuBLASLt accepted, swept over the discrete
configuration space (``fusionlint calibrate``, ``fusionlint/evidence/sweep``), and the questions
the rules ask of it.

A table holds, for the product of the type fields (A/B/C/D type, compute type, scale type), the
outcome of every combination, and for each combination that works, the outcome of every row of
each *stage* (a group of interacting fields: transposes and orders, epilogue and its pointers,
bias/aux data types, scales, pointer mode) with the other fields at the base configuration. A
configuration works when its type combination works and each stage accepts its projection.

Three-valued: a field may be a set of candidates (an unknown value: its whole domain); a
configuration is *unsupported* only when no completion is supported.

Standard library only: the sweep runs this on GPU machines to check the model it builds.
"""
from __future__ import annotations

import gzip
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path

from fusionlint.errors import InputError

FORMAT = "fusionlint-cublaslt-support/1"
ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # status index -> row character
OK = "ok"
NOT_SET_VALUE = "unset"  # an attribute that is not written (its default applies)
MAX_COMPLETIONS = 4096  # per stage; a larger unknown product is not enumerated (treated as satisfiable)

LABELS = {
    "a_type": "A type", "b_type": "B type", "c_type": "C type", "d_type": "D type",
    "compute_type": "compute type", "scale_type": "scale type", "transa": "TRANSA", "transb": "TRANSB",
    "order_a": "A order", "order_b": "B order", "order_c": "C order", "order_d": "D order", "batch": "batch count",
    "epilogue": "epilogue", "bias_pointer": "BIAS_POINTER", "bias_data_type": "BIAS_DATA_TYPE",
    "aux_pointer": "EPILOGUE_AUX_POINTER", "aux_ld": "EPILOGUE_AUX_LD", "aux_data_type": "EPILOGUE_AUX_DATA_TYPE",
    "a_scale_pointer": "A_SCALE_POINTER", "b_scale_pointer": "B_SCALE_POINTER", "c_scale_pointer": "C_SCALE_POINTER",
    "d_scale_pointer": "D_SCALE_POINTER", "amax_d_pointer": "AMAX_D_POINTER", "a_scale_mode": "A_SCALE_MODE",
    "b_scale_mode": "B_SCALE_MODE", "fast_accum": "FAST_ACCUM", "pointer_mode": "POINTER_MODE",
}


# outcomes the sweep records when it could not ask cuBLASLt (the driver's own words): undecided rows
DRIVER_DIED = "driver died"  # the driver did not survive the line (followed by its exit status)
UNREADABLE = "driver output unreadable"
BAD_LINE = "bad input line"
UNDECIDED = (DRIVER_DIED, UNREADABLE, BAD_LINE)


class TableError(InputError):
    """A support table that cannot be read (one line: exit status 2)."""


@dataclass(frozen=True)
class Stage:
    name: str
    fields: tuple[str, ...]
    complete_epilogue: bool
    rows: dict[int, str]  # type-combination index -> one status character per row of the product
    ties: dict[str, str] = field(default_factory=dict)  # field -> the stage field it was measured equal to


@dataclass
class Verdict:
    supported: bool | None  # None: the configuration lies outside the measured space
    failure: str = ""  # the failing call and status cuBLASLt gave (when unsupported)
    stage: str = ""  # "types" or the stage that rejects it


class SupportTable:
    def __init__(self, data: dict, origin: str = ""):
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise TableError(f"{origin or 'support table'}: not a cuBLASLt support table (format {FORMAT})")
        try:
            self.origin = origin
            self.meta: dict = data.get("machine", {})
            self.cublaslt_version: int = int(data.get("cublaslt_version", 0))
            self.fields: dict[str, list] = {k: list(v) for k, v in data["fields"].items()}
            self.base: dict = dict(data["base"])
            self.statuses: list[str] = list(data["statuses"])
            self.type_fields: tuple[str, ...] = tuple(data["types"]["fields"])
            self.type_rows: str = data["types"]["rows"]
            self.stages = [Stage(s["name"], tuple(s["fields"]), bool(s["complete_epilogue"]),
                                 {int(k): v for k, v in s["rows"].items()}, dict(s.get("ties", {})))
                           for s in data["stages"]]
            self.needs: dict[str, dict] = {k: dict(v) for k, v in data.get("needs", {}).items()}
            # scale-mode field -> the pointer set with it, except for the modes listed (stages
            # completing needs)
            needs_of_modes = data.get("scale_needs", {})
            self.scale_pointers: dict[str, str] = dict(needs_of_modes.get("pointers", {}))
            self.unscaled_modes: tuple = tuple(needs_of_modes.get("except", ()))
        except (KeyError, TypeError, ValueError) as exc:
            raise TableError(f"{origin or 'support table'}: malformed ({type(exc).__name__}: {exc})") from None
        self._index = {f: {v: i for i, v in enumerate(dom)} for f, dom in self.fields.items()}
        self._ok_char = ALPHABET[self.statuses.index(OK)]
        self._base_only: dict[tuple, str] = {}  # _fails_at_base_only, memoised
        # rows the sweep could not decide (the driver died, or its answer was unreadable) count as
        # possibly supported: FL127 never reports a failure it did not measure. (The 2 Dec 2026
        # H200 table's "driver died" rows are such: its driver did not flush each answer, so a
        # killed process took earlier answers with it and the first unanswered line was blamed.)
        self._open_chars = {ALPHABET[i] for i, st in enumerate(self.statuses) if st.startswith(UNDECIDED)}
        radix = [len(self.fields[f]) for f in self.type_fields]
        self._type_radix = radix
        if len(self.type_rows) != _prod(radix):
            raise TableError(f"{origin or 'support table'}: type rows do not cover the type fields")
        self._ok_types = _positions(self.type_rows, self._ok_char)
        self._ok_digits = [_digits(t, radix) for t in self._ok_types]

    # ---- loading -----------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path, plain_copy: Path | None = None) -> SupportTable:
        """Read a table (gzip-compressed or plain JSON). ``plain_copy``: a file to read instead
        when it exists (the decompressed JSON the cache keeps, ~2x faster) and to write otherwise."""
        p = Path(path)
        if plain_copy is not None:
            try:
                return cls(json.loads(plain_copy.read_bytes()), str(p))
            except (OSError, ValueError, TableError):
                pass
        try:
            raw = p.read_bytes()
            if raw[:2] == b"\x1f\x8b":
                raw = gzip.decompress(raw)
            data = json.loads(raw)
        except (OSError, ValueError, EOFError) as exc:
            raise TableError(f"{p}: cannot read support table: {exc}") from None
        table = cls(data, str(p))
        if plain_copy is not None:
            from fusionlint.store import write_atomic

            write_atomic(plain_copy, raw)
        return table

    @property
    def description(self) -> str:
        gpu = self.meta.get("gpu") or "unknown GPU"
        return f"cuBLASLt {version_text(self.cublaslt_version)} on {gpu} (measured)"

    # ---- questions ---------------------------------------------------------------------------
    def supported_type_rows(self) -> list[dict]:
        """Every type combination measured as supported: {type field: value}."""
        return [{f: self.fields[f][d] for f, d in zip(self.type_fields, digits)} for digits in self._ok_digits]

    def candidates(self, known: dict, outside: set[str] | None = None) -> dict[str, list[int]] | None:
        """Index sets per field from ``{field: value | None}`` (None: unknown, every value); None
        when a value lies outside the measured domain — or, with ``outside`` (a set to fill), that
        field's whole domain, its name added to ``outside`` (the stages that sweep it then decide
        nothing: pass it to :meth:`check` as ``skip``)."""
        out: dict[str, list[int]] = {}

        def beyond(f: str, dom: list) -> bool:
            if outside is None:
                return False
            outside.add(f)
            out[f] = list(range(len(dom)))
            return True

        for f, dom in self.fields.items():
            v = known.get(f, self.base.get(f)) if f in known or f in self.base else None
            if v is None:
                out[f] = list(range(len(dom)))
            elif isinstance(v, (list, tuple, set, frozenset)):
                idx = [self._index[f][x] for x in v if _hashable(x) and x in self._index[f]]
                if not idx:
                    if beyond(f, dom):
                        continue
                    return None
                out[f] = sorted(set(idx))
            else:
                i = self._index[f].get(v) if _hashable(v) else None
                if i is None:
                    if beyond(f, dom):
                        continue
                    return None
                out[f] = [i]
        return out

    def check(self, cands: dict[str, list[int]], skip: frozenset[str] | set[str] = frozenset()) -> Verdict:
        """Is some completion of the candidate sets supported? The failure named is that of the
        first type combination tried (of the only one, when the types are known). ``skip``: fields
        whose value lies outside the measured domain; stages that sweep one decide nothing, and a
        type field among them leaves the whole question open (``supported=None``)."""
        if skip & set(self.type_fields):
            return Verdict(None)
        types = self._type_candidates(cands)
        if not any(True for _ in itertools.islice(types, 1)):
            return Verdict(False, self._type_failure(cands), "types")
        first: Verdict | None = None
        for t in self._type_candidates(cands):
            failed = self._stage_failure(t, cands, skip)
            if failed is None:
                return Verdict(True)
            first = first or failed
        assert first is not None
        return first

    def verdict(self, config: dict) -> Verdict:
        """The table's verdict on one configuration (a value per field, missing fields at the base)."""
        cands = self.candidates(config)
        return Verdict(None) if cands is None else self.check(cands)

    def nearest(self, cands: dict[str, list[int]], fields: list[str] | None = None,
                limit: int = 4, skip: frozenset[str] | set[str] = frozenset()) -> list[tuple[str, list]]:
        """The fewest-field changes that make the configuration supported: ``[(field, [values])]``
        for single-field changes; else pairs of type fields as ``("f1+f2", [(v1, v2), ...])``.
        ``fields``: the fields that may change (default: those with one candidate)."""
        fields = fields or [f for f in self.fields if len(cands[f]) == 1]
        changes: dict[tuple[str, ...], list] = {}
        # type fields: the accepted type combinations that differ in one or two of them
        movable = [i for i, f in enumerate(self.type_fields) if f in fields]
        sets = [set(cands[f]) for f in self.type_fields]
        for t, digits in zip(self._ok_types, self._ok_digits):
            off = [i for i, d in enumerate(digits) if d not in sets[i]]
            if not 1 <= len(off) <= 2 or any(i not in movable for i in off):
                continue
            if self._stage_failure(t, cands, skip) is not None:
                continue
            key = tuple(self.type_fields[i] for i in off)
            value = tuple(self.fields[self.type_fields[i]][digits[i]] for i in off)
            if value not in changes.setdefault(key, []):
                changes[key].append(value)
        # the other fields, one at a time
        for f in fields:
            if f in self.type_fields:
                continue
            ok = [self.fields[f][i] for i in range(len(self.fields[f]))
                  if [i] != cands[f] and self.check({**cands, f: [i]}, skip).supported]
            if ok:
                changes[(f,)] = [(v,) for v in ok]
        single = [(k[0], [v[0] for v in vals]) for k, vals in changes.items() if len(k) == 1]
        if single:
            order = {f: i for i, f in enumerate(self.fields)}
            return sorted(single, key=lambda kv: order[kv[0]])[:limit]
        pairs = [("+".join(k), vals[:6]) for k, vals in changes.items() if len(k) == 2]
        return pairs[:limit]

    # ---- internals ---------------------------------------------------------------------------
    def _type_index(self, combo: tuple[int, ...]) -> int:
        i = 0
        for r, c in zip(self._type_radix, combo):
            i = i * r + c
        return i

    def _type_candidates(self, cands: dict[str, list[int]]):
        """Supported type-combination indexes consistent with the candidates."""
        sets = [cands[f] for f in self.type_fields]
        if all(len(x) == 1 for x in sets):  # known types: one look-up
            t = self._type_index(tuple(x[0] for x in sets))
            if self.type_rows[t] == self._ok_char:
                yield t
            return
        sets = [set(x) for x in sets]
        for t, combo in zip(self._ok_types, self._ok_digits):
            if all(c in s for c, s in zip(combo, sets)):
                yield t

    def _type_failure(self, cands: dict[str, list[int]]) -> str:
        """The status of the type combination; with unknown types, the one status every possible
        combination got (of the first 4096), else a summary."""
        combos = itertools.islice(itertools.product(*(cands[f] for f in self.type_fields)), MAX_COMPLETIONS)
        seen = {self.type_rows[self._type_index(c)] for c in combos}
        if len(seen) == 1:
            return self._status(seen.pop())
        return "every possible type combination rejected (" + "; ".join(sorted(self._status(c) for c in seen)) + ")"

    def _stage_failure(self, t: int, cands: dict[str, list[int]],
                       skip: frozenset[str] | set[str] = frozenset()) -> Verdict | None:
        for stage in self.stages:
            rows = stage.rows.get(t)
            if rows is None or (skip and skip & set(stage.fields)):
                continue
            sets = [cands[f] for f in stage.fields]
            if _prod(len(s) for s in sets) > MAX_COMPLETIONS:
                continue
            radix = [len(self.fields[f]) for f in stage.fields]
            seen = None
            for combo in itertools.product(*sets):
                i = 0
                for r, c in zip(radix, combo):
                    i = i * r + c
                ch = rows[i]
                if ch == self._ok_char or ch in self._open_chars or self._confounded(t, stage, combo, cands, ch):
                    break
                seen = seen or ch
            else:
                return Verdict(False, self._status(seen) if seen else "", stage.name)
        return None

    def _confounded(self, t: int, stage: Stage, combo: tuple[int, ...], cands: dict[str, list[int]],
                    status: str) -> bool:
        """Whether the row of ``stage`` at ``combo`` was measured at a configuration another stage
        rejects for the base values of its own fields, values this configuration does not have: the
        sweep held every other field at the base, and with ``combo``'s values of the fields the two
        stages share, the other stage fails at its base values (with the row's own status ``status``:
        a row that failed otherwise failed for a reason of its own) but accepts others. Then the
        row's failure may be the base's, not ``combo``'s, and it decides nothing here.
        (CUBLASLT_EPILOGUE_BGRADB with a bias pointer was measured at the base TRANSB=N, which
        BGRADB rejects; it works with TRANSB=T: kernels_ref/evidence/h200-bgrad-transposes.txt.)"""
        value = dict(zip(stage.fields, combo))
        for other in self.stages:
            shared = set(other.fields) & value.keys()
            if other is stage or not shared:
                continue
            rest = [f for f in other.fields if f not in shared]
            base = {f: self._index[f].get(self.base.get(f)) for f in rest}
            if not rest or None in base.values() or all(cands[f] == [base[f]] for f in rest):
                continue  # no field of its own, or this configuration is at the base of them
            rows = other.rows.get(t)
            if rows is not None and self._fails_at_base_only(t, other, rows, value, base) == status:
                return True
        return False

    def _fails_at_base_only(self, t: int, other: Stage, rows: str, value: dict[str, int],
                            base: dict[str, int]) -> str:
        """The status character ``other`` gives at ``value`` (its shared fields) and the base values
        of its own fields, when it fails there and accepts some other values of its own; else ""."""
        key = (t, other.name, tuple(value.get(f, -1) for f in other.fields))
        known = self._base_only.get(key)
        if known is None:
            def row(vals: dict[str, int]) -> str:
                i = 0
                for f in other.fields:
                    i = i * len(self.fields[f]) + vals[f]
                return rows[i]

            shared = {f: value[f] for f in other.fields if f in value}
            at_base = row({**shared, **base})
            known = ""
            if at_base != self._ok_char and at_base not in self._open_chars:
                domains = [range(len(self.fields[f])) for f in base]
                for n, combo in enumerate(itertools.product(*domains)):
                    if n >= MAX_COMPLETIONS:
                        break
                    if row({**shared, **dict(zip(base, combo))}) == self._ok_char:
                        known = at_base
                        break
            self._base_only[key] = known
        return known

    def _status(self, ch: str) -> str:
        return self.statuses[ALPHABET.index(ch)]


def _positions(text: str, ch: str) -> list[int]:
    out, i = [], text.find(ch)
    while i >= 0:
        out.append(i)
        i = text.find(ch, i + 1)
    return out


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def _digits(i: int, radix: list[int]) -> tuple[int, ...]:
    out = []
    for r in reversed(radix):
        i, d = divmod(i, r)
        out.append(d)
    return tuple(reversed(out))


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def version_text(v: int) -> str:
    """cuBLASLt's version number (cublasLtGetVersion: major*10000 + minor*100 + patch) as 13.1.0."""
    if v <= 0:
        return "unknown version"
    return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
