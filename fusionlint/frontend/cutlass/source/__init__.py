"""The CUTLASS source reader (no CUTLASS headers needed).

- ``lexer``      tokens and a preprocessor with the macros the CUTLASS headers would define;
- ``terms``      types and constant expressions as written;
- ``syntax``     a small C++ reader of the declarations that configure GEMMs: ``read_program``;
- ``evaluator``  name lookup and constant evaluation, CUTLASS's templates as ``Construct`` records;
- ``model``      what fusionlint knows about CUTLASS's names, widths, template parameters and defaults;
- ``includes``   the project's own headers the reader follows;
- ``problem_sizes`` literal problem sizes written into a GEMM's ``Arguments``;
- ``storage``    the builders' shared-memory arithmetic (carve-out, automatic stage count);
- ``left_out_code`` GEMM templates instantiated only in code the preprocessor leaves out.
"""
