"""cuBLASLt: the descriptor/layout/preference/matmul call sequences of a file -> configurations.

- ``handler``   ``extract`` and ``CublasLtHandler``: the API calls the interpreter meets, turned into
                ``model.cublaslt_facts.Configuration`` records; ``DEFAULTS`` (the attributes' defaults);
- ``api_data``  ``ApiData``: the stand-in headers and the API model as one run uses them.
"""
