"""The cuBLASLt API model: typed access to ``cublaslt_api.yaml``, data about the cuBLASLt, cuBLAS and
library_types API of one cuBLAS version (enums, attributes with their C types and sizes, functions,
structs, macros, headers).

The YAML is generated from the real cuBLAS headers by ``tools/gen_cublaslt_model.py``;
this module only reads it.  ``load_model()`` is cached, so the returned model is shared:
treat it as read-only. The front end's stand-in headers are generated from it
(``frontend/clang/cublas_stubs.py``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

MODEL_PATH = Path(__file__).with_name("cublaslt_api.yaml")


@dataclass(frozen=True)
class EnumSpec:
    name: str  # key in the model: the tag, else the (first) typedef name
    header: str
    tag: str | None
    typedefs: tuple[str, ...]
    underlying: str
    values: Mapping[str, int]  # every enumerator, header order, aliases included
    aliases: Mapping[str, str] = field(default_factory=dict)  # alias -> the first name with that value
    c_only_typedefs: tuple[str, ...] = ()  # typedefs only a C compiler sees (`typedef enum T T;`)

    def name_of(self, value: int) -> str | None:
        """First enumerator with this value, preferring a non-alias."""
        first = None
        for n, v in self.values.items():
            if v == value:
                if n not in self.aliases:
                    return n
                first = first or n
        return first


@dataclass(frozen=True)
class AttributeSpec:
    enum_type: str  # e.g. cublasLtMatmulDescAttributes_t
    name: str  # e.g. CUBLASLT_MATMUL_DESC_EPILOGUE
    value: int
    type: str | None  # C type of the value buffer, as the header comment states it
    size: int | None  # sizeof(type) on LP64; for arrays, one element
    pointer: bool = False
    enum: str | None = None  # enum whose values the attribute holds (model key)
    array: bool = False
    mask: bool = False  # a bit mask of `enum` values
    readonly: bool = False
    default: str | None = None  # as written in the comment
    alternatives: tuple[str, ...] = ()
    see: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Param:
    type: str
    name: str


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    header: str
    returns: str
    params: tuple[Param, ...]
    inline: bool = False  # static inline in the header
    cplusplus_only: bool = False  # declared only when compiled as C++
    variadic: bool = False
    calls: tuple[str, ...] = ()  # functions an inline body calls
    overloads: tuple["FunctionSpec", ...] = ()  # C++-only overloads (inline wrappers)

    @property
    def param_types(self) -> tuple[str, ...]:
        return tuple(p.type for p in self.params)


@dataclass(frozen=True)
class FieldSpec:
    type: str
    name: str
    array_len: int | None


@dataclass(frozen=True)
class StructSpec:
    name: str
    header: str
    tag: str | None
    fields: tuple[FieldSpec, ...] | None  # None: declared, not defined
    size: int | None


@dataclass(frozen=True)
class HeaderSpec:
    name: str
    guard: str | None
    pragma_once: bool
    includes: tuple[str, ...]
    order: tuple[str, ...]  # "kind:name" (enum/typedef/struct/macro) in header order


class ApiModel:
    """The cuBLASLt / cuBLAS / library_types API of one cuBLAS version."""

    def __init__(self, data: Mapping[str, Any]):
        self.source: Mapping[str, Any] = MappingProxyType(dict(data.get("source") or {}))
        self.version: str = str(self.source.get("version", ""))
        self.enums: Mapping[str, EnumSpec] = MappingProxyType(
            {n: _enum(n, e) for n, e in (data.get("enums") or {}).items()}
        )
        self.attributes: Mapping[str, Mapping[str, AttributeSpec]] = MappingProxyType(
            {
                et: MappingProxyType({n: _attr(et, n, a) for n, a in attrs.items()})
                for et, attrs in (data.get("attributes") or {}).items()
            }
        )
        self.typedefs: Mapping[str, str] = MappingProxyType(dict(data.get("typedefs") or {}))
        self.structs: Mapping[str, StructSpec] = MappingProxyType(
            {n: _struct(n, s) for n, s in (data.get("structs") or {}).items()}
        )
        self.macros: Mapping[str, str] = MappingProxyType(dict(data.get("macros") or {}))
        self.macro_values: Mapping[str, int] = MappingProxyType(dict(data.get("macro_values") or {}))
        self.function_aliases: Mapping[str, str] = MappingProxyType(dict(data.get("function_aliases") or {}))
        self.functions: Mapping[str, FunctionSpec] = MappingProxyType(
            {n: _function(n, f) for n, f in (data.get("functions") or {}).items()}
        )
        self.legacy_functions: tuple[str, ...] = tuple(data.get("legacy_functions") or ())
        self.headers: Mapping[str, HeaderSpec] = MappingProxyType(
            {n: _header(n, h) for n, h in (data.get("headers") or {}).items()}
        )
        self.version_notes: Mapping[str, Any] = MappingProxyType(dict(data.get("version_notes") or {}))

        constant_enum: dict[str, str] = {}
        for en, e in self.enums.items():
            for c in e.values:
                constant_enum.setdefault(c, en)
        self._constant_enum = constant_enum
        type_names: dict[str, str] = {}
        for en, e in self.enums.items():
            type_names.setdefault(en, en)
            for t in (e.tag, *e.typedefs):
                if t:
                    type_names.setdefault(t, en)
        self._enum_type_names = type_names
        self._attr_by_name = {n: a for attrs in self.attributes.values() for n, a in attrs.items()}
        self._attr_by_value = {
            (et, a.value): a for et, attrs in self.attributes.items() for a in reversed(list(attrs.values()))
        }

    # -- enums ------------------------------------------------------------------------------
    def enum(self, enum_type: str) -> EnumSpec | None:
        """An enum by model key, tag or any typedef name (``cudaDataType`` works too)."""
        key = self._enum_type_names.get(_strip_enum(enum_type))
        return self.enums.get(key) if key else None

    def enum_value(self, name: str) -> int | None:
        """Value of any enumerator of any enum."""
        en = self._constant_enum.get(name)
        return self.enums[en].values[name] if en else None

    def enum_of_constant(self, name: str) -> str | None:
        """Model key of the enum that declares this enumerator."""
        return self._constant_enum.get(name)

    def enum_name(self, enum_type: str, value: int) -> str | None:
        """First enumerator of ``enum_type`` with this value, preferring non-aliases."""
        e = self.enum(enum_type)
        return e.name_of(value) if e else None

    # -- attributes -------------------------------------------------------------------------
    def attribute(self, name: str) -> AttributeSpec | None:
        """Spec of an attribute constant such as ``CUBLASLT_MATMUL_DESC_EPILOGUE``."""
        return self._attr_by_name.get(name)

    def attribute_by_value(self, attr_enum_type: str, value: int) -> AttributeSpec | None:
        e = self.enum(attr_enum_type)
        return self._attr_by_value.get((e.name if e else attr_enum_type, value))

    def attributes_of(self, attr_enum_type: str) -> Mapping[str, AttributeSpec]:
        e = self.enum(attr_enum_type)
        return self.attributes.get(e.name if e else attr_enum_type, MappingProxyType({}))

    # -- the rest ---------------------------------------------------------------------------
    def function(self, name: str) -> FunctionSpec | None:
        """A function by name; cublas_v2.h aliases (``cublasCreate``) resolve to their target."""
        f = self.functions.get(name)
        if f is None and name in self.function_aliases:
            f = self.functions.get(self.function_aliases[name])
        return f

    def typedef(self, name: str) -> str | None:
        """Underlying type of a non-enum typedef, as spelled by clang."""
        return self.typedefs.get(name)

    def struct(self, name: str) -> StructSpec | None:
        return self.structs.get(name)

    def macro(self, name: str) -> str | None:
        return self.macros.get(name)

    def macro_value(self, name: str) -> int | None:
        return self.macro_values.get(name)

    def is_type_name(self, name: str) -> bool:
        return name in self._enum_type_names or name in self.typedefs or name in self.structs


def _strip_enum(name: str) -> str:
    name = name.strip()
    return name[5:].strip() if name.startswith("enum ") else name


def _enum(name: str, e: Mapping[str, Any]) -> EnumSpec:
    return EnumSpec(
        name=name,
        header=e["header"],
        tag=e.get("tag"),
        typedefs=tuple(e.get("typedefs") or ()),
        underlying=e.get("underlying", "int"),
        values=MappingProxyType(dict(e.get("values") or {})),
        aliases=MappingProxyType(dict(e.get("aliases") or {})),
        c_only_typedefs=tuple(e.get("c_only_typedefs") or ()),
    )


def _attr(enum_type: str, name: str, a: Mapping[str, Any]) -> AttributeSpec:
    return AttributeSpec(
        enum_type=enum_type,
        name=name,
        value=a["value"],
        type=a.get("type"),
        size=a.get("size"),
        pointer=bool(a.get("pointer", False)),
        enum=a.get("enum"),
        array=bool(a.get("array", False)),
        mask=bool(a.get("mask", False)),
        readonly=bool(a.get("readonly", False)),
        default=None if a.get("default") is None else str(a["default"]),
        alternatives=tuple(a.get("alternatives") or ()),
        see=a.get("see"),
        note=a.get("note"),
    )


def _function(name: str, f: Mapping[str, Any], header: str | None = None) -> FunctionSpec:
    hdr = f.get("header", header or "")
    return FunctionSpec(
        name=name,
        header=hdr,
        returns=f["returns"],
        params=tuple(Param(t, n) for t, n in f.get("params") or ()),
        inline=bool(f.get("inline", False)),
        cplusplus_only=bool(f.get("cplusplus_only", False)),
        variadic=bool(f.get("variadic", False)),
        calls=tuple(f.get("calls") or ()),
        overloads=tuple(_function(name, o, hdr) for o in f.get("overloads") or ()),
    )


def _struct(name: str, s: Mapping[str, Any]) -> StructSpec:
    fields = s.get("fields")
    return StructSpec(
        name=name,
        header=s["header"],
        tag=s.get("tag"),
        fields=None if fields is None else tuple(FieldSpec(t, n, k) for t, n, k in fields),
        size=s.get("size"),
    )


def _header(name: str, h: Mapping[str, Any]) -> HeaderSpec:
    return HeaderSpec(
        name=name,
        guard=h.get("guard"),
        pragma_once=bool(h.get("pragma_once", False)),
        includes=tuple(h.get("includes") or ()),
        order=tuple(h.get("order") or ()),
    )


def _read_yaml(path: Path) -> Any:
    import yaml  # not needed when the model's data comes from the cache (model_data)

    safe_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open("rb") as f:
        return yaml.load(f, Loader=safe_loader)


@lru_cache(maxsize=1)
def model_data() -> Mapping[str, Any]:
    """The shipped model's YAML data (plain mappings, lists, strings and numbers): read once.
    Reading the 260 KB YAML takes about 0.3 s, so ``check`` keeps a JSON copy in its cache
    (``cache.Cache.prime_api_model``) and its pipeline reads that (``read_copy``) instead."""
    return _read_yaml(MODEL_PATH)


def read_copy(path: str, key: str) -> Mapping[str, Any] | None:
    """The model's data from a JSON copy of it written under ``key`` (None: not there, or not that copy)."""
    from fusionlint.store import read_json

    data = read_json(Path(path))
    if data is None or data.get("key") != key or not isinstance(data.get("model"), dict):
        return None
    return data["model"]


@lru_cache(maxsize=4)
def load_model(path: str | None = None) -> ApiModel:
    """Load (once) the model shipped with fusionlint, or the YAML at ``path``."""
    return ApiModel(_read_yaml(Path(path)) if path else model_data())
