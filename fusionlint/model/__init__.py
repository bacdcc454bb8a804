"""The vocabulary every layer above speaks: resolved values and source locations, the typed facts
of a cuBLASLt call sequence and of a CUTLASS GEMM, and the measured cuBLASLt support table. It
imports nothing above errors/store."""
