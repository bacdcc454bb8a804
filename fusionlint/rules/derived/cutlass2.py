"""Derived quantities of the ``cutlass`` scope for CUTLASS 2.x device GEMMs (FL320-FL326,
FL334-FL336, FL340): warp and instruction shapes, the template specializations read from the
CUTLASS headers (``cutlass2x_specializations.json``), threads, registers, shared memory and the
leading dimensions can_implement checks."""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from fusionlint.rules.derived.cutlass_view import SM90_SMEM_CAPACITY, _alignment_bits, _ints, _part, _short
from fusionlint.rules.derived.registry import View, derived


def _shape2x(view: View, name: str) -> list[int] | None:
    return _ints(_part(view, "gemm").get(name), 3)


@derived("warp_divides_threadblock", "cutlass")
def warp_divides_threadblock(view: View) -> bool | None:
    tb, warp = _shape2x(view, "threadblock_shape"), _shape2x(view, "warp_shape")
    if tb is None or warp is None or 0 in warp:
        return None
    return all(t % w == 0 for t, w in zip(tb, warp))


@derived("warp_k_mmas", "cutlass")
def warp_k_mmas(view: View) -> int | None:
    """Warp-level MMAs per K step of a 2.x warp tile: WarpShape::kK / InstructionShape::kK."""
    warp, inst = _shape2x(view, "warp_shape"), _shape2x(view, "instruction_shape")
    if warp is None or inst is None or inst[2] == 0 or warp[2] % inst[2]:
        return None
    return warp[2] // inst[2]


@derived("warp_k_mmas_valid", "cutlass")
def warp_k_mmas_valid(view: View) -> bool | None:
    n = warp_k_mmas(view)
    return None if n is None else n >= 2 and n % 2 == 0


# mma.sync shapes of arch::Mma for tensor ops (arch/mma_sm75.h, arch/mma_sm80.h), by A/B element
_MMA_SYNC_SHAPES = {
    "cutlass::half_t": {(16, 8, 16), (16, 8, 8)},
    "cutlass::bfloat16_t": {(16, 8, 16), (16, 8, 8)},
    "cutlass::tfloat32_t": {(16, 8, 8), (16, 8, 4)},
    "int8_t": {(16, 8, 32), (16, 8, 16), (8, 8, 16)},
    "uint8_t": {(16, 8, 32), (16, 8, 16), (8, 8, 16)},
}


@derived("instruction_shape_supported", "cutlass")
def instruction_shape_supported(view: View) -> bool | None:
    """A 2.x tensor-op InstructionShape that arch::Mma defines for these element types."""
    g = _part(view, "gemm")
    inst, a, b = _shape2x(view, "instruction_shape"), g.get("element_a"), g.get("element_b")
    if _short(g.get("op_class")) != "OpClassTensorOp" or inst is None or a != b or a not in _MMA_SYNC_SHAPES:
        return None
    return tuple(inst) in _MMA_SYNC_SHAPES[a]


# ---- 2.x template specializations, read from the CUTLASS headers by tools/gen_cutlass2x_tables.py ----
@functools.lru_cache(maxsize=1)
def _cutlass2x_tables() -> dict:
    path = Path(__file__).resolve().parent.parent / "cutlass2x_specializations.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _spec_name(v: Any) -> Any:
    """A template argument as the table writes it: no cutlass::/arch::/layout:: prefix, int as int32_t."""
    if not isinstance(v, str):
        return v
    v = v.removeprefix("cutlass::")
    v = v.removeprefix("arch::").removeprefix("layout::")
    return {"int": "int32_t"}.get(v, v)


def _spec_matches(row: dict, values: dict) -> bool:
    return all(row.get(k) == "*" or row.get(k) == v for k, v in values.items())


def _gemm2x_kernel_args(view: View) -> dict | None:
    """The template arguments device::Gemm hands to kernel::DefaultGemm: for a ColumnMajor C, the
    partial specialization of device::Gemm (gemm/device/gemm.h:572-630) swaps A and B, transposes
    their layouts and uses a RowMajor C. None when one of them is unknown."""
    g = _part(view, "gemm")
    keys = ("op_class", "arch", "element_a", "layout_a", "element_b", "layout_b", "layout_c", "element_accumulator",
            "instruction_shape", "stages", "operator")
    values = {k: g.get(k) for k in keys}
    if any(v is None or not isinstance(v, (str, int, list)) or isinstance(v, bool) for v in values.values()):
        return None
    values = {k: _spec_name(v) for k, v in values.items()}
    if values["layout_c"] == "ColumnMajor":
        flip = {"RowMajor": "ColumnMajor", "ColumnMajor": "RowMajor"}
        values.update(element_a=values["element_b"], element_b=values["element_a"], layout_c="RowMajor",
                      layout_a=flip.get(values["layout_b"], values["layout_b"]),
                      layout_b=flip.get(values["layout_a"], values["layout_a"]))
    return values


@derived("default_gemm_problem", "cutlass")
def default_gemm_problem(view: View) -> str | None:
    """Why no cutlass::gemm::kernel::DefaultGemm specialization (gemm/kernel/default_gemm.h) serves a
    2.x tensor-op GEMM; "" when one does, None when an argument is unknown."""
    args = _gemm2x_kernel_args(view)
    if args is None:
        return None
    if args["op_class"] != "OpClassTensorOp":
        return ""
    keys = ("op_class", "arch", "element_a", "layout_a", "element_b", "layout_b", "layout_c", "element_accumulator",
            "instruction_shape", "stages", "operator")
    rows = _cutlass2x_tables()["default_gemm"]
    if any(_spec_matches(r, {k: args[k] for k in keys}) for r in rows):
        return ""
    same_arch = [r for r in rows if r["op_class"] == "OpClassTensorOp" and r["arch"] == args["arch"]
                 and not str(r["layout_a"]).endswith(">")]
    if not same_arch:
        return f"DefaultGemm has no tensor-op specialization for arch::{args['arch']}"
    wants = []
    for r in same_arch:
        need = []
        if r["instruction_shape"] != "*":
            need.append("InstructionShape GemmShape<" + ", ".join(map(str, r["instruction_shape"])) + ">")
        if r["stages"] != "*":
            need.append(f"Stages = {r['stages']}")
        wants.append(" and ".join(need) or "other arguments")
    shape = "x".join(map(str, args["instruction_shape"])) if isinstance(args["instruction_shape"], list) else "?"
    return (f"DefaultGemm for arch::{args['arch']} needs {' or '.join(wants)}, not InstructionShape {shape} with "
            f"Stages = {args['stages']}")


@derived("arch_mma_problem", "cutlass")
def arch_mma_problem(view: View) -> str | None:
    """Why the warp-level tensor-op MMA of a 2.x GEMM finds no cutlass::arch::Mma specialization
    (arch/mma_sm75.h, mma_sm80.h, mma_sm89.h, ...): DefaultMmaTensorOp (gemm/warp/default_mma_tensor_op.h:99-104)
    asks for arch::Mma<InstructionShape, 32, ElementA, RowMajor, ElementB, ColumnMajor, ElementAccumulator,
    RowMajor, Operator>, except for its specializations (default_mma_tensor_op_sm80.h: float A and B run
    as tfloat32_t, ...). Judged for the DefaultGemm paths that use it (Sm75, Sm80); "" when the MMA
    exists or when only the instruction shape is wrong (FL322), None when an argument is unknown."""
    args = _gemm2x_kernel_args(view)
    if args is None:
        return None
    if args["op_class"] != "OpClassTensorOp" or args["arch"] not in ("Sm75", "Sm80") or default_gemm_problem(view):
        return ""
    if instruction_shape_supported(view) is False:
        return ""
    tables = _cutlass2x_tables()
    elements = {"element_a": args["element_a"], "element_b": args["element_b"],
                "element_c": args["element_accumulator"], "operator": args["operator"]}
    for r in tables["default_mma_tensor_op"]:
        if _spec_matches({k: r[k] for k in elements}, elements):
            uses = r.get("arch_mma")
            if uses is None or any(not isinstance(v, str) or v[:1].isupper() for v in uses.values()):
                return None  # a dependent type (the mixed-input upcast): not judged
            elements = dict(uses)
            break
    want = {"shape": args["instruction_shape"], "threads": 32, "element_a": elements["element_a"],
            "layout_a": "RowMajor", "element_b": elements["element_b"], "layout_b": "ColumnMajor",
            "element_c": elements["element_c"], "layout_c": "RowMajor", "operator": elements["operator"]}
    if any(_spec_matches(r, want) for r in tables["arch_mma"]):
        return ""
    shape = "x".join(map(str, args["instruction_shape"]))
    return (f"no arch::Mma<GemmShape<{shape.replace('x', ', ')}>, 32, {want['element_a']}, {want['element_b']}, "
            f"{want['element_c']}, {want['operator']}> exists (mma.sync has no {shape} instruction for "
            f"{want['element_a']} x {want['element_b']} accumulating in {want['element_c']})")


SM90_MAX_THREADS_PER_BLOCK = 1024
SM90_REGISTERS_PER_BLOCK = 65536  # 32-bit registers a block may use (the register file of an SM)
# What a 2.x tensor-op kernel's threads keep beside the accumulators and fragment buffers (global and
# shared-memory iterators, addresses, predicates, loop counters): at least 18 registers in every one of
# the 47 kernels of the 2.x thread-block grid (fp16/bf16/tf32, float and half accumulators, warp tiles
# 16x32 to 64x64, K split, 2 and 3 stages), ptxas of nvcc 13.0 for sm_90a
# (kernels_ref/evidence/h200-2x-threads-grid-ptxas.txt; fusionlint.evidence.grid_2x_threads).
REGISTERS_2X_BESIDE_FRAGMENTS = 18


@derived("threads_2x", "cutlass")
def threads_2x(view: View) -> int | None:
    """kThreadCount of a 2.x GEMM kernel: 32 x the warps of the threadblock tile
    (gemm/kernel/gemm.h: WarpCount = ThreadblockShape / WarpShape; device/gemm.h:478 launches
    dim3 block(GemmKernel::kThreadCount))."""
    tb, warp = _shape2x(view, "threadblock_shape"), _shape2x(view, "warp_shape")
    if tb is None or warp is None or 0 in warp or any(t % w for t, w in zip(tb, warp)):
        return None
    return 32 * (tb[0] // warp[0]) * (tb[1] // warp[1]) * (tb[2] // warp[2])


@derived("registers_min_2x", "cutlass")
def registers_min_2x(view: View) -> int | None:
    """A lower bound of the 32-bit registers a thread of the 2.x tensor-op mainloop keeps live: its share
    of the warp's accumulator tile (WarpM x WarpN accumulators over 32 lanes), the two warp-fragment
    buffers for A and B that the mainloop double-buffers (WarpM x InstK and InstK x WarpN elements each,
    gemm/threadblock/mma_multistage.h warp_loaded_frag_A/B[2], mma_pipelined.h warp_frag_A/B[2]), and
    REGISTERS_2X_BESIDE_FRAGMENTS more: the mainloop's iterators, addresses and counters. ptxas allocates
    at least this many (device_kernel.h:74 Kernel has no __launch_bounds__, so it does not trade
    registers for threads)."""
    g = _part(view, "gemm")
    warp, inst = _shape2x(view, "warp_shape"), _shape2x(view, "instruction_shape")
    bits_a, bits_b, bits_c = g.get("element_a_bits"), g.get("element_b_bits"), g.get("element_accumulator_bits")
    if _short(g.get("op_class")) != "OpClassTensorOp" or warp is None or inst is None or \
            not all(isinstance(b, int) for b in (bits_a, bits_b, bits_c)):
        return None
    acc = warp[0] * warp[1] * bits_c // 1024
    frag_a, frag_b = warp[0] * inst[2] * bits_a // 1024, inst[2] * warp[1] * bits_b // 1024
    return acc + 2 * (frag_a + frag_b) + REGISTERS_2X_BESIDE_FRAGMENTS


def _k_major_operands(view: View) -> tuple[list[tuple[str, int, int]], bool] | None:
    """The 2.x tensor-op operands that CUTLASS's sm80 (and sm75) DefaultMmaCore keeps K-major in shared
    memory, in its crosswise layout (A RowMajor, B ColumnMajor, of the element types in
    _CROSSWISE_ELEMENTS): (operand letter, rows of its tile, bits of its element) of those known, and
    whether an operand's layout, element or width is unknown. None when the GEMM is not tensor-op or
    its threadblock shape is unknown."""
    g = _part(view, "gemm")
    tb = _shape2x(view, "threadblock_shape")
    if _short(g.get("op_class")) != "OpClassTensorOp" or tb is None:
        return None
    out, unknown = [], False
    for op, kmajor, rows in (("a", "RowMajor", tb[0]), ("b", "ColumnMajor", tb[1])):
        layout, element = _short(g.get(f"layout_{op}")), _short(g.get(f"element_{op}"))
        bits = g.get(f"element_{op}_bits")
        if layout is None or element is None or not isinstance(bits, int):
            unknown = True
        elif layout == kmajor and element in _CROSSWISE_ELEMENTS:
            out.append((op, rows, bits))
    return out, unknown


def _k_major_tile_without_iterations(view: View, threads: int) -> str:
    """The K-major operand tile whose shared-memory iterator's thread map leaves some warp no access, as
    CUTLASS's sm80 DefaultMmaCore builds it: PitchLinearWarpRakedThreadMap over the tile (K contiguous)
    with 128-bit accesses and K / (128 / bits) threads of a warp along K (default_mma_core_sm80.h:1419-1426,
    :1458-1462); its warps first split the warp-level access rows (WarpAccessIterations::kStrided =
    rows x K / (128 / bits) / 32) and, when there are at least twice as many warps as rows, its
    contiguous iterations (1 / kWarpsContiguous) are 0 (pitch_linear_thread_map.h:270-298, "Number of
    iterations must be non-zero"). "" when none (or unknown)."""
    k = (_shape2x(view, "threadblock_shape") or [0, 0, 0])[2]
    warps = threads // 32
    for op, rows, bits in (_k_major_operands(view) or ([], False))[0]:
        if k * bits > SMEM_LINE_BITS:
            continue  # FL344's case: the crosswise layout itself does not compile
        along_k = k * bits // 128  # threads of a warp along K, one 128-bit access each
        if along_k == 0 or 32 % along_k or rows % (32 // along_k):
            continue  # other assertions of the thread map
        access_rows = rows // (32 // along_k)
        if access_rows and warps // access_rows >= 2:
            return (f"{op.upper()}'s {rows}x{k} tile ({rows * k * bits // 128} 128-bit accesses, {access_rows} "
                    "warp-wide rows of them)")
    return ""


@derived("threadblock_resource_problem", "cutlass")
def threadblock_resource_problem(view: View) -> str | None:
    """Why a 2.x GEMM's threadblock cannot be launched on sm_90: more than 1024 threads, or more
    registers than the 65536 of an SM (registers_min_2x per thread, allocated in units of 8); "" when it
    fits, None when unknown. Stages < 2 is FL325's case and not judged."""
    stages = _part(view, "gemm").get("stages")
    threads = threads_2x(view)
    if threads is None or not isinstance(stages, int):
        return None
    if stages < 2:
        return ""
    if threads > SM90_MAX_THREADS_PER_BLOCK:
        return (f"{threads // 32} warps make a {threads}-thread block, more than the {SM90_MAX_THREADS_PER_BLOCK} "
                "threads a block may have (the thread maps of small warp tiles also run out of iterations)")
    starved = _k_major_tile_without_iterations(view, threads)
    if starved:
        return (f"{threads // 32} warps make a {threads}-thread block, more warps than the thread map of {starved} "
                "can give an iteration")
    regs = registers_min_2x(view)
    if regs is None:
        return None
    if min(-(-regs // 8) * 8, 256) * threads > SM90_REGISTERS_PER_BLOCK:  # at most 255 per thread (ptxas spills)
        return (f"{threads // 32} warps make a {threads}-thread block, and each thread keeps at least {regs} "
                f"registers (accumulators and double-buffered A/B fragments of the warp tile, and "
                f"{REGISTERS_2X_BESIDE_FRAGMENTS} for the mainloop's iterators and addresses): more than "
                f"the {SM90_REGISTERS_PER_BLOCK} registers of an SM")
    return ""


SMEM_LINE_BITS = 1024  # one 128-byte shared-memory line
_CROSSWISE_ELEMENTS = ("half_t", "bfloat16_t", "tfloat32_t")  # measured (tf32) or the same header arithmetic


@derived("crosswise_k_problem_2x", "cutlass")
def crosswise_k_problem_2x(view: View) -> str | None:
    """Why a 2.x tensor-op GEMM's K-major operand does not fit CUTLASS's crosswise shared-memory
    layout: the sm80 (and sm75) DefaultMmaCore stores A RowMajor and B ColumnMajor as
    ``TensorOpMultiplicandCrosswise<sizeof_bits<Element>, ThreadblockShape::kK>``, whose
    ``kFactor = 8 x (128 / bits) / kK`` must be positive: one K row of the tile (kK x bits) may be at
    most a 128-byte line. "" when both fit (or neither operand is K-major), None when unknown."""
    found = _k_major_operands(view)
    if found is None:
        return None
    operands, unknown = found
    k = _shape2x(view, "threadblock_shape")[2]
    for op, _rows, bits in operands:
        if k * bits > SMEM_LINE_BITS:
            layout = "RowMajor" if op == "a" else "ColumnMajor"
            return (f"{op.upper()} is {layout} (K-major), so its shared-memory tile is stored crosswise, K = "
                    f"{k} elements of {bits} bits = {k * bits // 8} bytes per row, more than one "
                    f"{SMEM_LINE_BITS // 8}-byte shared-memory line")
    return None if unknown else ""


@derived("default_config_problem", "cutlass")
def default_config_problem(view: View) -> str | None:
    """Why CUTLASS has no DefaultGemmConfiguration for a 2.x GEMM that relies on the defaults."""
    value = _part(view, "gemm").get("default_config_problem")
    return value if isinstance(value, str) and value else None


@derived("defaults_missing", "cutlass")
def defaults_missing(view: View) -> bool | None:
    if _part(view, "gemm") == {}:
        return None
    return default_config_problem(view) is not None


@derived("access_bits_a", "cutlass")
def access_bits_a(view: View) -> int | None:
    return _alignment_bits(view, "gemm", "a")


@derived("access_bits_b", "cutlass")
def access_bits_b(view: View) -> int | None:
    return _alignment_bits(view, "gemm", "b")


@derived("cp_async_access_ok", "cutlass")
def cp_async_access_ok(view: View) -> bool | None:
    """A multistage (Stages >= 3, cp.async) 2.x mainloop copies 4, 8 or 16 bytes per access:
    AlignmentA x bits(A) and AlignmentB x bits(B) must be 32, 64 or 128."""
    stages = _part(view, "gemm").get("stages")
    a, b = access_bits_a(view), access_bits_b(view)
    if not isinstance(stages, int):
        return None
    if stages < 3:
        return True
    if (a is not None and a not in (32, 64, 128)) or (b is not None and b not in (32, 64, 128)):
        return False
    return None if a is None or b is None else True


@derived("smem_bytes_2x", "cutlass")
def smem_bytes_2x(view: View) -> int | None:
    """Shared memory of a 2.x multistage mainloop: Stages x (TB_M x TB_K x bits(A) + TB_N x TB_K x bits(B)) / 8."""
    g = _part(view, "gemm")
    tb, stages, bits_a, bits_b = _shape2x(view, "threadblock_shape"), g.get("stages"), g.get("element_a_bits"), \
        g.get("element_b_bits")
    if tb is None or not all(isinstance(x, int) for x in (stages, bits_a, bits_b)):
        return None
    return stages * (tb[0] * tb[2] * bits_a + tb[1] * tb[2] * bits_b) // 8


@derived("smem_fits_sm90_2x", "cutlass")
def smem_fits_sm90_2x(view: View) -> bool | None:
    need = smem_bytes_2x(view)
    return None if need is None else need <= SM90_SMEM_CAPACITY


@derived("misaligned_2x_operand", "cutlass")
def misaligned_2x_operand(view: View) -> str | None:
    """The first TensorRef of a 2.x GEMM's Arguments whose leading dimension is not a multiple of
    its operand's alignment, as ``kernel::Gemm::can_implement`` checks it with
    ``TensorRef_aligned`` (A: AlignmentA, B: AlignmentB, C and D: the epilogue's access width);
    "" when all are, None when a leading dimension or an alignment is unknown."""
    problem, gemm = _part(view, "problem"), _part(view, "gemm")
    checks = [("A", "ld_a", gemm.get("alignment_a")), ("B", "ld_b", gemm.get("alignment_b")),
              ("C", "ld_c", gemm.get("alignment_c")), ("D", "ld_d", gemm.get("alignment_c"))]
    unknown = False
    for name, key, alignment in checks:
        ld = problem.get(key)
        if not isinstance(ld, int) or not isinstance(alignment, int) or alignment <= 0:
            unknown = True
            continue
        if ld % alignment:
            return (f"the leading dimension of {name} is {ld}, not a multiple of its {alignment}-element "
                    f"alignment")
    return None if unknown else ""
