// Reference: FP16 TN GEMM with the CUTLASS 2.x device API (cutlass::gemm::device::Gemm), Ampere tensor ops
// (mma.sync 16x8x16, cp.async, 3 stages) built for sm_90a: A row-major, B column-major, FP16 C/D row-major,
// FP32 accumulation, threadblock 128x256x64, warp 64x64x64. Runs on Hopper, but it is not a wgmma/TMA kernel,
// so expect well below the 3.x kernels' throughput.
#include "cutlass/cutlass.h"
#include "cutlass/gemm/device/gemm.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "../../fixtures/cutlass/cutlass_probe.h"

using ElementA = cutlass::half_t;
using LayoutA = cutlass::layout::RowMajor;
using ElementB = cutlass::half_t;
using LayoutB = cutlass::layout::ColumnMajor;
using ElementC = cutlass::half_t;
using LayoutC = cutlass::layout::RowMajor;
using ElementAccumulator = float;

using ThreadblockShape = cutlass::gemm::GemmShape<128, 256, 64>;
using WarpShape = cutlass::gemm::GemmShape<64, 64, 64>;
using InstructionShape = cutlass::gemm::GemmShape<16, 8, 16>;
using EpilogueOp = cutlass::epilogue::thread::LinearCombination<
    ElementC, 128 / cutlass::sizeof_bits<ElementC>::value, ElementAccumulator, ElementAccumulator>;
static constexpr int Stages = 3;

using Gemm = cutlass::gemm::device::Gemm<
    ElementA, LayoutA, ElementB, LayoutB, ElementC, LayoutC, ElementAccumulator,
    cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    ThreadblockShape, WarpShape, InstructionShape, EpilogueOp,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, Stages>;

int main() {
  // Checked against the host reference at 768 x 512 x 256 (alpha = beta = 1), then timed at 8192 x 8192 x 8192.
  bool ok = probe_gemm2x<Gemm>(768, 512, 256);
  ok = probe_gemm2x<Gemm>(8192, 8192, 8192, true) && ok;
  return ok ? 0 : 1;
}
