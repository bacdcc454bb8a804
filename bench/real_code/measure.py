#!/usr/bin/env python3
"""Measure fusionlint on the real-code corpus: per file, what it extracted and what stayed unknown.

For every file of ``manifest.json`` marked ``measure`` (all files with ``--all``), with its group's
include directories and macros, it runs as users do (after ``fusionlint index`` of the measured files
and of those marked ``index``: translation units with no GEMM site whose functions the others call)

    python -m fusionlint.cli facts FILE                              (the configurations, as JSON)
    python -m fusionlint.cli check --output-format json FILE         (the findings)

and reports per file: the GEMM sites written in the file (a text scan), the configurations found
(cuBLASLt matmul calls / heuristic queries / descriptors configured without either; CUTLASS
GEMMs and their mode), the values resolved against those left unknown, the unknowns grouped by
reason, the findings (errors, warnings, FL000), any traceback, and the wall time of each process.
A file that fails to process is a row that says so, never a crash of this script.

What is counted as a value:

- cuBLASLt: every attribute of a configuration's objects that the code writes, i.e. each
  ``parameters`` field of ``fusionlint facts`` whose source is a create argument or a
  ``SetAttribute`` call (documented defaults, never written, are not counted), once per object
  and attribute (the heuristic query and the matmul of one GEMM share their objects); plus each
  ``SetAttribute`` call whose attribute id itself did not resolve (an unknown value). They are
  also counted in two kinds: extents (``SIZE_ATTRIBUTES``: rows, columns, leading dimensions,
  strides, workspace bytes), which in a library come from each call's tensors, and the rest
  (types, operations, epilogues, orders, whether a pointer is set), the choices rules judge.
- CUTLASS: every template argument fusionlint reports for a GEMM (the ``params`` of its
  mainloop, epilogue, kernel or 2.x GEMM, defaults included), once per part and argument. A shape
  with an extent fusionlint did not resolve (``[None, 128, 64]``) counts as unknown.

Every file is measured in source mode (no CUTLASS headers: CUTLASS GEMMs are read from the text);
the files of the CUTLASS groups are measured a second time in instantiated mode, with the CUTLASS
headers (``--cutlass DIR``, default ``.cutlass/``: an unpacked nvidia-cutlass wheel). ``--timeout``
is the time limit of one file in one mode, all its processes together: a file that runs over it is a
row saying so, and the run goes on. Nothing a file does stops the run: every failure is a row.

The check runs with a fresh, empty cache directory per file (the same cold run as ``--no-cache``;
the second, ``-v`` text run that lists the undecided checks is then a cache hit and costs no parse).

fusionlint itself is run from a snapshot of a commit (``--at``, default HEAD: ``git archive`` of
``fusionlint/`` and ``rulesets/``), so that edits in the working tree neither skew nor pollute the
measurement; ``--worktree`` measures the working tree as it is.

    python bench/real_code/fetch.py --mirror /work/.mirror          # the corpus, once
    python bench/real_code/measure.py --markdown bench/real_code/RESULTS.md --json /tmp/real.json
    python bench/real_code/measure.py --group cutlass-48 --mode source -j 2
    python bench/real_code/measure.py --render /tmp/real.json --markdown bench/real_code/RESULTS.md
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MANIFEST = HERE / "manifest.json"
CORPUS = ROOT / ".corpus"
CUTLASS_DEFAULT = ROOT / ".cutlass"

# --------------------------------------------------------------------------------------------
# GEMM sites in the text (comments and string literals removed)

_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', re.S)
SITE_PATTERNS = {
    "cublasLtMatmul": re.compile(r"\bcublasLtMatmul\s*\("),
    "cublasLtMatmulAlgoGetHeuristic": re.compile(r"\bcublasLtMatmulAlgoGetHeuristic\s*\("),
    "cutlass3": re.compile(r"\b(?:GemmUniversalAdapter|CollectiveBuilder|CollectiveMma)\s*<"),
    "cutlass2": re.compile(r"\bdevice::Gemm(?:Universal|Batched|SplitKParallel|Grouped|Array)?\s*<"),
}


def gemm_sites(text: str) -> dict[str, int]:
    """How often each kind of GEMM site is written in ``text`` (a text scan, no parse)."""
    code = _COMMENT_OR_STRING.sub(" ", text)
    return {k: n for k, pat in SITE_PATTERNS.items() if (n := len(pat.findall(code)))}


# --------------------------------------------------------------------------------------------
# Why a value is unknown

CATEGORIES = (  # (category, pattern); the first that matches
    ("attribute id unknown", re.compile(r"^attribute id: ")),
    # a shape whose facts give no reason for the extent left open (they do since the facts' ``open``)
    ("shape extent not resolved", re.compile(r"^an extent of `")),
    # a constant or global of a header found nowhere (its value is fixed but not known), also a
    # value decided by one (the facts' "decided by `X`: ..."): not run-time data
    ("constant of a header found nowhere", re.compile(r"declared by a header found nowhere")),
    ("caller parameter", re.compile(r"is a parameter of .*its value comes from the caller|^parameter \w+")),
    ("object member (set elsewhere)", re.compile(r"^member \w+ not set|^this$")),
    # a template whose only instantiations the preprocessor leaves out (``#ifdef`` a macro the build
    # does not define): no configuration of it is compiled, none to know
    ("not compiled in this build (preprocessor)", re.compile(r"instantiated only in code this build leaves out")),
    ("template / dependent type", re.compile(r"dependent type|template|typename|non-type|\bof \?", re.I)),
    ("decltype (compiler only)", re.compile(r"decltype\(")),
    ("CUTLASS headers needed", re.compile(r"only known with the CUTLASS headers", re.I)),
    ("chosen by the CUTLASS builder", re.compile(r"chosen by the collective builder|chosen by the builder", re.I)),
    ("opaque call result", re.compile(r"^result of .*\(\)|no return value from (?!.*the parser dropped)|call depth limit")),
    ("branch / condition", re.compile(r"set differently on paths|depends on the condition|set conditionally")),
    ("not visible (other TU, undeclared)", re.compile(
        r"not declared in this file|has no known value here|declared without a value|has no initializer|extern",
        re.I)),
    ("parse failure", re.compile(r"parse error|did not resolve|not evaluated|malformed|not typed by the parser|"
                                 r"the parser dropped", re.I)),
    ("other expression (array element, dereference, operator)", re.compile(
        r"dereference|array element|non-constant|of non-constants|unanalysed|not the address|"
        r"initializer list|operator|is runtime data", re.I)),
)

# An unknown value whose facts say which run-time data it is (``runtime``: fusionlint's
# ``Unknown.runtime``), by what that data is
RUNTIME = "run-time data: "
RUNTIME_INPUT = RUNTIME + "input of an entry point (no file of the project calls it)"
RUNTIME_BRANCH = RUNTIME + "a branch or loop on run-time data"
RUNTIME_OBJECT = RUNTIME + "computed from a tensor, pointer or other run-time object"


def classify_runtime(runtime: str) -> str:
    """The category of an unknown value that is run-time data (its facts' ``runtime`` phrase)."""
    if runtime.startswith("the condition "):
        return RUNTIME_BRANCH
    if "which no file of the project calls" in runtime:
        return RUNTIME_INPUT
    return RUNTIME_OBJECT


def classify(reason: str) -> str:
    for name, pat in CATEGORIES:
        if pat.search(reason):
            return name
    return "other"


_PARAM = re.compile(r"^(\w+) is a parameter of (.+?\(\)); its value comes from the caller")
_RESULT = re.compile(r"^result of (.+?\(\)) at line \d+")


def detail(reason: str) -> str:
    """A reason with the parts that differ per value folded: ``parameter of LtSgemm()``,
    ``result of pick_order()``; other reasons as they are (shortened)."""
    if m := _PARAM.match(reason):
        return f"parameter of {m.group(2)}"
    if m := _RESULT.match(reason):
        return f"result of {m.group(1)}"
    reason = re.sub(r"\s+", " ", reason)
    return reason if len(reason) <= 120 else reason[:117] + "..."


# --------------------------------------------------------------------------------------------
# Counting the facts JSON


def _objects_of(cfg: dict) -> dict[str, dict | None]:
    """The parameters' parts -> the object each is read from (``matmul_desc``, ``layout_A``...)."""
    out = {"matmul_desc": cfg.get("matmul_desc"), "preference": cfg.get("preference")}
    for role, obj in (cfg.get("layouts") or {}).items():
        out[f"layout_{role}"] = obj
    return out


ENTRY_POINT = "caller parameter: entry point, no caller in the corpus"
# cuBLASLt values that are extents (shapes, leading dimensions, strides, byte counts): in a library
# they come from the tensors of each call, i.e. run-time data; the rest are the choices a rule
# judges (types, operations, epilogues, orders, whether a pointer is set)
SIZE_ATTRIBUTES = frozenset({"ROWS", "COLS", "LD", "BATCH_COUNT", "STRIDED_BATCH_OFFSET", "PLANE_OFFSET",
                             "EPILOGUE_AUX_LD", "EPILOGUE_AUX_BATCH_STRIDE", "BIAS_BATCH_STRIDE",
                             "MAX_WORKSPACE_BYTES", "SM_COUNT_TARGET"})


def count_facts(entries: list[dict], entry_points: frozenset[str] = frozenset()) -> dict:
    """Counts over ``fusionlint facts`` JSON of one file (see the module doc for what a value is).
    ``entry_points``: names of the functions no file of the corpus calls (the project index), whose
    parameters are the inputs of a library's entry point (sizes of tensors, flags of a model)."""
    kinds: Counter = Counter()
    gemms: set = set()
    cut: Counter = Counter()
    cut_modes: Counter = Counter()
    seen: set = set()
    resolved = {"cublaslt": 0, "cutlass": 0}
    unknown = {"cublaslt": 0, "cutlass": 0}
    by_kind = {"size": [0, 0], "choice": [0, 0]}  # cuBLASLt values: [resolved, unknown] per kind
    reasons: Counter = Counter()  # (library, category) -> n
    details: Counter = Counter()  # (library, category, detail) -> n
    unknown_where: dict = {}  # (library, category, detail) -> first "line field" seen
    diagnostics = 0
    parse_errors_nearby: set = set()
    missing_headers: set = set()
    headers: dict = {}

    def unknown_value(lib: str, reason: str, where: str, runtime: str = "") -> None:
        unknown[lib] += 1
        cat = classify_runtime(runtime) if runtime else classify(reason)
        if runtime:
            reason = f"{reason} (run-time data: {runtime})"
        elif cat == "caller parameter" and (m := _PARAM.match(reason)) and m.group(2)[:-2] in entry_points:
            cat = ENTRY_POINT
        reasons[(lib, cat)] += 1
        key = (lib, cat, detail(reason))
        details[key] += 1
        unknown_where.setdefault(key, where)

    for e in entries:
        missing_headers.update(e.get("missing_headers") or ())
        headers = e.get("headers") or headers
        parse_errors_nearby.update(e.get("parse_errors_nearby") or ())
        if e.get("library") == "cutlass":
            cut[f"{e.get('api')} {e.get('kind')}"] += 1
            cut_modes[e.get("mode")] += 1
            diagnostics += len(e.get("diagnostics") or ())
            ctx = e.get("context") or ""
            for part in ("mainloop", "epilogue", "kernel", "gemm"):
                p = e.get(part)
                if not p:
                    continue
                loc = p.get("loc") or {}
                for name, v in (p.get("params") or {}).items():
                    key = ("cutlass", ctx, part, loc.get("line"), loc.get("column"), name)
                    if key in seen:
                        continue
                    seen.add(key)
                    where = f"line {loc.get('line', e.get('line'))} {part}.{name}"
                    if "unknown" in v:
                        unknown_value("cutlass", str(v["unknown"]), where)
                    elif _open_extent(v.get("value")):  # a shape with an extent not resolved: not resolved
                        unknown_value("cutlass", f"{name} {v['open']}" if v.get("open") else
                                      f"an extent of `{v.get('written') or name}` is not resolved", where)
                    else:
                        resolved["cutlass"] += 1
            continue
        kinds[e.get("kind")] += 1
        objs = _objects_of(e)
        ids = tuple((o or {}).get("id") for o in (objs["matmul_desc"], *(objs.get(f"layout_{r}") for r in "ABCD")))
        gemms.add(ids)
        for part, fields in (e.get("parameters") or {}).items():
            obj = objs.get(part) or {}
            for name, v in fields.items():
                if v.get("source") == "default":
                    continue
                key = ("cublaslt", obj.get("id"), part.split("_")[0] if part.startswith("layout_") else part, name)
                if key in seen:
                    continue
                seen.add(key)
                kind = by_kind["size" if name in SIZE_ATTRIBUTES else "choice"]
                if "unknown" in v:
                    at = (v.get("at") or v.get("origin") or {}).get("line", e.get("line"))
                    unknown_value("cublaslt", str(v["unknown"]), f"line {at} {part}.{name}", str(v.get("runtime") or ""))
                    kind[1] += 1
                else:
                    resolved["cublaslt"] += 1
                    kind[0] += 1
        for obj in objs.values():
            for s in (obj or {}).get("sets") or ():
                if s.get("attribute"):
                    continue
                key = ("cublaslt-set", obj.get("id"), (s.get("site") or {}).get("line"), (s.get("site") or {}).get("column"))
                if key in seen:
                    continue
                seen.add(key)
                av = s.get("attribute_value") or {}
                line = (s.get("site") or {}).get("line")
                unknown_value("cublaslt", f"attribute id: {av.get('unknown', 'not an attribute')}",
                              f"line {line} {s.get('function')}")
                by_kind["choice"][1] += 1
    return {
        "cublaslt": {"matmul": kinds.get("matmul", 0), "heuristic": kinds.get("heuristic", 0),
                     "descriptor": kinds.get("descriptor", 0), "gemms": len(gemms)},
        "cutlass": {"gemms": sum(cut.values()), "kinds": dict(cut), "modes": dict(cut_modes),
                    "diagnostics": diagnostics},
        "resolved": resolved, "unknown": unknown, "cublaslt_by_kind": by_kind,
        "reasons": [{"library": lib, "category": cat, "count": n} for (lib, cat), n in reasons.most_common()],
        "details": [{"library": lib, "category": cat, "detail": d, "count": n, "first": unknown_where[(lib, cat, d)]}
                    for (lib, cat, d), n in details.most_common()],
        "parse_errors_nearby": sorted(parse_errors_nearby),
        "missing_headers": sorted(missing_headers),
        "headers": headers,
    }


def _open_extent(value) -> bool:
    """Is ``value`` a shape (a list, nested or not) with an extent that is None?"""
    return isinstance(value, list) and any(x is None or _open_extent(x) for x in value)


def summarize_findings(findings: list[dict]) -> dict:
    sev = Counter(f.get("severity") for f in findings)
    codes = Counter(f.get("code") for f in findings)
    fl000 = [f"{f.get('line')}: {f.get('message')}" for f in findings if f.get("code") == "FL000"]
    return {"errors": sev.get("error", 0), "warnings": sev.get("warning", 0), "codes": dict(sorted(codes.items())),
            "fl000": fl000,
            "list": [{"line": f.get("line"), "code": f.get("code"), "message": (f.get("message") or "")[:300]}
                     for f in findings]}


_UNDECIDED = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): undecided: (?P<code>FL\d+)")


_NOT_FOUND = re.compile(r"^fusionlint: note: .+?:\d+: header '(?P<h>[^']+)' not found")


def headers_not_found(stderr: str) -> list[str]:
    """The headers ``check`` noted as found nowhere (parsed as empty stand-ins), in order."""
    return list(dict.fromkeys(m.group("h") for line in stderr.splitlines() if (m := _NOT_FOUND.match(line))))


def count_undecided(stderr: str) -> dict:
    codes = Counter(m.group("code") for line in stderr.splitlines() if (m := _UNDECIDED.match(line)))
    return {"total": sum(codes.values()), "codes": dict(sorted(codes.items()))}


# --------------------------------------------------------------------------------------------
# Running fusionlint


def run(cmd: list[str], *, env: dict, timeout: float) -> tuple[int | None, str, str, float]:
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, errors="replace",
                           timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return None, out, err + f"\n[measure.py: killed after {timeout:.0f} s]", time.monotonic() - t
    return p.returncode, p.stdout, p.stderr, time.monotonic() - t


def _tracebacks(*texts: str) -> list[str]:
    out = []
    for text in texts:
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("Traceback (most recent call last)"):
                last = next((ln for ln in lines[i + 1:] if ln and not ln.startswith(" ")), "?")
                out.append(last.strip()[:300])
    return out


def _internal_errors(stderr: str, path: str) -> list[str]:
    """``fusionlint: FILE: ExcName: ...`` lines of ``facts`` (a file it could not read)."""
    pat = re.compile(rf"^fusionlint: {re.escape(path)}: (?!skipped)(.*)$")
    return [m.group(1)[:300] for line in stderr.splitlines() if (m := pat.match(line))]


def fusionlint_cmd(python: str) -> list[str]:
    return [python, "-m", "fusionlint.cli"]


def measure_file(rel: str, *, flags: list[str], env: dict, python: str = sys.executable,
                 timeout: float = 300.0, undecided: bool = True, index: "CorpusIndex | None" = None) -> dict:
    """One file: facts, check (and the -v text pass for the undecided checks); never raises.

    ``timeout`` is the time limit of the whole file: each process gets what the earlier ones left
    (``check`` is also given it as its own ``--timeout``, so that a slow parse is its FL000, not a
    kill), and a process that would start with less than a second left is not run."""
    row: dict = {"path": rel, "flags": flags, "problems": [], "tracebacks": [], "internal_errors": []}
    deadline = time.monotonic() + timeout
    path = ROOT / rel
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        row["problems"].append(f"cannot read: {exc}")
        return row
    row["lines"] = text.count("\n") + (not text.endswith("\n"))
    row["sites"] = gemm_sites(text)
    base = fusionlint_cmd(python)

    def left() -> float:
        return deadline - time.monotonic()

    def timed_out(what: str) -> None:
        row["timed_out"] = True
        row["problems"].append(f"{what}: time limit ({timeout:.0f} s for the file) reached")

    with_index = index.flags() if index is not None else []
    rc, out, err, secs = run([*base, "facts", *with_index, *flags, rel], env=env, timeout=max(left(), 1.0))
    row["facts_seconds"] = round(secs, 2)
    row["facts_rc"] = rc
    row["tracebacks"] += _tracebacks(out, err)
    row["internal_errors"] = _internal_errors(err, rel)
    if rc is None:
        row["facts"] = None
        timed_out("facts")
    else:
        try:
            entries = json.loads(out) if out.strip() else []
            if not isinstance(entries, list):
                raise ValueError("not a list")
            row["facts"] = count_facts(entries, index.entry_points if index is not None else frozenset())
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            row["facts"] = None
            row["problems"].append(f"facts: no JSON ({type(exc).__name__}: {exc}); rc {rc}; "
                                   + (err.strip().splitlines() or ["no stderr"])[-1][:200])
        if rc not in (0, 1):
            row["problems"].append(f"facts exited {rc}: " + _last_error(err))

    if left() < 1.0:
        row["check"] = None
        timed_out("check not run")
        return row
    with tempfile.TemporaryDirectory(prefix="fl-measure-cache-") as cache:
        db = []
        if index is not None:  # a cold check that has the project index (and nothing else) in its cache
            index.copy_into(Path(cache))
            db = ["-p", str(index.db)]
        common = ["--no-pch", "--cache-dir", cache, "-j", "1", "--exit-zero", "--timeout", str(max(int(left()), 1)),
                  *db, *flags, rel]
        # --no-pch: a cold run as --no-cache makes it (a fresh cache directory would still build a PCH)
        rc, out, err, secs = run([*base, "check", "--output-format", "json", "-q", *common], env=env,
                                 timeout=max(left(), 1.0) + 5.0)
        row["check_seconds"] = round(secs, 2)
        row["check_rc"] = rc
        row["tracebacks"] += _tracebacks(out, err)
        row["headers_not_found"] = headers_not_found(err)
        if rc is None:
            row["check"] = None
            timed_out("check")
            return row
        try:
            findings = json.loads(out) if out.strip() else []
            row["check"] = summarize_findings(findings)
        except (ValueError, TypeError, AttributeError) as exc:
            row["check"] = None
            row["problems"].append(f"check: no JSON ({type(exc).__name__}); rc {rc}; "
                                   + (err.strip().splitlines() or ["no stderr"])[-1][:200])
        if rc not in (0,):
            row["problems"].append(f"check exited {rc}: " + _last_error(err))
        if undecided and row.get("check") is not None and left() >= 1.0:
            rc2, _, err2, secs2 = run([*base, "check", "--output-format", "text", "-v", *common], env=env,
                                      timeout=max(left(), 1.0))
            if rc2 is not None:
                row["undecided"] = count_undecided(err2)
            row["undecided_seconds"] = round(secs2, 2)
    return row


# --------------------------------------------------------------------------------------------
# The fusionlint under test


def snapshot(commit: str, dest: Path) -> Path:
    """``fusionlint/`` and ``rulesets/`` of ``commit`` (rulesets as ``fusionlint/rulesets``, where an
    installed package has them), byte-compiled."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "fusionlint", "rulesets"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    shutil.move(str(dest / "rulesets"), str(dest / "fusionlint" / "rulesets"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(dest / "fusionlint")], check=True)
    return dest


def git(*args: str) -> str:
    r = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False)
    return r.stdout.strip()


def environment(env: dict, python: str) -> dict:
    probe = ("import json\n"
             "from fusionlint.frontend import toolchain\n"
             "d = toolchain.discover(True)\n"
             "print(json.dumps({'cuda headers': [str(p) for p in d.cuda], "
             "'cublas headers': [str(p) for p in d.cublas] or 'none (fusionlint stand-in)', "
             "'cutlass headers found by fusionlint itself': [str(p) for p in d.cutlass] or 'none'}))")
    r = subprocess.run([python, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    try:
        info = json.loads(r.stdout)
    except ValueError:
        info = {}
    try:
        from importlib.metadata import version

        info["libclang"] = f"libclang {version('libclang')} (PyPI)"
    except Exception:  # noqa: BLE001
        pass
    info.update({"python": platform.python_version(), "cores": os.cpu_count(),
                 "load_average_at_start": [round(x, 2) for x in os.getloadavg()]})
    return info


# --------------------------------------------------------------------------------------------
# Report


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f} %" if b else "—"


def _cell_configs(f: dict | None) -> str:
    if not f:
        return "—"
    c = f["cublaslt"]
    parts = []
    if c["matmul"] or c["heuristic"] or c["descriptor"]:
        parts.append(f"Lt {c['gemms']} ({c['matmul']} mm / {c['heuristic']} heur / {c['descriptor']} desc)")
    g = f["cutlass"]
    if g["gemms"]:
        modes = "/".join(f"{m[:4]}" for m in sorted(g["modes"]))
        parts.append(f"CUTLASS {g['gemms']} ({modes})")
    return "; ".join(parts) or "0"


def _cell_values(f: dict | None) -> str:
    if not f:
        return "—"
    r = f["resolved"]["cublaslt"] + f["resolved"]["cutlass"]
    u = f["unknown"]["cublaslt"] + f["unknown"]["cutlass"]
    return f"{r}/{r + u} ({_pct(r, r + u)})" if r + u else "—"


def _cell_reasons(f: dict | None, top: int = 3) -> str:
    if not f or not f["reasons"]:
        return ""
    agg: Counter = Counter()
    for x in f["reasons"]:
        agg[x["category"]] += x["count"]
    return ", ".join(f"{cat} {n}" for cat, n in agg.most_common(top))


def _cell_findings(c: dict | None) -> str:
    if c is None:
        return "—"
    codes = ", ".join(f"{k}×{v}" if v > 1 else k for k, v in c["codes"].items())
    return f"{c['errors']} E / {c['warnings']} W" + (f" ({codes})" if codes else "")


def _flags_cell(row: dict) -> str:
    bad = []
    if row.get("tracebacks"):
        bad.append(f"traceback ×{len(row['tracebacks'])}")
    if row.get("internal_errors"):
        bad.append("facts error")
    if (row.get("check") or {}).get("fl000"):
        bad.append("FL000")
    if row.get("timed_out"):
        bad.append("time limit")
    elif row.get("problems"):
        bad.append("problem")
    if row.get("sites") and not _has_configs(row):
        bad.append("site, no config")
    return ", ".join(bad) or "ok"


def _has_configs(row: dict) -> bool:
    f = row.get("facts")
    return bool(f and (f["cublaslt"]["gemms"] or f["cutlass"]["gemms"]))


def _short(path: str) -> str:
    """``.corpus/OWNER/REPO/PATH`` -> ``PATH`` (other paths as they are)."""
    parts = Path(path).parts
    return "/".join(parts[3:]) if len(parts) > 3 and parts[0] == ".corpus" else path


def _name(row: dict) -> str:
    """The file as the report names it: its path in its repository."""
    return row.get("display") or _short(row["path"])


def _row_seconds(r: dict) -> float:
    return sum(r.get(k) or 0.0 for k in ("facts_seconds", "check_seconds", "undecided_seconds"))


def totals(rows: list[dict]) -> dict:
    t = {"files": len(rows), "with_sites": 0, "with_configs": 0, "sites_without_configs": [], "lt_gemms": 0,
         "lt_matmul": 0, "lt_heuristic": 0, "lt_descriptor": 0, "cutlass_gemms": 0,
         "resolved": Counter(), "unknown": Counter(), "reasons": Counter(), "errors": 0, "warnings": 0,
         "lt_kinds": {"size": [0, 0], "choice": [0, 0]},
         "codes": Counter(), "fl000": 0, "tracebacks": 0, "problems": 0, "timed_out": 0, "undecided": 0,
         "facts_seconds": 0.0, "check_seconds": 0.0, "seconds": 0.0, "slowest": None}
    for r in rows:
        f = r.get("facts")
        if r.get("sites"):
            t["with_sites"] += 1
            if _has_configs(r):
                t["with_configs"] += 1
            else:
                t["sites_without_configs"].append(_name(r))
        if f:
            t["lt_gemms"] += f["cublaslt"]["gemms"]
            t["lt_matmul"] += f["cublaslt"]["matmul"]
            t["lt_heuristic"] += f["cublaslt"]["heuristic"]
            t["lt_descriptor"] += f["cublaslt"]["descriptor"]
            t["cutlass_gemms"] += f["cutlass"]["gemms"]
            t["resolved"].update(f["resolved"])
            t["unknown"].update(f["unknown"])
            for kind, (r_, u_) in (f.get("cublaslt_by_kind") or {}).items():
                t["lt_kinds"][kind][0] += r_
                t["lt_kinds"][kind][1] += u_
            for x in f["reasons"]:
                t["reasons"][(x["library"], x["category"])] += x["count"]
        c = r.get("check")
        if c:
            t["errors"] += c["errors"]
            t["warnings"] += c["warnings"]
            t["codes"].update(c["codes"])
            t["fl000"] += len(c["fl000"])
        t["tracebacks"] += len(r.get("tracebacks") or ())
        t["problems"] += bool(r.get("problems"))
        t["timed_out"] += bool(r.get("timed_out"))
        t["undecided"] += (r.get("undecided") or {}).get("total", 0)
        t["facts_seconds"] += r.get("facts_seconds") or 0.0
        t["check_seconds"] += r.get("check_seconds") or 0.0
        secs = _row_seconds(r)
        t["seconds"] += secs
        if t["slowest"] is None or secs > t["slowest"][1]:
            t["slowest"] = (_name(r), secs)
    return t


MODES = {"source": "source mode (no CUTLASS headers: CUTLASS GEMMs read from the text)",
         "instantiated": "instantiated mode (the CUTLASS groups again, with the CUTLASS headers)"}


def _totals_lines(t: dict) -> list[str]:
    lt_r, lt_u = t["resolved"]["cublaslt"], t["unknown"]["cublaslt"]
    ct_r, ct_u = t["resolved"]["cutlass"], t["unknown"]["cutlass"]
    kinds = t.get("lt_kinds") or {}
    ch, sz = kinds.get("choice", [0, 0]), kinds.get("size", [0, 0])
    slow = t["slowest"]
    rt_lt, rt_ct = (sum(n for (lib, cat), n in t["reasons"].items() if lib == which and cat.startswith(RUNTIME))
                    for which in ("cublaslt", "cutlass"))
    return [
        f"- files measured: {t['files']}; with a GEMM site in their text: {t['with_sites']}; of those, yielding "
        f"configurations: {t['with_configs']}; GEMM site but no configuration: {len(t['sites_without_configs'])}"
        + (f" ({', '.join('`' + p + '`' for p in t['sites_without_configs'])})"
           if t["sites_without_configs"] else ""),
        f"- cuBLASLt: {t['lt_gemms']} GEMMs ({t['lt_matmul']} matmul calls, {t['lt_heuristic']} heuristic queries, "
        f"{t['lt_descriptor']} descriptors without either); CUTLASS: {t['cutlass_gemms']} GEMMs",
        f"- **cuBLASLt attribute values resolved: {lt_r} of {lt_r + lt_u} ({_pct(lt_r, lt_r + lt_u)})**",
        f"  - of them types, operations, epilogues, orders and pointers: {ch[0]} of {sum(ch)} ({_pct(ch[0], sum(ch))}); "
        f"extents (rows, columns, leading dimensions, strides, workspace bytes): {sz[0]} of {sum(sz)} "
        f"({_pct(sz[0], sum(sz))})",
        f"- **CUTLASS template arguments resolved: {ct_r} of {ct_r + ct_u} ({_pct(ct_r, ct_r + ct_u)})**",
        f"- all values resolved: {lt_r + ct_r} of {lt_r + lt_u + ct_r + ct_u} "
        f"({_pct(lt_r + ct_r, lt_r + lt_u + ct_r + ct_u)})",
        f"- unknown values whose facts name the run-time data they are: {rt_lt + rt_ct} of {lt_u + ct_u} "
        f"({_pct(rt_lt + rt_ct, lt_u + ct_u)}; cuBLASLt {rt_lt} of {lt_u}, CUTLASS {rt_ct} of {ct_u}); "
        "the other unknowns' reasons are in the table below",
        f"- findings: {t['errors']} errors, {t['warnings']} warnings"
        + (f" ({', '.join(f'{k}×{v}' for k, v in sorted(t['codes'].items()))})" if t["codes"] else "")
        + f"; FL000: {t['fl000']}; tracebacks: {t['tracebacks']}; files over the time limit: {t['timed_out']}; "
        f"files with a problem: {t['problems']}",
        f"- checks left undecided by unknown values: {t['undecided']}",
        f"- time: {t['seconds']:.1f} s in all (facts {t['facts_seconds']:.1f} s, cold check {t['check_seconds']:.1f} s; "
        "wall clock, summed over files)"
        + (f"; slowest file `{slow[0]}` {slow[1]:.1f} s" if slow else ""),
    ]


def _reasons_table(t: dict) -> list[str]:
    out = ["| reason | cuBLASLt | CUTLASS | all |", "|---|---|---|---|"]
    cats: Counter = Counter()
    for (_lib, cat), n in t["reasons"].items():
        cats[cat] += n
    for cat, n in cats.most_common():
        out.append(f"| {cat} | {t['reasons'].get(('cublaslt', cat), 0)} | {t['reasons'].get(('cutlass', cat), 0)} | {n} |")
    return out


def _index_lines(meta: dict) -> list[str]:
    """The project index's section: per mode, its files, time and summary, against one nvcc build."""
    runs = meta.get("project index")
    if not runs:
        return ["", "## Project index", "", "Not built (`--no-index`): each file was measured alone."]
    out = ["", "## Project index", "",
           "One `fusionlint index` over the measured files of each mode (a compile_commands.json of them with "
           "their groups' flags), cold; every file's `facts` and `check` then use it.", "",
           "| mode | files | parallel parses | seconds | summary | problems |", "|---|---|---|---|---|---|"]
    for r in runs:
        probs = "; ".join(r.get("problems", []) + [f"traceback: {t}" for t in r.get("tracebacks", [])]) or "none"
        out.append(f"| {r['mode']} | {r['files']} | {r['jobs']} | {r['seconds']} | {r['summary']} | {probs} |")
    nv = meta.get("nvcc baseline")
    if nv and "seconds" in nv:
        total = sum(r["seconds"] for r in runs)
        verdict = "less" if total < nv["seconds"] else "**more**"
        out += ["", f"One `nvcc -c` of `{nv['file']}` here (the CUTLASS-3 kernel of bench/run.py, -O2 -arch=sm_90a): "
                f"{nv['seconds']} s (rc {nv['rc']}); the index over the corpus took {total:.1f} s, {verdict} than "
                f"that ({nv['seconds'] / total:.1f}x)." if total else ""]
    elif nv:
        out += ["", f"nvcc baseline not measured: {nv.get('skipped', '?')}"]
    return out


def render_markdown(rows: list[dict], meta: dict, top_details: int = 8,
                    title: str = "fusionlint on real code") -> str:
    modes = list(dict.fromkeys(r.get("mode", "source") for r in rows)) or ["source"]
    out = [f"# {title}", "",
           "Written by `python bench/real_code/measure.py --markdown bench/real_code/RESULTS.md`; the corpus is "
           "`bench/real_code/manifest.json` (fetched by `bench/real_code/fetch.py` into `.corpus/`, never committed). "
           "How values are counted: the docstring of `measure.py`.", "",
           "## Run", ""]
    for k, v in meta.items():
        if k not in ("project index", "nvcc baseline"):
            out.append(f"- {k}: {v}")
    out += _index_lines(meta)
    out += ["", "## Totals", ""]
    for mode in modes:
        sub = [r for r in rows if r.get("mode", "source") == mode]
        t = totals(sub)
        out += [f"### {MODES.get(mode, mode)}", "", *_totals_lines(t), "", "Unknown values by reason:", "",
                *_reasons_table(t), ""]
    out += ["## Per file", "",
            "Mode: src = source mode, inst = with the CUTLASS headers. Sites: GEMM calls/templates written in the file "
            "(text scan). Configurations: cuBLASLt GEMMs (matmul calls / heuristic queries / descriptors without "
            "either), CUTLASS GEMMs (inst = instantiated with the CUTLASS headers, synt = read from the text). Headers "
            "not found: included headers found nowhere, parsed as empty stand-ins (`check`'s notes). Values: resolved / "
            "counted. Times: wall clock of the `facts` process, the cold `check` process, and the whole file "
            "(with the `-v` pass).", "",
            "| group | file | mode | lines | headers not found | sites | configurations | values resolved | "
            "unknown: top reasons | findings | undecided | status | facts s | check s | file s |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        sites = sum((r.get("sites") or {}).values())
        und = (r.get("undecided") or {}).get("total", "—")
        nf = r.get("headers_not_found")
        mode = {"source": "src", "instantiated": "inst"}.get(r.get("mode", "source"), r.get("mode"))
        out.append(f"| {r.get('group', '')} | `{_name(r)}` | {mode} | {r.get('lines', '—')} | "
                   f"{len(nf) if nf is not None else '—'} | {sites} | "
                   f"{_cell_configs(r.get('facts'))} | {_cell_values(r.get('facts'))} | {_cell_reasons(r.get('facts'))} | "
                   f"{_cell_findings(r.get('check'))} | {und} | {_flags_cell(r)} | {r.get('facts_seconds', '—')} | "
                   f"{r.get('check_seconds', '—')} | {_row_seconds(r):.1f} |")
    out += ["", "## Unknown values per file", "",
            f"The headers found nowhere, and the {top_details} most frequent reasons per file (folded: `parameter of f()` "
            "stands for every parameter of `f` that a value came from), with the first place each was seen.", ""]
    for r in rows:
        f = r.get("facts")
        nf = r.get("headers_not_found") or []
        if not (f and f["details"]) and not nf:
            continue
        out.append(f"### `{_name(r)}` ({r.get('mode', 'source')})")
        out.append("")
        if nf:
            out.append(f"- headers not found ({len(nf)}): " + ", ".join(f"`{h}`" for h in nf))
        for d in (f["details"] if f else [])[:top_details]:
            lib = "Lt" if d["library"] == "cublaslt" else "CUTLASS"
            out.append(f"- {d['count']}× {lib}, {d['category']}: {d['detail']} ({d['first']})")
        if f and len(f["details"]) > top_details:
            rest = sum(d["count"] for d in f["details"][top_details:])
            out.append(f"- … {len(f['details']) - top_details} more reasons, {rest} values")
        out.append("")
    problems = [r for r in rows if r.get("problems") or r.get("tracebacks") or r.get("internal_errors")
                or (r.get("check") or {}).get("fl000")]
    if problems:
        out += ["## Problems", ""]
        for r in problems:
            items = (r.get("problems") or []) + [f"traceback: {x}" for x in r.get("tracebacks") or []] + \
                    [f"facts: {x}" for x in r.get("internal_errors") or []] + \
                    [f"FL000 {x}" for x in (r.get("check") or {}).get("fl000") or []]
            out.append(f"- `{_name(r)}` ({r.get('mode', 'source')}): " + "; ".join(items))
        out.append("")
    findings = [(r, x) for r in rows for x in ((r.get("check") or {}).get("list") or ())]
    if findings:
        out += ["## Findings", ""]
        for r, x in findings:
            out.append(f"- `{_name(r)}:{x['line']}` ({r.get('mode', 'source')}) {x['code']}: {x['message']}")
        out.append("")
    return "\n".join(out)


# --------------------------------------------------------------------------------------------


def group_flags(man: dict, group: str, corpus: Path, cutlass: list[Path]) -> list[str]:
    g = man.get("groups", {}).get(group, {})
    flags = []
    for inc in g.get("include", ()):
        flags += ["-I", os.path.relpath(corpus / inc, ROOT)]
    if g.get("cutlass"):
        for d in cutlass:
            flags += ["-I", os.path.relpath(d, ROOT) if d.is_relative_to(ROOT) else str(d)]
    for d in g.get("defines", ()):
        flags += ["-D", d]
    return flags


class CorpusIndex:
    """The project index of one mode's files (calls from other translation units): a
    compile_commands.json of every measured file with its group's flags, indexed once by
    ``fusionlint index`` into a cache directory of its own, which each file's ``facts`` reads and each
    cold ``check`` gets a copy of."""

    def __init__(self, work: Path, mode: str) -> None:
        self.mode = mode
        self.dir = work / f"index-{mode}"
        self.db = self.dir / "compile_commands.json"
        self.cache = self.dir / "cache"
        self.result: dict = {}
        self.entry_points: frozenset[str] = frozenset()

    def flags(self) -> list[str]:
        return ["-p", str(self.db), "--cache-dir", str(self.cache)]

    def _entry_points(self) -> frozenset[str]:
        """The functions reaching cuBLASLt that the index saw no call of from another file (the
        interpreter runs a call from the same file itself), by name."""
        functions: dict[str, str] = {}
        called: set[str] = set()
        for manifest in (self.cache / "v1" / "index" / "projects").glob("*.json"):
            try:
                files = json.loads(manifest.read_text(encoding="utf-8")).get("files", {})
            except (OSError, ValueError):
                continue
            for entry in files.values():
                key = entry.get("key", "") if isinstance(entry, dict) else ""
                try:
                    record = json.loads((self.cache / "v1" / "index" / "files" / key[:2] / f"{key}.json")
                                        .read_text(encoding="utf-8")).get("record", {})
                except (OSError, ValueError):
                    continue
                functions.update({f["usr"]: f["name"] for f in record.get("functions", ()) if "usr" in f})
                called.update(c.get("usr") for c in record.get("calls", ()))
        return frozenset(name for usr, name in functions.items() if usr not in called)

    def copy_into(self, cache: Path) -> None:
        src = self.cache / "v1" / "index"
        if src.is_dir():
            shutil.copytree(src, cache / "v1" / "index", dirs_exist_ok=True)

    def build(self, entries: list[tuple[str, list[str]]], *, env: dict, python: str, jobs: int,
              timeout: float) -> dict:
        """Write the database of ``entries`` (corpus path, flags) and index it; the outcome (files,
        seconds, the index's own summary line, problems) is also kept as ``result``."""
        self.dir.mkdir(parents=True, exist_ok=True)
        db = []
        for rel, flags in entries:
            compiler = "nvcc" if rel.endswith((".cu", ".cuh")) else "c++"
            db.append({"directory": str(ROOT), "file": rel,
                       "arguments": [compiler, "-std=c++17", *flags, "-c", rel]})
        self.db.write_text(json.dumps(db, indent=1) + "\n", encoding="utf-8")
        rc, out, err, secs = run([*fusionlint_cmd(python), "index", "-p", str(self.db), "--cache-dir",
                                  str(self.cache), "-j", str(max(jobs, 1))], env=env, timeout=timeout)
        lines = [x for x in (out + err).splitlines() if x.startswith("fusionlint: index: ")]
        self.result = {"mode": self.mode, "files": len(entries), "jobs": max(jobs, 1), "seconds": round(secs, 2),
                       "rc": rc, "summary": lines[-1][len("fusionlint: index: "):] if lines else "",
                       "problems": [x for x in err.splitlines() if "not indexed" in x][:20],
                       "tracebacks": _tracebacks(out, err)}
        self.entry_points = self._entry_points()
        self.result["entry_points"] = len(self.entry_points)
        if rc is None:
            self.result["problems"].append(f"index: time limit ({timeout:.0f} s) reached")
        elif rc != 0:
            self.result["problems"].append(f"index exited {rc}: " + (err.strip().splitlines() or ["no stderr"])[-1][:200])
        return self.result


def nvcc_baseline(cut: list[Path], env: dict, timeout: float = 900.0) -> dict:
    """One ``nvcc -c`` of a CUTLASS-3 kernel (kernels_ref/cutlass/bf16_coop_1x1.cu, the flags of
    bench/run.py's CUTLASS rows) on this machine: the time the project index is compared with."""
    nvcc = shutil.which("nvcc")
    src = ROOT / "kernels_ref" / "cutlass" / "bf16_coop_1x1.cu"
    if nvcc is None or not cut:
        return {"skipped": "no nvcc on PATH" if nvcc is None else "no CUTLASS headers"}
    with tempfile.TemporaryDirectory(prefix="fl-measure-nvcc-") as tmp:
        cmd = [nvcc, "-std=c++17", "-O2", "-arch=sm_90a", "--expt-relaxed-constexpr",
               *[a for d in cut for a in ("-I", str(d))], "-c", str(src), "-o", str(Path(tmp) / "k.o")]
        rc, _, err, secs = run(cmd, env=env, timeout=timeout)
    return {"file": os.path.relpath(src, ROOT), "seconds": round(secs, 2), "rc": rc,
            "error": (err.strip().splitlines() or [""])[-1][:200] if rc else ""}


def _last_error(err: str) -> str:
    """The last stderr line that is not a note (what a process that exited 2 said of why)."""
    lines = [x for x in err.strip().splitlines() if x.strip() and ": note: " not in x]
    return (lines or ["no stderr but notes"])[-1][:300]


def cutlass_dirs(arg: str | None) -> list[Path]:
    if arg == "none":
        return []
    base = Path(arg) if arg else CUTLASS_DEFAULT
    dirs = [d for d in (base / "include", base / "util" / "include", base / "tools" / "util" / "include") if d.is_dir()]
    if arg and not dirs:
        raise SystemExit(f"measure.py: {base}: no include/ (CUTLASS headers) there")
    return dirs


def plan(man: dict, files: list[dict], corpus: Path, cut: list[Path], modes: list[str]) -> list[tuple[dict, str, list[str]]]:
    """(manifest entry, mode, flags) for every measurement: each file in source mode (no CUTLASS
    headers), then the CUTLASS groups' files again in instantiated mode when ``cut`` has headers."""
    jobs = []
    if "source" in modes:
        jobs += [(f, "source", group_flags(man, f["group"], corpus, [])) for f in files]
    if "instantiated" in modes and cut:
        jobs += [(f, "instantiated", group_flags(man, f["group"], corpus, cut)) for f in files
                 if man.get("groups", {}).get(f["group"], {}).get("cutlass")]
    return jobs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", type=Path, default=MANIFEST)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--group", action="append", help="only this group (repeatable)")
    ap.add_argument("--file", action="append", help="only files whose path contains this (repeatable)")
    ap.add_argument("--all", action="store_true", help="also the files the manifest marks measure=false (headers)")
    ap.add_argument("--mode", action="append", choices=("source", "instantiated"),
                    help="source (every file, no CUTLASS headers) and/or instantiated (the CUTLASS groups with the "
                    "headers); default both")
    ap.add_argument("--cutlass", help="CUTLASS checkout for the instantiated mode (DIR/include, DIR/util/include or "
                    "DIR/tools/util/include; default .cutlass/ when present; 'none': no instantiated mode)")
    ap.add_argument("--no-cutlass", action="store_const", const="none", dest="cutlass")
    at = ap.add_mutually_exclusive_group()
    at.add_argument("--at", default="HEAD", help="the fusionlint commit to measure (default HEAD)")
    at.add_argument("--worktree", action="store_true", help="measure the working tree's fusionlint as it is")
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="time limit per file and mode, all its fusionlint processes together (default 300 s)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="files measured at a time (default 1)")
    ap.add_argument("--no-undecided", action="store_true", help="skip the -v pass that counts undecided checks")
    ap.add_argument("--no-index", action="store_true",
                    help="measure each file alone (no project index of the corpus: calls from other files unseen)")
    ap.add_argument("--index-jobs", type=int, default=os.cpu_count() or 1,
                    help="parallel parses of `fusionlint index` (default: all CPUs)")
    ap.add_argument("--nvcc-baseline", action="store_true",
                    help="also time one `nvcc -c` of a CUTLASS-3 kernel here, to compare the index time with")
    ap.add_argument("--title", default="fusionlint on real code", help="the report's heading")
    ap.add_argument("--markdown", type=Path, help="write the report as Markdown")
    ap.add_argument("--json", type=Path, help="write every row as JSON")
    ap.add_argument("--render", type=Path, metavar="JSON",
                    help="measure nothing: write the report of an earlier run's --json")
    args = ap.parse_args(argv)
    if args.render:
        saved = json.loads(args.render.read_text(encoding="utf-8"))
        report = render_markdown(saved["rows"], saved["meta"], title=args.title)
        if args.markdown:
            args.markdown.write_text(with_notes(report, args.markdown) + "\n", encoding="utf-8")
        else:
            print(report)
        return 0

    man = json.loads(args.manifest.read_text(encoding="utf-8"))
    files = [f for f in man["files"] if args.all or f.get("measure", True)]
    if args.group:
        files = [f for f in files if f["group"] in args.group]
    if args.file:
        files = [f for f in files if any(s in f"{f['repo']}/{f['path']}" for s in args.file)]
    if not files:
        raise SystemExit("measure.py: no file selected")
    missing = [f for f in files if not (args.corpus / f["repo"] / f["path"]).is_file()]
    if missing:
        raise SystemExit(f"measure.py: {len(missing)} corpus files missing (first: {missing[0]['repo']}/"
                         f"{missing[0]['path']}); run bench/real_code/fetch.py")
    cut = cutlass_dirs(args.cutlass)
    jobs = plan(man, files, args.corpus, cut, args.mode or ["source", "instantiated"])

    env = dict(os.environ)
    env.pop("FUSIONLINT_IN_PROCESS", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    tmp = None
    if args.worktree:
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--", "fusionlint", "rulesets"))
        under_test = f"working tree at {commit}" + (" (with uncommitted changes)" if dirty else "")
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    else:
        commit = git("rev-parse", args.at)
        if not commit:
            raise SystemExit(f"measure.py: {args.at}: not a commit")
        tmp = tempfile.mkdtemp(prefix="fl-measure-snap-")
        snapshot(commit, Path(tmp))
        under_test = f"{commit} (`git archive` snapshot of fusionlint/ and rulesets/)"
        env["PYTHONPATH"] = os.pathsep.join([tmp, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)

    meta = {"fusionlint commit measured": under_test,
            "commit subject": git("log", "-1", "--format=%s", commit)[:160],
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    meta.update(environment(env, sys.executable))
    meta["cutlass headers for the instantiated mode"] = ", ".join(str(d) for d in cut) or "none"
    meta["time limit per file and mode"] = f"{args.timeout:.0f} s; {max(args.jobs, 1)} file(s) at a time"
    rows: list = [None] * len(jobs)
    work = Path(tempfile.mkdtemp(prefix="fl-measure-work-"))
    indexes: dict[str, CorpusIndex] = {}
    if not args.no_index:
        # every measured file of the groups selected, whatever --file picked: the callers are part of the
        # project; so are the files marked index (a translation unit with no GEMM site: what it defines)
        in_groups = [f for f in man["files"] if (f.get("measure", True) or f.get("index"))
                     and f["group"] in {g[0]["group"] for g in jobs}]
        for mode in dict.fromkeys(m for _, m, _ in jobs):
            entries = [(os.path.relpath(args.corpus / f["repo"] / f["path"], ROOT), fl)
                       for f, m, fl in plan(man, in_groups, args.corpus, cut, [mode])]
            indexes[mode] = CorpusIndex(work, mode)
            r = indexes[mode].build(entries, env=env, python=sys.executable, jobs=args.index_jobs,
                                    timeout=args.timeout * 4)
            print(f"index ({mode}): {r['files']} files, {r['seconds']:.1f} s: {r['summary']}", file=sys.stderr, flush=True)
        meta["project index"] = [i.result for i in indexes.values()]
    if args.nvcc_baseline:
        meta["nvcc baseline"] = nvcc_baseline(cut, env)
        print(f"nvcc baseline: {meta['nvcc baseline']}", file=sys.stderr, flush=True)

    def one(i: int) -> dict:
        f, mode, flags = jobs[i]
        rel = os.path.relpath(args.corpus / f["repo"] / f["path"], ROOT)
        try:
            row = measure_file(rel, flags=flags, env=env, timeout=args.timeout, undecided=not args.no_undecided,
                               index=indexes.get(mode))
        except Exception as exc:  # noqa: BLE001 - a row that says so, not a crash
            row = {"path": rel, "flags": flags, "problems": [f"measure.py: {type(exc).__name__}: {exc}"]}
        row.update({"group": f["group"], "repo": f["repo"], "commit": f["commit"], "mode": mode, "display": f["path"]})
        fct = row.get("facts") or {}
        print(f"[{i + 1}/{len(jobs)}] {rel} ({mode}): {_cell_configs(fct or None)}; values {_cell_values(fct or None)}; "
              f"{_cell_findings(row.get('check'))}; {_flags_cell(row)}; {_row_seconds(row):.1f} s",
              file=sys.stderr, flush=True)
        return row

    def save_json(done: list[dict], partial: bool) -> None:
        if args.json:
            data = {"meta": dict(meta, partial=partial), "rows": done,
                    "totals": {m: _jsonable(totals([r for r in done if r["mode"] == m]))
                               for m in dict.fromkeys(r["mode"] for r in done)}}
            tmp_json = args.json.with_name(args.json.name + ".tmp")
            tmp_json.write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
            os.replace(tmp_json, args.json)

    try:
        if args.jobs > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=args.jobs) as pool:
                for i, row in zip(range(len(jobs)), pool.map(one, range(len(jobs)))):
                    rows[i] = row
                    save_json(rows[:i + 1], partial=True)  # an interrupted run keeps what it measured
        else:
            for i in range(len(jobs)):
                rows[i] = one(i)
                save_json(rows[:i + 1], partial=True)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    meta["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    meta["partial"] = False
    report = render_markdown(rows, meta, title=args.title)
    if args.markdown:
        args.markdown.write_text(with_notes(report, args.markdown) + "\n", encoding="utf-8")
    save_json(rows, partial=False)
    if not args.markdown:
        print(report)
    return 0


NOTES = re.compile(r"<!-- notes:begin -->.*?<!-- notes:end -->", re.S)


def with_notes(report: str, path: Path) -> str:
    """``report`` with the hand-written block between ``<!-- notes:begin -->`` and
    ``<!-- notes:end -->`` of the file it replaces carried over (at the end)."""
    try:
        old = path.read_text(encoding="utf-8")
    except OSError:
        return report
    m = NOTES.search(old)
    return f"{report}\n{m.group(0)}" if m else report


def _jsonable(t: dict) -> dict:
    out = {}
    for k, v in t.items():
        if isinstance(v, Counter):
            out[k] = {" / ".join(x) if isinstance(x, tuple) else x: n for x, n in v.items()}
        else:
            out[k] = v
    return out


if __name__ == "__main__":
    sys.exit(main())
