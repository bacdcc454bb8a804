"""CuTe's layout algebra as far as the sm_90 mainloop's shared-memory layouts need it: the swizzle
the smem selectors pick, coalesce_x, composition's divisibility checks, the slice of a stage."""
from __future__ import annotations


# ---- the sm_90 mainloop's shared-memory layouts (gemm/collective/builders/sm90_common.inl) ---------
def _smem_swizzle_bits(major: str, bits: int, extent: int, rs: bool = False, transpose_b: bool = False) -> int | None:
    """B of the Swizzle<B,4,3> of the GMMA smem layout atom that ss_smem_selector (sm90_common.inl:270)
    or rs_smem_selector (:175) picks for an operand: SW128 (3), SW64 (2), SW32 (1) or INTER (0), the
    largest whose width (1024, 512, 256, 128 bits) divides ``extent`` (K for a K-major operand, M or N
    for an MN-major one). None where the selector asserts (the extent is not a multiple of 8 elements
    or of the INTER atom)."""
    widths = [(3, 1024), (2, 512), (1, 256), (0, 128)]
    if rs and major == "MN":
        if bits == 32:  # whole-word types: SW32 (only SW32 for the transposed-B path), else INTER
            widths = [(1, 256)] if transpose_b else [(1, 256), (0, 128)]
        elif bits == 8 and transpose_b:
            widths = [(3, 1024)]
    for swizzle, width in widths:
        if width % bits == 0 and extent % (width // bits) == 0:
            return swizzle
    return None


def _coalesce_x(shape: list[int], stride: list[int]) -> tuple[list[int], list[int]]:
    """cute::detail::coalesce_x (cute/layout.hpp:826): a last mode of size 1 counts as size 2; modes
    are merged from the right where shape_i * stride_i == the next mode's stride."""
    new_shape, new_stride = [2 if shape[-1] == 1 else shape[-1]], [stride[-1]]
    for s, d in zip(reversed(shape[:-1]), reversed(stride[:-1])):
        if s == 1:
            continue
        if new_shape[0] == 1:
            new_shape[0], new_stride[0] = s, d
        elif s * d == new_stride[0]:
            new_shape[0], new_stride[0] = s * new_shape[0], d
        else:
            new_shape.insert(0, s)
            new_stride.insert(0, d)
    return new_shape, new_stride


def _compose_divisible(lshape: list[int], rshape: int, rstride: int) -> bool | None:
    """The static divisibility checks of cute::detail::composition_impl (cute/layout.hpp:1053-1111) for
    a rank-1 right-hand layout rshape:rstride: "Stride Divisibility Condition" and "Shape Divisibility
    Condition". None where a check needs an unknown rshape."""
    failed = _composition_failure(lshape, rshape, rstride)
    return None if failed == "?" else not failed


def _composition_failure(lshape: list[int], rshape: int | None, rstride: int) -> str:
    """Which of composition_impl's static_asserts fails ("" none, "?" not known: an unknown rshape)."""
    if rstride == 0 or len(lshape) < 2:
        return ""
    rest_shape, rest_stride = rshape, rstride
    for curr in lshape[:-1]:
        if not (rest_stride % curr == 0 or rest_stride < curr):
            return "Stride Divisibility Condition"
        next_shape, next_stride = -(-curr // rest_stride), -(-rest_stride // curr)
        if next_shape != 1 and rest_shape != 1:
            if rest_shape is None:
                return "?"
            new_shape = min(next_shape, rest_shape)
            if rest_shape % new_shape:
                return "Shape Divisibility Condition"
            rest_shape //= new_shape
        rest_stride = next_stride
    return ""


def _stage_slice_divisible(swizzle: int, stage_stride: int, stages: int | None) -> bool | None:
    """Does ``SmemLayout{}(_, _, Int<0>{})`` compile for an smem layout of Swizzle<swizzle,4,3> whose
    stages are ``stage_stride`` elements apart? The slice (cute/swizzle_layout.hpp:230-260,
    slice_and_offset) composes the swizzle's projections swizzle_anti_zy and swizzle_only_zy with the
    stage mode stages:stage_stride, and composition asserts divisibility."""
    if swizzle == 0:  # composition(Swizzle<0,M,S>, ...) is the identity (swizzle_layout.hpp:310)
        return True
    b, m, s = swizzle, 4, 3
    shape = [1 << m, 1 << b, 1 << (s - b), 1 << b, 1]
    compact = [1, 1 << m, 1 << (m + b), 1 << (m + s), 1 << (m + s + b)]
    anti = [compact[0], 0, compact[2], 0, compact[4]]
    only = [0, compact[1], 0, compact[3], 0]
    result: bool | None = True
    for strides in (anti, only):
        lshape, _ = _coalesce_x(shape, strides)
        ok = _compose_divisible(lshape, stages, stage_stride)
        if ok is False:
            return False
        if ok is None:
            result = None
    return result


_SWIZZLE_WIDTH_BITS = {3: 1024, 2: 512, 1: 256, 0: 128}


def _stage_tile_leaves(major: str, swizzle: int, bits: int, mn: int, k: int,
                       k_first: bool) -> list[tuple[int, int]] | None:
    """The leaves (shape, stride) of one stage of the mainloop's smem layout, SmemLayout{}(_,_,0)'s
    layout before the swizzle: tile_to_shape(atom, (MN, K, Stages), Step<_2,_1,_3> for an MN-major
    gmem operand, else Step<_1,_2,_3>) (sm90_mma_tma_gmma_ss_warpspecialized.hpp:128-135,
    sm90_mma_tma_gmma_rs_warpspecialized.hpp:156-163; cute/layout.hpp:1778 tile_to_shape, a blocked
    product that keeps the atom's modes). The GMMA atoms (cute/atom/mma_traits_sm90_gmma.hpp):
    K-major (8, W/bits):(W/bits, 1), MN-major (W/bits, 8):(1, W/bits), W the swizzle's width in bits.
    None where the atom does not divide the tile (the selector or tile_to_shape asserts first)."""
    width = _SWIZZLE_WIDTH_BITS[swizzle] // bits
    atom_mn, atom_k = (8, width) if major == "K" else (width, 8)
    stride_mn, stride_k = (width, 1) if major == "K" else (1, width)
    if mn % atom_mn or k % atom_k:
        return None
    reps_mn, reps_k = mn // atom_mn, k // atom_k
    size = atom_mn * atom_k
    tile_mn, tile_k = (reps_k, 1) if k_first else (1, reps_mn)
    return [(atom_mn, stride_mn), (reps_mn, tile_mn * size), (atom_k, stride_k), (reps_k, tile_k * size)]


def _stage_tile_failure(swizzle: int, leaves: list[tuple[int, int]]) -> str:
    """The static_assert that fails composing the sliced stage with the swizzle's Y/Z projection
    ("" none): slice_and_offset composes swizzle_only_zy with the layout left after the slice, "this
    also tests that shape/stride of layout compose with swizzle" (cute/swizzle_layout.hpp:262-264),
    leaf by leaf (cute/layout.hpp:1036, composition_impl's right-distributivity)."""
    if swizzle == 0:
        return ""
    b, m, s = swizzle, 4, 3
    shape = [1 << m, 1 << b, 1 << (s - b), 1 << b, 1]
    only = [0, 1 << m, 0, 1 << (m + s), 0]
    lshape, _ = _coalesce_x(shape, only)
    for leaf_shape, leaf_stride in leaves:
        failed = _composition_failure(lshape, leaf_shape, leaf_stride)
        if failed and failed != "?":
            return failed
    return ""
