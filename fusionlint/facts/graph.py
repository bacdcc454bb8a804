"""The dependency graph of a file's GEMM configurations (networkx).

cuBLASLt: matmul / heuristic calls, descriptors, layouts, preferences, attribute writes and the
buffers (operands and attribute pointers). Edges say how they relate:
``configures`` (attribute write -> object), ``flows_into`` (object -> call, heuristic ->
matmul) and ``used_by`` (buffer -> call or attribute write).

CUTLASS: each GEMM (``cutlass_gemm``: the 3.x adapter/kernel or the 2.x device GEMM) and its parts,
the ``mainloop`` and ``epilogue`` collectives and the ``kernel`` (3.x), each labelled with its
template arguments (types, layouts, shapes, schedules, stages); edges ``part_of`` (collective ->
kernel -> GEMM).
"""
from __future__ import annotations

import json

import networkx as nx

from fusionlint.model.cublaslt_facts import ApiObject, AttrSet, FileFacts
from fusionlint.model.values import Address, Known, Symbol, Value


def _loc(loc) -> str:
    return f"{loc.line}:{loc.column}" if loc is not None else ""


def _value_label(v: Value, name: str | None) -> str:
    if isinstance(v, Known):
        return name or repr(v.value)
    if isinstance(v, (Symbol, Address)):
        return getattr(v, "name", "")
    return "?"


def _buffer_name(v: Value) -> str | None:
    if isinstance(v, Symbol) and not v.name.endswith("()"):
        return v.name
    if isinstance(v, Address):
        return v.name
    return None


def build(facts: FileFacts) -> nx.MultiDiGraph:
    g = nx.MultiDiGraph(path=facts.path)

    def add_object(obj: ApiObject) -> str:
        node = f"obj{obj.id}"
        if node not in g:
            g.add_node(node, kind=obj.kind, label=f"{obj.kind} {obj.name}", created_at=_loc(obj.created_at),
                       complete=obj.complete)
        return node

    def add_set(s: AttrSet, idx: int) -> str:
        node = f"set{idx}"
        g.add_node(node, kind="attribute_set", label=f"{s.attribute or '?'} = {_value_label(s.value, s.value_name)}",
                   at=_loc(s.site), conditional=s.conditional)
        return node

    for i, s in enumerate(facts.attribute_sets):
        node = add_set(s, i)
        obj = next((o for o in facts.objects if o.id == s.object_id), None)
        if obj is not None:
            g.add_edge(node, add_object(obj), relation="configures")
        buf = _buffer_name(s.value) if s.attribute and "POINTER" in s.attribute else None
        if buf:
            g.add_node(f"buf:{buf}", kind="buffer", label=buf)
            g.add_edge(f"buf:{buf}", node, relation="used_by")
    for obj in facts.objects:
        add_object(obj)
    for j, cfg in enumerate(facts.configurations):
        call = f"{cfg.kind}{j}"
        g.add_node(call, kind=cfg.kind, label=f"{cfg.kind} at {_loc(cfg.site)}", at=_loc(cfg.site),
                   function=cfg.function)
        if cfg.desc is not None:
            g.add_edge(add_object(cfg.desc), call, relation="flows_into", role="desc")
        for m, layout in cfg.layouts.items():
            if layout is not None:
                g.add_edge(add_object(layout), call, relation="flows_into", role=f"{m}desc")
        if cfg.preference is not None:
            g.add_edge(add_object(cfg.preference), call, relation="flows_into", role="preference")
        if cfg.kind == "matmul" and cfg.heuristic_loc is not None:
            heur = next((f"heuristic{k}" for k, other in enumerate(facts.configurations)
                         if other.kind == "heuristic" and other.loc == cfg.heuristic_loc), None)
            if heur is not None:
                g.add_edge(heur, call, relation="flows_into", role="algo")
        for role, v in cfg.operands.items():
            buf = _buffer_name(v)
            if buf and role in ("A", "B", "C", "D", "workspace", "alpha", "beta"):
                g.add_node(f"buf:{buf}", kind="buffer", label=buf)
                g.add_edge(f"buf:{buf}", call, relation="used_by", role=role)
    for k, gemm in enumerate(facts.cutlass):
        _add_cutlass(g, k, gemm)
    return g


_SHOWN = {  # the template arguments each part's label lists, in this order
    "mainloop": ("element_a", "layout_a", "alignment_a", "element_b", "layout_b", "alignment_b", "element_accumulator",
                 "tile_shape", "cluster_shape", "stage_count", "stages", "kernel_schedule", "dispatch_policy"),
    "epilogue": ("element_c", "layout_c", "alignment_c", "element_d", "layout_d", "alignment_d", "epilogue_tile",
                 "epilogue_schedule", "fusion_op", "type"),
    "kernel": ("problem_shape", "tile_scheduler"),
    "gemm": ("element_a", "layout_a", "element_b", "layout_b", "element_c", "layout_c", "element_accumulator",
             "arch", "threadblock_shape", "warp_shape", "instruction_shape", "stages", "alignment_a", "alignment_b",
             "epilogue_op", "swizzle"),
}


def _short(value: object) -> str:
    """A template argument for a label: ``128x128x64``, ``half_t``, ``RowMajor``."""
    if isinstance(value, list):
        if all(isinstance(v, int) for v in value):
            return "x".join(map(str, value))
        return "(" + ", ".join(_short(v) for v in value) + ")"
    text = str(value)
    return text.rsplit("::", 1)[-1] if "<" not in text else text.replace("cutlass::", "").replace("cute::", "")


def _part_label(title: str, part: object, shown: tuple[str, ...]) -> str:
    from fusionlint.model.cutlass_facts import Param

    lines = [title]
    for name in shown:
        p = getattr(part, name, None)
        if isinstance(p, Param) and (p.known or p.unknown):
            lines.append(f"{name} = {_short(p.value) if p.known else '?'}")
    return "\n".join(lines)


def _add_cutlass(g: nx.MultiDiGraph, k: int, gemm) -> None:
    """One CUTLASS GEMM: its node and its parts' (mainloop, epilogue, kernel), with ``part_of`` edges."""
    node = f"cutlass{k}"
    where = gemm.instantiated_at or gemm.loc
    title = f"CUTLASS {gemm.api} {gemm.kind} {gemm.name}" + (f" in {gemm.context}" if gemm.context else "") \
        + (f" (when {gemm.condition})" if gemm.condition else "")
    g.add_node(node, kind="cutlass_gemm", label=_part_label(f"{title}\nat {_loc(where)} ({gemm.mode})", gemm.gemm2x,
                                                              _SHOWN["gemm"]) if gemm.gemm2x else
               f"{title}\nat {_loc(where)} ({gemm.mode})", at=_loc(where), api=gemm.api, mode=gemm.mode)
    target = node
    if gemm.kernel is not None:
        kernel = f"{node}.kernel"
        g.add_node(kernel, kind="kernel", label=_part_label(f"kernel {gemm.kernel.name or 'GemmUniversal'}",
                                                             gemm.kernel, _SHOWN["kernel"]), at=_loc(gemm.kernel.loc))
        g.add_edge(kernel, node, relation="part_of", role="kernel")
        target = kernel
    for role, part in (("mainloop", gemm.mainloop), ("epilogue", gemm.epilogue)):
        if part is None:
            continue
        child = f"{node}.{role}"
        g.add_node(child, kind=role, label=_part_label(f"{role} {part.kind} {part.name}".rstrip(), part, _SHOWN[role]),
                   at=_loc(part.loc))
        g.add_edge(child, target, relation="part_of", role=role)


def to_json(g: nx.MultiDiGraph) -> str:
    return json.dumps(nx.node_link_data(g, edges="edges"), indent=2, default=str)


def to_dot(g: nx.MultiDiGraph) -> str:
    def q(s: object) -> str:
        return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    shapes = {"matmul": "box", "heuristic": "box", "descriptor": "box", "buffer": "cylinder",
              "attribute_set": "note", "cutlass_gemm": "box", "kernel": "box", "mainloop": "component",
              "epilogue": "component"}
    lines = [f"digraph {q(g.graph.get('path', 'fusionlint'))} {{", "  rankdir=LR;"]
    for node, data in g.nodes(data=True):
        shape = shapes.get(data.get("kind", ""), "ellipse")
        lines.append(f"  {q(node)} [label={q(data.get('label', node))}, shape={shape}];")
    for u, v, data in g.edges(data=True):
        label = data.get("relation", "") + (f" ({data['role']})" if data.get("role") else "")
        lines.append(f"  {q(u)} -> {q(v)} [label={q(label)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
