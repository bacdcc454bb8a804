"""``fusionlint trace``: the GEMM configurations a program actually ran, read from cuBLASLt's own
API log (``CUBLASLT_LOG_LEVEL=5``), checked with the same rules as the static front end.

Layers, each importing only the ones before it:

- ``log_parser``: log lines -> ``Record`` (level, function, parsed ``key=value`` fields); lines it
  cannot read are counted, never fatal. Standard library only.
- ``calls``: records -> ``GemmCall`` (one heuristic query or matmul, with the descriptor dumps,
  the SetAttribute lines tied to it by handle address, cuBLASLt's [Error] lines, the algorithm).
- ``facts``: calls -> ``fusionlint.model.cublaslt_facts.Configuration`` (the static path's facts), grouped into
  distinct configurations; one ``FileFacts`` per log for the rule engine.
- ``command``: the ``trace`` subcommand (run a command with logging on, or read logs; rules,
  report formats, the per-GEMM summary, links to static sites).
"""
