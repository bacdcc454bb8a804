"""On-disk cache of per-file results (and the home of the precompiled headers).

A file's entry is found by a key over everything that can change what the pipeline reports
for it before selection and suppression: the file's bytes, its path and the working
directory, the effective compiler arguments, the target arch, the rules (their full
contents), fusionlint's version and code (which covers the stand-in headers it supplies),
and libclang's version. An entry records the include closure libclang reported (each header
with a hash of its bytes) and the headers that were found nowhere; it is used only while
every header still hashes the same and none of the missing ones has appeared.

Layout: ``<dir>/v1/results/<2 hex>/<key>.json``, ``<dir>/v1/pch/<key>.pch|.json``,
``<dir>/v1/rules/<key>.json``, ``<dir>/v1/model/<key>.json`` and ``<key>-model.json`` (the
stand-in headers and the API model's data: JSON copies of what the YAML model gives). Every file is written to a
temporary name and renamed (``os.replace``), so parallel runs never see a half-written entry;
an entry that does not parse is ignored. The directory is bounded (``FUSIONLINT_CACHE_SIZE_MB``, default 2048): after a
run that wrote something, the least recently used files go first.

Where: ``--cache-dir DIR``, else ``FUSIONLINT_CACHE_DIR``, else ``$XDG_CACHE_HOME/fusionlint``,
else ``~/.cache/fusionlint``. ``--no-cache`` turns it off.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

from fusionlint.findings import Finding, Related, Undecided
from fusionlint.store import (  # noqa: F401  (the cache's own vocabulary; other modules use store)
    _TMP_PREFIX,
    FORMAT,
    FileHashes,
    _still_valid,
    _temporary_file,
    absent_candidates,
    default_dir,
    dependencies,
    digest,
    file_hash,
    fusionlint_key,
    libclang_key,
    read_json,
    write_atomic,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up (~6 ms)

if TYPE_CHECKING:
    from fusionlint.frontend.cublaslt.api_data import ApiData

DEFAULT_SIZE_MB = 2048


# -- findings <-> JSON -----------------------------------------------------------------------
def finding_from_dict(d: dict) -> Finding:
    return Finding(d["code"], d["name"], d["severity"], d["path"], d["line"], d["column"], d["message"],
                   d.get("fix", ""), tuple(Related(r["path"], r["line"], r["column"], r["message"])
                                         for r in d.get("related", ())))


def findings_to_json(findings: list[Finding]) -> list[dict] | None:
    """JSON form of findings, or None when it would not read back identical."""
    data = [f.to_dict() for f in findings]
    try:
        back = [finding_from_dict(d) for d in json.loads(json.dumps(data))]
    except (TypeError, ValueError, KeyError):
        return None
    return data if back == list(findings) else None


# -- the cache ----------------------------------------------------------------------------------
@dataclasses.dataclass
class CachedResult:
    findings: list[Finding]
    error: str | None = None
    skipped: str | None = None
    missing_headers: list[str] = dataclasses.field(default_factory=list)  # reported again on a cache hit
    undecided: list = dataclasses.field(default_factory=list)  # findings.Undecided
    functions_not_read: list[str] = dataclasses.field(default_factory=list)  # -v notes (frontend/clang/recovery.py)


class Cache:
    def __init__(self, root: Path, size_mb: int | None = None) -> None:
        self.root = Path(root)
        self.base = self.root / FORMAT
        env = os.environ.get("FUSIONLINT_CACHE_SIZE_MB", "")
        self.max_bytes = (size_mb if size_mb is not None else int(env) if env.isdigit() else DEFAULT_SIZE_MB) << 20
        self.wrote = False
        self.hits = self.misses = 0

    @property
    def pch_dir(self) -> Path:
        return self.base / "pch"

    def _result_path(self, key: str) -> Path:
        return self.base / "results" / key[:2] / f"{key}.json"

    def lookup(self, key: str) -> CachedResult | None:
        data = read_json(self._result_path(key))
        result = None
        if data is not None and data.get("key") == key and _still_valid(data.get("deps"), data.get("absent")):
            try:
                r = data["result"]
                missing = r.get("missing", [])
                if not (isinstance(missing, list) and all(isinstance(m, str) for m in missing)):
                    raise TypeError("missing headers")
                result = CachedResult([finding_from_dict(d) for d in r["findings"]], r.get("error"), r.get("skipped"),
                                      list(missing))
                result.undecided = [Undecided.from_dict(u) for u in r.get("undecided", [])]
                result.functions_not_read = [str(m) for m in r.get("not_read", [])]
            except (KeyError, TypeError, ValueError):
                result = None
        if result is None:
            self.misses += 1
        else:
            self.hits += 1
        return result

    def store(self, key: str, findings: list[Finding], deps: list[list[str]], absent: list[str],
              skipped: str | None = None, missing: list[str] = (), undecided: list = (),
              not_read: list[str] = ()) -> bool:
        data = findings_to_json(findings)
        if data is None:
            return False
        entry = {"key": key, "deps": deps, "absent": absent, "created": time.time(),
                 "result": {"findings": data, "error": None, "skipped": skipped, "missing": list(missing)}}
        entry["result"]["undecided"] = [u.to_dict() for u in undecided]
        if not_read:
            entry["result"]["not_read"] = list(not_read)
        ok = write_atomic(self._result_path(key), json.dumps(entry).encode("utf-8"))
        self.wrote |= ok
        return ok

    # -- the API model and the stand-in headers made from it: reading the YAML model costs ~0.3 s
    def prime_api_model(self, load_model: bool = True) -> ApiData:
        """The stand-in headers and the API model's data of this run (``frontend.cublaslt.api_data.ApiData``): the
        JSON copy of each kept here, keyed by fusionlint's own files (which include the YAML model), or
        made now and kept here. The headers are read at once (every parse needs them), the model's copy
        too unless ``load_model`` is false (a single file's child then reads it while libclang
        parses). Forked workers inherit what was read."""
        from fusionlint.frontend.clang import parse
        from fusionlint.frontend.cublaslt.api_data import ApiData

        key = digest("api-model", FORMAT, fusionlint_key())
        stand_ins_path = self.base / "model" / f"{key}.json"
        model_path = self.base / "model" / f"{key}-model.json"
        data = read_json(stand_ins_path)
        if data is not None and data.get("key") == key and isinstance(data.get("stand_ins"), dict) \
                and all(isinstance(k, str) and isinstance(v, str) for k, v in data["stand_ins"].items()) \
                and model_path.is_file():
            api = ApiData(data["stand_ins"], (str(model_path), key))
            if load_model:
                api.data()
            return api
        from fusionlint.model.cublaslt_api import model_data

        raw, stand_ins = model_data(), parse.stand_in_headers()
        api = ApiData(stand_ins)
        try:
            blob = json.dumps({"key": key, "model": raw})
            if json.loads(blob)["model"] != raw:  # not plain JSON data: would not read back the same
                return api
        except (TypeError, ValueError):
            return api
        if write_atomic(model_path, blob.encode("utf-8")):
            self.wrote |= write_atomic(stand_ins_path, json.dumps({"key": key, "stand_ins": stand_ins}).encode("utf-8"))
        return api

    # -- size bound ---------------------------------------------------------------------------
    def evict(self) -> None:
        """Remove least recently used files beyond the size bound, and stale temporary files."""
        files = []
        now = time.time()
        for dirpath, _dirs, names in os.walk(self.base):
            for n in names:
                p = os.path.join(dirpath, n)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                if n.startswith(_TMP_PREFIX) or n.endswith(".lock"):
                    if now - st.st_mtime > 3600:
                        _unlink(p)
                    continue
                files.append((st.st_mtime, st.st_size, p))
        total = sum(s for _, s, _ in files)
        if total <= self.max_bytes:
            return
        # precompiled headers first (each is megabytes; a result is a few hundred bytes), oldest first
        for _, size, p in sorted(files, key=lambda f: (not f[2].endswith(".pch"), f[0])):
            if total <= self.max_bytes * 0.8:
                break
            _unlink(p)
            total -= size


def _unlink(p: str) -> None:
    try:
        os.unlink(p)
    except OSError:
        pass
