"""The cuBLASLt API model is ``fusionlint.model.cublaslt_api`` (data about the API, in the model
layer below the front end, issue 17). This name re-exports it for the modules that still import it
from here (``evidence/probegen.py``); new code imports ``fusionlint.model.cublaslt_api``."""
from __future__ import annotations

from fusionlint.model.cublaslt_api import (  # noqa: F401
    MODEL_PATH,
    ApiModel,
    AttributeSpec,
    EnumSpec,
    FieldSpec,
    FunctionSpec,
    HeaderSpec,
    Param,
    StructSpec,
    load_model,
    model_data,
    read_copy,
)
