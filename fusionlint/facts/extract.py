"""One file's facts: read it, parse it with libclang, run the cuBLASLt reader and (for a file that
names cutlass or cute) the CUTLASS reader over the parsed unit."""
from __future__ import annotations

import codecs
import importlib
import re
import sys
import threading
from pathlib import Path

from fusionlint.frontend.clang.parse import ParseOptions, parse_file
from fusionlint.path_alias import renamed, utf8_alias

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up (~6 ms)

if TYPE_CHECKING:
    from collections.abc import Callable

    from fusionlint.frontend.cublaslt.api_data import ApiData
    from fusionlint.frontend.clang.parse import UnitRecord
    from fusionlint.model.call_context import IndexContext
    from fusionlint.model.cublaslt_facts import FileFacts

# What runs after the parse: imported while libclang parses (see extract_file), or up front by a
# process that forks several workers (check.py). The CUTLASS reader only for a file that names
# cutlass or cute (frontend/cutlass/reader.py reads nothing else).
CUBLASLT_EXTRACTORS = ("fusionlint.frontend.cublaslt.handler",)
EXTRACTORS = (*CUBLASLT_EXTRACTORS, "fusionlint.frontend.cutlass.reader")


def may_hold_cutlass(text: str) -> bool:
    """A cheap necessary condition of ``extract_cutlass``'s own test (``\\bcutlass\\b|\\bcute\\b``)."""
    return "cutlass" in text or "cute" in text


def may_reach_cutlass(text: str) -> bool:
    """``may_hold_cutlass``, or a quoted ``#include``: the file may instantiate a project header's
    CUTLASS templates (``extract_cutlass`` reads those headers and decides)."""
    return may_hold_cutlass(text) or _QUOTED_INCLUDE.search(text) is not None


_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"', re.M)


def import_extractors(names: tuple[str, ...] = EXTRACTORS) -> None:
    for name in names:
        importlib.import_module(name)


def _import_during_parse(text: str, preload: Callable[[], object] | None = None,
                         also: tuple[str, ...] = (), api: ApiData | None = None) -> threading.Thread | None:
    """Import the extractors, read the API model (``api``'s, else the shipped one) and call
    ``preload`` (read the rules) in a thread while the main thread parses (libclang releases the GIL
    while it parses, so this costs no wall time when a core is free); None when there is nothing to do."""
    names = (*(EXTRACTORS if may_hold_cutlass(text) else CUBLASLT_EXTRACTORS), *also)
    if preload is None and all(name in sys.modules for name in names):
        return None
    # what the parse itself imports or makes, first, so that the two threads never import the same
    # module at the same time
    import fusionlint.prefilter  # noqa: F401
    from fusionlint.frontend.clang.parse import stand_in_headers

    if api is not None:
        api.stand_ins()
    else:
        stand_in_headers()
    thread = threading.Thread(target=_quiet_import, args=(names, preload, api), name="fusionlint-imports",
                              daemon=True)
    thread.start()
    return thread


def _quiet_import(names: tuple[str, ...], preload: Callable[[], object] | None, api: ApiData | None) -> None:
    try:
        import_extractors(names)
        if api is not None:
            api.model()
        else:
            from fusionlint.model.cublaslt_api import load_model

            load_model()
        if preload is not None:
            preload()
    except BaseException:  # noqa: BLE001 - the main thread does it again and reports the error
        pass


class SkipFile(Exception):
    """A file that is not C++ source after all (e.g. binary content behind a .h name)."""


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise SkipFile("binary content (NUL bytes), not C++ source")
    # one '?' per byte that is not UTF-8, so columns stay the byte columns on disk
    return data.decode("utf-8", errors="one_byte_question_mark")


def _one_byte_per_bad_byte(err: UnicodeDecodeError) -> tuple[str, int]:
    return "?" * (err.end - err.start), err.end


codecs.register_error("one_byte_question_mark", _one_byte_per_bad_byte)


def extract_file(path: Path, options: ParseOptions, preload: Callable[[], object] | None = None,
                 also_import: tuple[str, ...] = (), on_parse: Callable[[UnitRecord], None] | None = None,
                 api: ApiData | None = None, contexts: IndexContext | None = None,
                 includers: list | None = None) -> FileFacts:
    """The file's facts. ``preload`` runs in a thread while libclang parses, and the modules named
    in ``also_import`` are imported there (``check_file`` reads the rules and imports their engine
    that way when they have not been read yet). ``on_parse`` is given the parse's record (what the
    result cache keeps: the include closure, the headers found nowhere, the arguments, the PCH) as
    soon as libclang is done, before the readers run. ``api``: the stand-in headers and API model
    to use (``frontend.cublaslt.api_data.ApiData``: ``check``'s copies from its cache), else the shipped ones.
    ``contexts``: calls of the file's functions from other files, and what the functions of other
    files it calls return (the project index).
    ``includers``: [(path, ParseOptions)] of the project's files that include this one (the project
    index): the file's template GEMMs that it leaves unbound are read where those files instantiate them."""
    text = _read_text(path)
    alias = utf8_alias(path)  # a name libclang cannot take (not UTF-8) is parsed under an alias
    importer = _import_during_parse(text, preload, also_import, api)
    try:
        unit = parse_file(alias or path, options, text=text, stand_ins=api.stand_ins() if api is not None else None)
    finally:
        if importer is not None:
            importer.join()
    if on_parse is not None:
        on_parse(unit.record())
    from fusionlint.frontend.cublaslt import handler as cublaslt

    facts = cublaslt.extract(unit, text, api.model() if api is not None else None,
                             **({"contexts": contexts} if contexts else {}))
    if any(d.severity in ("error", "fatal") for d in unit.diagnostics):  # definitions the errors made unreadable
        from fusionlint.frontend.clang.recovery import lost_functions

        facts.functions_not_read = [f.message() for f in lost_functions(unit.tu, str(unit.path), text,
                                                                       unit.diagnostics)]
    if may_reach_cutlass(text):
        try:
            from fusionlint.frontend.cutlass.reader import extract_cutlass

            facts.cutlass = extract_cutlass(unit, text)
            if includers and any(g.open_values() for g in facts.cutlass):
                facts.cutlass = _through_includers(facts.cutlass, str(unit.path), includers, api)
        except Exception as exc:  # noqa: BLE001 - a CUTLASS-reader bug must not hide the cuBLASLt findings
            facts.internal_errors.append(f"CUTLASS extraction failed: {type(exc).__name__}: {exc}".splitlines()[0])
    return renamed(facts, str(alias), str(path)) if alias else facts


MAX_INCLUDERS = 4  # includers whose instantiations of a header's template GEMMs are taken
MAX_INCLUDER_PARSES = 8  # includers parsed at most, to find them


def _through_includers(own: list, header: str, includers: list, api: ApiData | None) -> list:
    """``own`` (a header's CUTLASS GEMMs) with each GEMM that has open values (template parameters the
    header leaves unbound) replaced by its instantiations in the project files that include the header
    (the first ``MAX_INCLUDERS`` that instantiate any, of at most ``MAX_INCLUDER_PARSES`` parsed), each
    placed at the header's line and naming where it was instantiated. A GEMM no includer instantiates
    keeps its unknown values."""
    from fusionlint.frontend.cutlass.reader import extract_cutlass

    found: list = []
    used = 0
    for inc_path, inc_options in includers[:MAX_INCLUDER_PARSES]:
        if used >= MAX_INCLUDERS:
            break
        try:
            inc_text = _read_text(Path(inc_path))
            unit = parse_file(Path(inc_path), inc_options, text=inc_text,
                              stand_ins=api.stand_ins() if api is not None else None)
            got = extract_cutlass(unit, inc_text, header=header)
        except Exception:  # noqa: BLE001 - an includer that does not parse adds nothing
            continue
        if got:
            used += 1
            found += got
    # an includer that is itself a header may instantiate the GEMM with values still open (vLLM's dispatch
    # header leaves the epilogue to its own includer): where another includer binds it, that one is kept
    bound = {g.loc.line for g in found if not g.template_parameters_open()}
    found = [g for g in found if not (g.template_parameters_open() and g.loc.line in bound)]
    lines = {g.loc.line for g in found}
    kept = [g for g in own if not (g.open_values() and g.loc.line in lines)]
    seen = {(g.loc.line, g.context) for g in kept}
    return kept + [g for g in found if (g.loc.line, g.context) not in seen]
