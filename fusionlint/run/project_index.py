"""``fusionlint index``: the project index of a compilation database, and its use by
``check`` and ``facts``.

Each translation unit of the project is parsed once (``facts/project_index.py``): the functions it
defines that reach cuBLASLt, and its calls of functions it has no body of. ``check`` and ``facts``
of a file then evaluate the file's functions once per call from *another* file (calls inside one
unit are inlined by the interpreter already), with the argument values written there.

Storage, in the cache directory (``store.py``'s conventions: atomic writes, JSON read back
defensively):

- ``v1/index/files/<2 hex>/<key>.json``: one file's record, keyed by its bytes, path, compiler
  arguments, fusionlint's code and libclang; kept with the include closure (each header's hash) and
  the headers found nowhere, like a result entry, so that a re-index parses only what changed.
- ``v1/index/projects/<key of the database's path>.json``: the project's manifest, the entry of
  each indexed file. ``check`` and ``facts`` find it from the file's compilation database (``-p``,
  else the nearest ``compile_commands.json`` above the file, as for its flags).

A caller whose file (or a header it read) changed since the index was built is not used (a note
says so); ``fusionlint index`` brings it up to date. Without an index for the project nothing
changes: no context, the same cache keys, the same output.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from fusionlint.store import FORMAT, _still_valid, cache_files, digest, file_hash, fusionlint_key, libclang_key, read_json

TYPE_CHECKING = False

if TYPE_CHECKING:
    from fusionlint.model.call_context import CallContext, IndexContext
    from fusionlint.model.values import Value

MANIFEST_FORMAT = 1


def _project_key(db_path: Path) -> str:
    return digest("index-project", FORMAT, str(Path(db_path).resolve()))


def manifest_path(cache_root: Path, db_path: Path) -> Path:
    return cache_files(cache_root, "index", "projects", f"{_project_key(db_path)}.json")


def entry_path(cache_root: Path, key: str) -> Path:
    return cache_files(cache_root, "index", "files", key[:2], f"{key}.json")


def entry_key(path: Path, content: str, args: list[str]) -> str:
    from fusionlint.facts.project_index import RECORD_FORMAT

    return digest("index-file", FORMAT, RECORD_FORMAT, fusionlint_key(), libclang_key(), str(path.resolve()),
                  content, list(args))


# -- using it ---------------------------------------------------------------------------------------
class ProjectIndex:
    """A project's index as ``check`` and ``facts`` use it: the contexts of a file's functions."""

    def __init__(self, root: Path, db_path: Path, files: dict[str, dict], includes: dict[str, dict] | None = None) -> None:
        self.root = root
        self.db_path = db_path
        self._files = files  # resolved path -> {"key", "content"}
        self._includes = includes or {}  # resolved path -> {"content", "headers": [real paths]}
        self._records: dict[str, dict | None] = {}
        self._valid: dict[str, bool] = {}
        self._calls: dict[str, list[tuple[str, dict]]] | None = None  # callee USR -> [(caller path, call)]
        self._templates: set[str] | None = None
        self._returns: dict[str, tuple[str, dict]] | None = None
        self.stale: set[str] = set()

    @classmethod
    def load(cls, root: Path, db_path: Path) -> ProjectIndex | None:
        data = read_json(manifest_path(root, db_path))
        if data is None or data.get("format") != MANIFEST_FORMAT or not isinstance(data.get("files"), dict):
            return None
        files = {p: e for p, e in data["files"].items()
                 if isinstance(e, dict) and isinstance(e.get("key"), str) and isinstance(e.get("content"), str)}
        includes = {p: e for p, e in (data.get("includes") or {}).items()
                    if isinstance(e, dict) and isinstance(e.get("content"), str) and isinstance(e.get("headers"), list)}
        return cls(root, db_path, files, includes)

    def _record(self, path: str) -> dict | None:
        """The file's record (also a stale one: what it defined), and whether it is still valid."""
        if path not in self._records:
            e = self._files.get(path)
            data = read_json(entry_path(self.root, e["key"])) if e else None
            ok = data is not None and data.get("key") == e["key"] and isinstance(data.get("record"), dict)
            self._records[path] = data["record"] if ok else None
            self._valid[path] = ok and file_hash(path) == e["content"] and _still_valid(data.get("deps"),
                                                                                          data.get("absent"))
        return self._records[path]

    def _all_calls(self) -> dict[str, list[tuple[str, dict]]]:
        if self._calls is None:
            self._calls = {}
            for path in self._files:
                record = self._record(path)
                for call in (record or {}).get("calls", ()):
                    if isinstance(call, dict) and isinstance(call.get("usr"), str):
                        self._calls.setdefault(call["usr"], []).append((path, call))
        return self._calls

    def _all_returns(self) -> dict[str, tuple[str, dict]]:
        """callee USR -> (defining file, what it returns) over the project's records."""
        if self._returns is None:
            self._returns = {}
            for path in self._files:
                for r in (self._record(path) or {}).get("returns", ()):
                    if isinstance(r, dict) and isinstance(r.get("usr"), str) and isinstance(r.get("value"), dict):
                        self._returns.setdefault(r["usr"], (path, r))
        return self._returns

    def contexts_for(self, path: Path) -> tuple[IndexContext, str]:
        """What the index says of the file's surroundings: the calls from other files of the
        functions ``path`` defines (by USR; ``[OUTSIDE]`` for a function the interpreter starts from
        that no file calls: an entry point of the project), what the functions of other files that
        it calls return; and a digest of both for the result cache's key ("" when there is none)."""
        from fusionlint.model.call_context import OUTSIDE, IndexContext, context_from_json

        me = str(path.resolve())
        record = self._record(me)
        if record is None:
            return IndexContext(), ""
        out: dict[str, list[CallContext]] = {}
        used: list[tuple[str, str, str]] = []
        calls = self._all_calls()
        for fn in record.get("functions", ()):
            usr = fn.get("usr")
            for caller, call in calls.get(usr, ()):
                if caller == me:
                    continue  # inlined by the interpreter already
                self._record(caller)
                if not self._valid.get(caller):
                    self.stale.add(caller)
                    continue
                try:
                    ctx = context_from_json(call["context"])
                except (KeyError, TypeError, ValueError):
                    continue
                out.setdefault(usr, []).append(_handed_over(ctx, fn.get("params", ())))
                used.append((usr, caller, json.dumps(call["context"], sort_keys=True)))
        templates = self._called_templates()
        for root in record.get("roots", ()):
            usr = root.get("usr") if isinstance(root, dict) else None
            if not isinstance(usr, str) or usr in out or calls.get(usr) or root.get("template") in templates:
                continue
            out[usr] = [OUTSIDE]  # an entry point: no file of the project calls it
            used.append((usr, "", "outside"))
        returns = self._returns_for(me, record, used)
        return IndexContext(out, returns), (digest("contexts", sorted(used)) if used else "")

    def _returns_for(self, me: str, record: dict, used: list[tuple[str, str, str]]) -> dict[str, Value]:
        """What the functions of other files that ``record``'s file calls return (their summaries,
        from files unchanged since the index), each entry also put in ``used``."""
        out: dict[str, Value] = {}
        summaries = self._all_returns()
        for call in record.get("calls", ()):
            usr = call.get("usr") if isinstance(call, dict) else None
            if usr in out or usr not in summaries:
                continue
            where, summary = summaries[usr]
            if where == me:
                continue
            if not self._valid.get(where):
                self.stale.add(where)
                continue
            try:
                out[usr] = _returned(summary, where)
            except (KeyError, TypeError, ValueError):
                continue
            used.append((usr, where, json.dumps(summary, sort_keys=True)))
        return out

    def includers_of(self, path: Path) -> tuple[list[str], str]:
        """The project's files that include ``path`` (a header, directly or not: the quoted includes
        ``fusionlint index`` recorded) and have not changed since, in path order; and a digest of them
        and their contents for the result cache's key ("" when there are none). A header's template
        GEMMs are read in their instantiations there."""
        me = os.path.realpath(path)
        out = []
        for other, e in sorted(self._includes.items()):
            if other == str(path.resolve()) or me not in e["headers"]:
                continue
            if file_hash(other) != e["content"]:
                self.stale.add(other)
                continue
            out.append(other)
        return out, (digest("includers", [(p, self._includes[p]["content"]) for p in out]) if out else "")

    def _called_templates(self) -> set[str]:
        """The templates any file of the project calls a specialization of (by USR)."""
        if self._templates is None:
            self._templates = {t for path in self._files
                               for t in (self._record(path) or {}).get("called_templates", ()) if isinstance(t, str)}
        return self._templates


def _handed_over(ctx: CallContext, params) -> CallContext:
    """The call's arguments as the callee's parameters get them: a known value as it is (with where
    the caller wrote it); a runtime object (pointer, handle, struct, reference) the caller could not
    hand over as in a run without a caller (None: a symbol of the callee's own); any other unknown
    value with its reason and the call it comes from."""
    from fusionlint.model.call_context import CallContext
    from fusionlint.model.values import Known, Unknown

    at = ctx.via[-1].at if ctx.via else None
    where = f" (at the call in {at.path}:{at.line})" if at is not None else ""
    args = []
    for i, v in enumerate(ctx.args):
        p = params[i] if i < len(params) else None
        if isinstance(v, Known):
            args.append(v)
        elif p is None or p.get("runtime"):
            args.append(None)
        else:
            reason = v.reason if isinstance(v, Unknown) else "not a compile-time value"
            args.append(Unknown(f"{p.get('name', '?')}: {reason}{where}", v.origin if isinstance(v, Unknown) else None,
                                str(p.get("type", ""))))
    return CallContext(ctx.via, tuple(args))


def _returned(summary: dict, where: str) -> Value:
    """A function's return summary as the value of a call of it: a known value keeps where it was
    written there; a value that is run-time data says which function returns it, and where."""
    from fusionlint.model.call_context import value_from_json
    from fusionlint.model.values import Known, Unknown

    value = value_from_json(summary["value"])
    label, line = str(summary["label"]), int(summary["line"])
    if isinstance(value, Known):  # (its origin says where)
        return Known(value.value, value.origin, ", ".join(x for x in (value.via, f"returned by {label}()") if x),
                     value.ctype)
    if not isinstance(value, Unknown) or not value.runtime:
        raise ValueError("a summary is a known value or run-time data")
    at = f"{label}() ({Path(where).name}:{line})"
    return Unknown(f"result of {label}()", value.origin, value.ctype, runtime=f"{value.runtime}, returned by {at}")


_loaded: dict[tuple[str, str], ProjectIndex | None] = {}


def project_index(root: Path, db_path: Path) -> ProjectIndex | None:
    """The index of the project whose compilation database is ``db_path`` (None: not built), once per run."""
    key = (str(root), str(Path(db_path).resolve()))
    if key not in _loaded:
        _loaded[key] = ProjectIndex.load(root, db_path)
    return _loaded[key]


def forget() -> None:
    """A new run reads the indexes afresh (in-process runs: the tests)."""
    _loaded.clear()


def stale_note(index: ProjectIndex) -> str | None:
    if not index.stale:
        return None
    names = ", ".join(sorted(os.path.relpath(p) for p in index.stale)[:3]) + (", ..." if len(index.stale) > 3 else "")
    return (f"project index: {len(index.stale)} calling or including file(s) changed since `fusionlint index` "
            f"({names}); their calls and instantiations are not used: run `fusionlint index` again")

