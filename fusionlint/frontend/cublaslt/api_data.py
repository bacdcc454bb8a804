"""The cuBLASLt API model as the front end uses it: :class:`ApiData`, the stand-in headers generated
from it (``frontend/clang/cublas_stubs.py``) and the model as one run uses them. The model itself,
data about the API, is ``fusionlint.model.cublaslt_api``."""
from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up (~6 ms)

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from fusionlint.model.cublaslt_api import ApiModel


class ApiData:
    """The stand-in headers and the API model of one run, passed along explicitly: ``check`` gets
    them from its cache (``run.cache.Cache.prime_api_model``: JSON copies of both, keyed by
    fusionlint's own files, which include the YAML model; reading the YAML takes ~0.3 s) and hands
    them to its workers, whose pipeline gives the headers to the parse and the model to the readers
    and the rules. Without a copy (``stand_ins``/``model_copy`` None) they are made the usual way:
    ``parse.stand_in_headers()`` and ``model.load_model()``. Each is read once, when first needed
    (a single file's child reads the model while libclang parses); forked workers inherit what was
    read before the fork. This module imports nothing until then, so naming the data costs nothing."""

    def __init__(self, stand_ins: dict[str, str] | None = None, model_copy: tuple[str, str] | None = None) -> None:
        self._stand_ins = stand_ins
        self.model_copy = model_copy  # (file, key) of the model's JSON copy in the cache
        self._data: Mapping[str, Any] | None = None
        self._model: ApiModel | None = None

    def stand_ins(self) -> dict[str, str]:
        """Header name -> text of every stand-in header."""
        if self._stand_ins is None:
            from fusionlint.frontend.clang.parse import stand_in_headers

            self._stand_ins = stand_in_headers()
        return self._stand_ins

    def data(self) -> Mapping[str, Any]:
        """The model's data (plain mappings, lists, strings and numbers): the cache's copy, else the YAML."""
        if self._data is None:
            from fusionlint.model.cublaslt_api import model_data, read_copy

            copy = read_copy(*self.model_copy) if self.model_copy is not None else None
            self._data = copy if copy is not None else model_data()
        return self._data

    def model(self) -> ApiModel:
        from fusionlint.model.cublaslt_api import ApiModel, load_model

        if self._model is None:
            self._model = load_model() if self.model_copy is None else ApiModel(self.data())
        return self._model
