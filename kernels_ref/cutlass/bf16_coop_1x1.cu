// Reference: BF16 TN GEMM on Hopper with CUTLASS 3.x: A row-major, B column-major (both K-major), BF16 C/D
// row-major, FP32 accumulation, KernelTmaWarpSpecializedCooperative 128x256x64, cluster 1x1x1, the
// cooperative TMA epilogue, and the stage count carved out for the epilogue's shared memory.
#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "../../fixtures/cutlass/cutlass_probe.h"

using namespace cute;

using ElementA = cutlass::bfloat16_t;
using LayoutA = cutlass::layout::RowMajor;
static constexpr int AlignmentA = 8;
using ElementB = cutlass::bfloat16_t;
using LayoutB = cutlass::layout::ColumnMajor;
static constexpr int AlignmentB = 8;
using ElementC = cutlass::bfloat16_t;
using LayoutC = cutlass::layout::RowMajor;
static constexpr int AlignmentC = 8;
using ElementD = ElementC;
using LayoutD = LayoutC;
static constexpr int AlignmentD = AlignmentC;
using ElementAccumulator = float;
using ElementCompute = float;

using TileShape = Shape<_128, _256, _64>;
using ClusterShape = Shape<_1, _1, _1>;
using KernelSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecializedCooperative;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    TileShape, ClusterShape, cutlass::epilogue::collective::EpilogueTileAuto,
    ElementAccumulator, ElementCompute,
    ElementC, LayoutC, AlignmentC,
    ElementD, LayoutD, AlignmentD,
    EpilogueSchedule>::CollectiveOp;

using StageCountType = cutlass::gemm::collective::StageCountAutoCarveout<
    static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    ElementA, LayoutA, AlignmentA,
    ElementB, LayoutB, AlignmentB,
    ElementAccumulator,
    TileShape, ClusterShape,
    StageCountType,
    KernelSchedule>::CollectiveOp;

using GemmKernel = cutlass::gemm::kernel::GemmUniversal<
    Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

int main() {
  // Checked against the host reference at 768 x 512 x 256 (alpha = beta = 1), then timed at 8192 x 8192 x 8192.
  bool ok = probe_gemm3x<Gemm>(768, 512, 256);
  ok = probe_gemm3x<Gemm>(8192, 8192, 8192, true) && ok;
  return ok ? 0 : 1;
}
