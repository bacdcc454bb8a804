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
    if rstride == 0 or len(lshape) < 2:
        return True
    rest_shape, rest_stride = rshape, rstride
    for curr in lshape[:-1]:
        if not (rest_stride % curr == 0 or rest_stride < curr):
            return False
        next_shape, next_stride = -(-curr // rest_stride), -(-rest_stride // curr)
        if next_shape != 1 and rest_shape != 1:
            if rest_shape is None:
                return None
            new_shape = min(next_shape, rest_shape)
            if rest_shape % new_shape:
                return False
            rest_shape //= new_shape
        rest_stride = next_stride
    return True


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
