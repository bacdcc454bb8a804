"""The cuBLASLt API model (``model.py``) and the stand-in headers generated from it (``stubs.py``)."""
from __future__ import annotations

# A JSON copy of the model's data that ``check`` keeps in its cache: (file, key). When set,
# ``model.model_data()`` reads it instead of the YAML. It lives here, not in model.py, so that a
# process can name it without importing the model (a single file's worker imports that while
# libclang parses).
cached_copy: tuple[str, str] | None = None
