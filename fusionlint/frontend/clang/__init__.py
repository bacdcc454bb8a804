"""libclang plumbing: everything between a file on disk and a translation unit's cursors.

- ``parse``       translation-unit creation (flags, the CUDA prelude, stand-in headers, diagnostics,
                  precompiled headers): ``parse_file``, ``ParseOptions``, ``ParsedUnit``;
- ``toolchain``   where the real CUDA, cuBLAS and CUTLASS headers live on this machine: ``discover``;
- ``cublas_stubs`` the stand-in cuBLAS headers generated from the cuBLASLt API model: ``stub_headers``;
- ``include/``    fusionlint's own CUDA prelude and stand-in system headers (package data);
- ``recovery``    partial-parse recovery: declarations for names of headers found nowhere;
- ``out_of_line`` classes of such headers rebuilt from their members' out-of-line definitions;
- ``explicit_instantiations`` explicit instantiations of function templates made visible to libclang;
- ``clangext``    libclang C functions the Python bindings do not wrap (operators, constant evaluation);
- ``cursors``     small readers of cursors: where a cursor is, its children, how it is written.
"""
