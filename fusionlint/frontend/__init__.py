"""The front end: C++/CUDA source -> configurations (``model.cublaslt_facts``, ``model.cutlass_facts``).

Four packages, each importing only the ones listed after it (``lint-imports`` checks it):

- ``cublaslt``  cuBLASLt call sequences -> configurations, through the interpreter;
- ``cutlass``   CUTLASS template arguments -> GEMMs, from the source text or from libclang's
                instantiations (independent of ``cublaslt`` and of the interpreter);
- ``interp``    the abstract interpreter that follows values through a translation unit;
- ``clang``     libclang: translation units, stand-in headers, partial-parse recovery, cursor readers.
"""
