"""CUTLASS: every 3.x collective/kernel/adapter and every 2.x device GEMM of a file.

- ``reader``        ``extract_cutlass``: picks the mode and returns ``model.cutlass_facts`` GEMMs;
- ``source``        source mode, without the CUTLASS headers: a lexer/preprocessor, a small C++
                    reader and an evaluator of CUTLASS's types (also used by the instantiated mode
                    to read the type names libclang prints);
- ``instantiated``  instantiated mode, with the CUTLASS headers: the GEMMs read from libclang's own
                    specializations of the CUTLASS templates.
"""
