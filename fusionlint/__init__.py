"""fusionlint: a static linter for cuBLASLt and CUTLASS GEMM configurations on NVIDIA Hopper."""
__version__ = "0.1.0"
