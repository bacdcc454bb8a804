#!/usr/bin/env python3
"""Generate fusionlint/rules/cutlass2x_specializations.json from the CUTLASS headers.

Developer tooling, run by hand; fusionlint never runs it. A CUTLASS 2.x ``device::Gemm`` compiles
only where three class templates have a specialization for its template arguments; the primary
templates are declared and never defined, so anything else is an "incomplete type" error:

- ``cutlass::gemm::kernel::DefaultGemm`` (gemm/kernel/default_gemm.h): by operator class, arch tag,
  C layout, instruction shape and stage count (Sm70 wants GemmShape<8, 8, 4> and 2 stages, Sm75 2
  stages, ...);
- ``cutlass::gemm::warp::DefaultMmaTensorOp`` (gemm/warp/default_mma_tensor_op*.h): which element
  types the warp-level tensor-op MMA asks ``arch::Mma`` for (float A and B become tfloat32_t, ...);
- ``cutlass::arch::Mma`` (arch/mma_sm*.h): the mma.sync instructions by shape, thread count, A, B
  and accumulator types and math operator.

This script reads those specializations from the header text (comments stripped, template
arguments split at the top level) and writes each with its file and line. A template parameter
of the specialization is written as "*" (any value). Nothing in the output is typed by hand.

    python3 tools/gen_cutlass2x_tables.py --cutlass-include .cutlass/include
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "fusionlint" / "rules" / "cutlass2x_specializations.json"

ARCH_MMA_HEADERS = ["cutlass/arch/mma.h", "cutlass/arch/mma_sm50.h", "cutlass/arch/mma_sm60.h",
                    "cutlass/arch/mma_sm61.h", "cutlass/arch/mma_sm70.h", "cutlass/arch/mma_sm75.h",
                    "cutlass/arch/mma_sm80.h", "cutlass/arch/mma_sm89.h", "cutlass/arch/mma_sm90.h"]
DEFAULT_GEMM_HEADER = "cutlass/gemm/kernel/default_gemm.h"
WARP_HEADERS = ["cutlass/gemm/warp/default_mma_tensor_op.h", "cutlass/gemm/warp/default_mma_tensor_op_sm80.h"]

# positions of the template arguments of the primary templates (their declarations in the headers)
ARCH_MMA_ARGS = ["shape", "threads", "element_a", "layout_a", "element_b", "layout_b", "element_c", "layout_c",
                 "operator"]
DEFAULT_GEMM_ARGS = ["element_a", "layout_a", "alignment_a", "element_b", "layout_b", "alignment_b", "element_c",
                     "layout_c", "element_accumulator", "op_class", "arch", "threadblock_shape", "warp_shape",
                     "instruction_shape", "epilogue_op", "swizzle", "stages", "split_k_serial", "operator"]
WARP_ARGS = ["warp_shape", "instruction_shape", "element_a", "layout_a", "element_b", "layout_b", "element_c",
             "layout_c", "operator"]


def strip_comments(text: str) -> str:
    """Comments replaced by spaces, newlines kept (line numbers stay right)."""
    def blank(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"//[^\n]*|/\*.*?\*/", blank, text, flags=re.S)


def split_args(text: str) -> list[str]:
    """Split a template argument list at its top-level commas."""
    out, depth, cur = [], 0, []
    for c in text:
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur))
    return [" ".join(a.split()) for a in out]


def closing(text: str, i: int) -> int:
    """Index just past the '>' that closes the '<' before ``i``."""
    depth = 1
    while depth:
        c = text[i]
        depth += c == "<"
        depth -= c == ">"
        i += 1
    return i


def template_params(header: str) -> set[str]:
    """Names of the parameters of a ``template <...>`` header."""
    names = set()
    for p in split_args(header):
        p = p.split("=")[0].strip()
        m = re.search(r"([A-Za-z_]\w*)\s*$", p)
        if m and p:
            names.add(m.group(1))
    return names


def norm(arg: str, params: set[str]) -> str | int | list[int]:
    """A template argument as data: "*" for a parameter of the specialization, an int, a shape
    [m, n, k] for GemmShape<m, n, k>, else the type name without cutlass::/gemm::/arch:: prefixes."""
    a = arg.replace("typename ", "").strip()
    if a in params:
        return "*"
    m = re.fullmatch(r"(?:cutlass::)?(?:gemm::)?GemmShape\s*<\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*>", a)
    if m:
        return [int(x) for x in m.groups()]
    if re.fullmatch(r"-?\d+", a):
        return int(a)
    if a in ("true", "false"):
        return a == "true"
    a = re.sub(r"^(cutlass::)?(arch::|layout::)?", lambda mm: mm.group(2) or "", a)
    return {"int": "int32_t", "arch::Sm50": "Sm50"}.get(a, a)


def specializations(path: Path, name: str, rel: str) -> list[dict]:
    """Every ``template <...> struct NAME<...>`` in a header: its arguments and its line."""
    text = strip_comments(path.read_text(encoding="utf-8"))
    out = []
    for m in re.finditer(r"template\s*<", text):
        end = closing(text, m.end())
        rest = re.match(r"\s*(?:struct|class)\s+" + re.escape(name) + r"\s*<", text[end:])
        if not rest:
            continue
        start = end + rest.end()
        stop = closing(text, start)
        args = split_args(text[start:stop - 1])
        params = template_params(text[m.end():end - 1])
        line = text.count("\n", 0, end + rest.start()) + 1 + text[end:end + rest.end()].count("\n")
        out.append({"at": f"{rel}:{line}", "args": [norm(a, params) for a in args], "body_start": stop})
    return out


def _short(v):
    return v.rsplit("::", 1)[-1] if isinstance(v, str) else v


def arch_mma(include: Path) -> list[dict]:
    rows = []
    for rel in ARCH_MMA_HEADERS:
        for s in specializations(include / rel, "Mma", rel):
            args = s["args"]
            if len(args) != len(ARCH_MMA_ARGS):
                continue
            row = dict(zip(ARCH_MMA_ARGS, args))
            row["layout_a"], row["layout_b"], row["layout_c"] = (_short(row[k]) for k in ("layout_a", "layout_b",
                                                                                          "layout_c"))
            row["operator"] = _short(row["operator"])
            rows.append({**row, "at": s["at"]})
    return rows


def default_gemm(include: Path) -> list[dict]:
    rows = []
    for s in specializations(include / DEFAULT_GEMM_HEADER, "DefaultGemm", DEFAULT_GEMM_HEADER):
        args = s["args"]
        row = dict(zip(DEFAULT_GEMM_ARGS, args[:len(DEFAULT_GEMM_ARGS)]))
        row = {k: (_short(v) if k in ("layout_a", "layout_b", "layout_c", "op_class", "arch", "operator") else v)
               for k, v in row.items() if k not in ("epilogue_op", "swizzle", "split_k_serial", "threadblock_shape",
                                                     "warp_shape", "alignment_a", "alignment_b")}
        rows.append({**row, "at": s["at"]})
    return rows


def warp_tensor_op(include: Path) -> list[dict]:
    """DefaultMmaTensorOp specializations and the arch::Mma element types their policy names."""
    rows = []
    for rel in WARP_HEADERS:
        text = strip_comments((include / rel).read_text(encoding="utf-8"))
        for s in specializations(include / rel, "DefaultMmaTensorOp", rel):
            args = s["args"]
            if len(args) < len(WARP_ARGS):
                continue
            row = dict(zip(WARP_ARGS, args[:len(WARP_ARGS)]))
            body = text[s["body_start"]:s["body_start"] + 3000]
            mma = re.search(r"arch::Mma\s*<", body)
            uses = None
            if mma:
                inner = split_args(body[mma.end():closing(body, mma.end()) - 1])
                if len(inner) == len(ARCH_MMA_ARGS):
                    params = {"InstructionShape_", "InstructionShape", "ElementA", "ElementB", "ElementC",
                              "Operator", "Operator_", "ElementC_"}
                    u = dict(zip(ARCH_MMA_ARGS, [norm(a, params) for a in inner]))
                    uses = {"element_a": u["element_a"], "element_b": u["element_b"], "element_c": u["element_c"],
                            "operator": _short(u["operator"])}
            rows.append({"element_a": row["element_a"], "element_b": row["element_b"],
                         "element_c": row["element_c"], "operator": _short(row["operator"]),
                         "arch_mma": uses, "at": s["at"]})
    return rows


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cutlass-include", type=Path, default=REPO_ROOT / ".cutlass" / "include")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    inc = args.cutlass_include
    version = re.findall(r"#define CUTLASS_(MAJOR|MINOR|PATCH) (\d+)", (inc / "cutlass/version.h").read_text())
    data = {
        "generated_by": "tools/gen_cutlass2x_tables.py",
        "cutlass_version": ".".join(v for _, v in version),
        "note": "template specializations read from the CUTLASS headers; '*' is a template parameter (any value)",
        "arch_mma": arch_mma(inc),
        "default_gemm": default_gemm(inc),
        "default_mma_tensor_op": warp_tensor_op(inc),
    }
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(data['arch_mma'])} arch::Mma, {len(data['default_gemm'])} DefaultGemm, "
          f"{len(data['default_mma_tensor_op'])} DefaultMmaTensorOp specializations")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
