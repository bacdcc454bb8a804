"""``fusionlint trace``: check the GEMM configurations a run used, from cuBLASLt's API log.

``fusionlint trace -- CMD ARGS...`` runs the user's command (only when the user asks for it, never
anything from a scanned tree) with ``CUBLASLT_LOG_LEVEL=5`` and ``CUBLASLT_LOG_FILE`` in a
temporary directory, then reads the logs; ``fusionlint trace --from-log FILE...`` (``-`` for stdin)
reads logs recorded before. Each distinct configuration goes through the rule engine as the static
path's facts do; findings point at the log file and line of the judged call, with cuBLASLt's own
[Error] lines alongside (``cuBLASLt said: ...``) and, with ``--static PATH``, the source line that
writes the same configuration; a configuration so linked takes from it the facts only the source
has (the C types of its pointer variables, ``take_source_facts``), so FL124 runs on it too.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

from fusionlint.defaults import DEFAULT_ARCH
from fusionlint.errors import InputError
from fusionlint.findings import Finding, Related

EXIT_CLEAN, EXIT_FINDINGS = 0, 1
NOTHING_LOGGED = "no cuBLASLt call was logged"


class TraceError(InputError):
    """A bad ``trace`` command line, or a log that cannot be read (exit 2, one line)."""


def add_arguments(p: argparse.ArgumentParser, arch_type) -> None:
    p.add_argument("--from-log", nargs="+", metavar="FILE",
                   help="read these cuBLASLt logs (CUBLASLT_LOG_LEVEL=5) instead of running a command; - is stdin")
    p.add_argument("--summary", action="store_true",
                   help="print the per-GEMM summary: calls, shapes, types, epilogue (fused or not), algorithm, status")
    p.add_argument("--output-format", choices=["text", "json", "sarif", "github", "junit"],
                   help="default: text (github when GITHUB_ACTIONS is set); json holds the findings and the summary")
    p.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--static", action="append", metavar="PATH",
                   help="source files or directories to link: a traced configuration that one of them writes "
                        "(the same facts and attribute writes) names its line (repeatable)")
    p.add_argument("--log-dir", metavar="DIR",
                   help="with a command: write its cuBLASLt logs to DIR and keep them (default: a temporary directory)")
    p.add_argument("--arch", type=arch_type, default=DEFAULT_ARCH, metavar="ARCH",
                   help=f"architecture of the rules (default: {DEFAULT_ARCH}; the GPU the log was recorded on)")
    p.add_argument("--ruleset", action="append", metavar="FILE", help="add a ruleset file (repeatable)")
    p.add_argument("--support-table", metavar="FILE",
                   help="the measured support table FL127 checks against (default: the one for the cuBLASLt "
                        "version the log names; `none`: FL127 off)")
    codes = {"type": lambda s: [c for c in s.split(",") if c.strip()], "metavar": "CODE[,CODE...]"}
    p.add_argument("--select", **codes, help="report only these codes or prefixes")
    p.add_argument("--ignore", **codes, help="do not report these codes or prefixes")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("-q", "--quiet", action="store_true", help="no notes on stderr about skipped lines")
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ARGS",
                   help="the command to run with cuBLASLt logging on (after --)")


# ---- getting the logs ------------------------------------------------------------------------------
def run_command(cmd: list[str], log_dir: Path) -> int:
    """Run ``cmd`` with cuBLASLt's API log going to ``log_dir`` (one file per process: ``%i`` is
    the pid); its output goes to the terminal as usual. Returns its exit status."""
    import subprocess

    env = dict(os.environ)
    env["CUBLASLT_LOG_LEVEL"] = "5"
    env.pop("CUBLASLT_LOG_MASK", None)  # a mask replaces the level: the API trace needs level 5
    env["CUBLASLT_LOG_FILE"] = str(log_dir / "cublaslt-%i.log")
    try:
        return subprocess.run(cmd, env=env, check=False).returncode
    except FileNotFoundError:
        raise TraceError(f"cannot run {cmd[0]}: command not found") from None
    except PermissionError:
        raise TraceError(f"cannot run {cmd[0]}: permission denied") from None
    except OSError as exc:
        raise TraceError(f"cannot run {cmd[0]}: {exc.strerror or exc}") from None


def _read_logs(paths: list[str]):
    from fusionlint.trace.log_parser import read_log

    logs = []
    for p in paths:
        if p != "-" and Path(p).is_dir():
            raise TraceError(f"{p}: is a directory, not a log file")
        try:
            logs.append(read_log(p))
        except OSError as exc:
            raise TraceError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return logs


# ---- rules -------------------------------------------------------------------------------------------
def _rules_and_table(args: argparse.Namespace, version: int | None):
    from fusionlint.run import support_select
    from fusionlint.rules.cached import rule_source

    choice = support_select.choose(args.support_table, version or support_select.STAND_IN_VERSION,
                                   "the cuBLASLt version in the log" if version else "the log names no version")
    if choice.note and choice.path and not args.quiet:
        print(f"fusionlint: note: {choice.note}", file=sys.stderr)
    source = rule_source(tuple(args.ruleset or ()), False, None, choice.path)
    return list(source.get()), source.support()


def _selection(args: argparse.Namespace, rules):
    from fusionlint.decide import selection
    from fusionlint.findings import BUILTIN_CODES

    known = tuple(sorted({r.id for r in rules} | set(BUILTIN_CODES)))
    select = selection.check_codes(args.select, known, "--select") if args.select else ("FL",)
    ignore = selection.check_codes(args.ignore, known, "--ignore") if args.ignore else ()
    return selection.Selection(select, ignore, ())


# ---- static sites ------------------------------------------------------------------------------------
def _static_configurations(paths: list[str]) -> list:
    from fusionlint.frontend.clang.parse import ParseOptions
    from fusionlint.facts.extract import SkipFile, extract_file
    from fusionlint.run.sources import collect
    from fusionlint.run.workers import ChildFailed, call_isolated

    files, errors = collect(paths)
    if errors:
        raise TraceError(errors[0])
    out = []
    for f in files:
        try:
            facts = call_isolated(extract_file, f, ParseOptions(), timeout=600.0)
        except (SkipFile, ChildFailed) as exc:
            print(f"fusionlint: {f}: not read for --static: {exc}", file=sys.stderr)
            continue
        out += [c for c in facts.configurations if c.kind in ("heuristic", "matmul")]
    return out


def _links(tc, static: list) -> list:
    from fusionlint.trace.facts import same_configuration

    found = []
    for traced in tc.configurations:
        for s in static:
            if same_configuration(s, traced) and s not in found:
                found.append(s)
    return found


def link_static(t, static: list) -> tuple[dict, dict]:
    """Link each configuration of a log to the static configurations that write it (``_links``:
    by distinct configuration) and give each traced configuration the facts only the source has
    (``take_source_facts``: the C types of its pointer variables). Returns the links and, by
    traced configuration (``id``), the facts taken."""
    from fusionlint.trace.facts import same_configuration, take_source_facts

    links = {id(tc): _links(tc, static) for tc in t.configs}
    taken = {}
    for tc in t.configs:
        for cfg in tc.configurations:
            got = take_source_facts(cfg, [s for s in links[id(tc)] if same_configuration(s, cfg)])
            if got:
                taken[id(cfg)] = got
    return links, taken


def log_findings(t, rules, arch: str, table, static: list) -> tuple[list[Finding], dict]:
    """The findings of one log's facts (at the log lines), with their related notes: where the
    descriptor was created, what cuBLASLt said and, with ``static`` configurations, the source
    line that writes the same configuration. A finding that exists only because of a fact taken
    from the source (a buffer's C type) names where it came from. Returns the findings and the
    links (by distinct configuration)."""
    from fusionlint.rules.engine import run_rules

    findings = run_rules(rules, t.file_facts, arch, support=table)
    links, taken = link_static(t, static) if static else ({}, {})
    # which findings the taken facts made: those the same rules did not find without them
    without = {(f.code, f.line) for f in findings}
    if taken:
        findings = run_rules(rules, t.file_facts, arch, support=table)
    by_line, taken_at = {}, {}
    for tc in t.configs:
        for cfg in tc.configurations:
            by_line[cfg.site.line] = tc
            if id(cfg) in taken:
                taken_at.setdefault(cfg.site.line, []).extend(taken[id(cfg)])
    out = []
    for f in findings:
        tc = by_line.get(f.line)
        # a related location on the finding's own line says nothing (the objects of a traced
        # configuration are located at its call)
        related = tuple(r for r in f.related if (r.path, r.line) != (f.path, f.line))
        if tc is not None:
            created = tc.first.desc_created
            if created is not None:
                related += (Related(tc.first.path, created, 1, "the matmul descriptor was created here"),)
            if taken and (f.code, f.line) not in without:
                related += tuple(Related(s.at.path, s.at.line, s.at.column,
                                         f"buffer type from {s.at.path}:{s.at.line} ({s.buffer_type}, "
                                         f"written as CUBLASLT_MATMUL_DESC_{s.name})")
                                 for s in dict.fromkeys(taken_at.get(f.line, ())))
            related += _said(tc) + tuple(
                Related(s.path, s.site.line, s.site.column, "the same configuration is written here")
                for s in links.get(id(tc), ()))
        out.append(replace(f, related=related))
    return out, links


# ---- the summary -------------------------------------------------------------------------------------
def _short(name) -> str:
    if not isinstance(name, str):
        return "?" if name is None else str(name)
    for prefix in ("CUBLASLT_EPILOGUE_", "CUBLAS_COMPUTE_", "CUBLASLT_ORDER_", "CUBLAS_OP_", "CUDA_"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _value(view: dict, part: str, name: str):
    from fusionlint.rules.markers import ABSENT, RUNTIME, UNKNOWN

    v = view.get(part, {}).get(name) if isinstance(view.get(part), dict) else None
    return None if v in (None,) or v is UNKNOWN or v is ABSENT or v is RUNTIME else v


def gemm_row(tc, links: list) -> dict:
    """The summary of one distinct configuration (the ``gemms`` entries of the JSON report)."""
    from fusionlint.rules.engine import configuration_view

    cfg = next((c for c in tc.configurations if c.kind == "matmul"), tc.configurations[0])
    view = configuration_view(cfg)
    ta, tb = _value(view, "matmul_desc", "TRANSA"), _value(view, "matmul_desc", "TRANSB")
    a_rows, a_cols = _value(view, "layout_A", "ROWS"), _value(view, "layout_A", "COLS")
    transposed = ta in ("CUBLAS_OP_T", "CUBLAS_OP_C")
    m, k = (a_cols, a_rows) if transposed else (a_rows, a_cols)
    n = _value(view, "layout_D", "COLS")
    epilogue = _value(view, "matmul_desc", "EPILOGUE") or "CUBLASLT_EPILOGUE_DEFAULT"
    heuristics, matmuls = tc.of_kind("heuristic"), tc.of_kind("matmul")
    algos = []
    for c in matmuls:
        if c.algo and c.algo not in algos:
            algos.append(c.algo)
    said = []
    for c in tc.calls:
        for line, text in c.errors:
            if text not in [t for _, _, t in said]:
                said.append((c.path, line, text))
    status = _status(tc, heuristics, matmuls)
    return {
        "log": tc.first.path, "line": tc.first.line, "function": tc.first.function,
        "via": f"cuBLAS ({tc.first.function})" if tc.first.internal else "cuBLASLt API",
        "calls": {"heuristic": len(heuristics), "matmul": len(matmuls)},
        "m": m, "n": n, "k": k, "batch": _value(view, "layout_D", "BATCH_COUNT"),
        "types": {x: _short(_value(view, f"layout_{x}", "TYPE")) for x in "ABCD"},
        "orders": {x: _short(_value(view, f"layout_{x}", "ORDER")) for x in "ABCD"},
        "compute": _short(_value(view, "matmul_desc", "COMPUTE_TYPE")),
        "scale": _short(_value(view, "matmul_desc", "SCALE_TYPE")),
        "transa": _short(ta), "transb": _short(tb),
        "epilogue": _short(epilogue), "fused": epilogue != "CUBLASLT_EPILOGUE_DEFAULT",
        "algorithms": [{k2: v for k2, v in a.items() if k2} for a in algos],
        "status": status,
        "cublaslt_said": [{"log": p, "line": line, "text": text} for p, line, text in said],
        "static": [{"path": s.path, "line": s.site.line} for s in links],
    }


def _status(tc, heuristics: list, matmuls: list) -> str:
    if any(c.errors for c in heuristics):
        return "rejected at the heuristic query"
    if any(c.results == [] for c in heuristics):
        return "rejected at the heuristic query (no algorithm)"
    if any(c.errors for c in matmuls):
        return "rejected by cublasLtMatmul"
    if matmuls and all(c.trace_line is None for c in matmuls):
        return "cublasLtMatmul did not run (no Trace line, cuBLASLt gave no reason)"
    if matmuls:
        return "ok"
    return "heuristic query only (no cublasLtMatmul logged)"


def _algo_text(algos: list[dict]) -> str:
    if not algos:
        return "-"
    a = algos[0]
    parts = [f"algo {a.get('algoId', '?')}"]
    for key, prefix in (("tile", "MATMUL_TILE_"), ("stages", "MATMUL_STAGES_"), ("clusterShape", "CLUSTER_SHAPE_")):
        if isinstance(a.get(key), str):
            parts.append(f"{key.replace('clusterShape', 'cluster')} {a[key].removeprefix(prefix)}")
    for key in ("numSplitsK", "reductionScheme", "customOption"):
        if isinstance(a.get(key), str):
            parts.append(f"{key}={a[key]}")
    more = f" (+{len(algos) - 1} other{'s' if len(algos) > 2 else ''})" if len(algos) > 1 else ""
    return " ".join(parts) + more


def format_summary(rows: list[dict], logs: list) -> str:
    out = []
    by_log: dict[str, list[dict]] = {}
    for r in rows:
        by_log.setdefault(r["log"], []).append(r)
    for log in logs:
        mine = by_log.get(log.path, [])
        calls = sum(r["calls"]["heuristic"] + r["calls"]["matmul"] for r in mine)
        out.append(f"{log.path}: {calls} GEMM call{'s' if calls != 1 else ''}, {len(mine)} distinct "
                   f"configuration{'s' if len(mine) != 1 else ''}")
        for r in mine:
            t = r["types"]
            shape = f"{r['m']}x{r['n']}x{r['k']}" + (f" batch {r['batch']}" if r["batch"] not in (None, 1) else "")
            ops = f"{(r['transa'] or '?')[0]}{(r['transb'] or '?')[0]}"
            calls = f"{r['calls']['heuristic']}h+{r['calls']['matmul']}m"
            line = (f"  {log.path}:{r['line']}: {calls:>7}  {shape:<22} {t['A']}x{t['B']}->{t['D']} (C {t['C']})  "
                    f"{r['compute']}/{r['scale']} {ops}  epilogue {r['epilogue']} (fused: "
                    f"{'yes' if r['fused'] else 'no'})  {_algo_text(r['algorithms'])}  {r['status']}")
            if r["via"] != "cuBLASLt API":
                line += f"  [via {r['via']}]"
            out.append(line)
            for s in r["cublaslt_said"]:
                out.append(f"      cuBLASLt said: {s['text']} ({s['log']}:{s['line']})")
            for s in r["static"]:
                out.append(f"      static site: {s['path']}:{s['line']}")
    return "\n".join(out) + ("\n" if out else "")


# ---- the command ------------------------------------------------------------------------------------
def run_trace(args: argparse.Namespace) -> int:
    cmd = list(args.cmd or [])
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if args.from_log and cmd:
        raise TraceError("give either --from-log FILE... or -- CMD ARGS..., not both")
    if not args.from_log and not cmd:
        raise TraceError("nothing to trace: give -- CMD ARGS... (a command to run) or --from-log FILE...")
    if args.log_dir and not cmd:
        raise TraceError("--log-dir is for a command (-- CMD ARGS...)")
    if cmd:
        return _trace_command(args, cmd)
    return _trace_logs(args, _read_logs(args.from_log), None)


def _trace_command(args: argparse.Namespace, cmd: list[str]) -> int:
    import shlex
    import tempfile

    if args.log_dir:
        log_dir = Path(args.log_dir)
        try:
            log_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TraceError(f"{args.log_dir}: cannot create: {exc.strerror or exc}") from None
        status = run_command(cmd, log_dir)
        return _after_command(args, cmd, status, log_dir, shlex)
    with tempfile.TemporaryDirectory(prefix="fusionlint-trace-") as tmp:
        status = run_command(cmd, Path(tmp))
        return _after_command(args, cmd, status, Path(tmp), shlex)


def _after_command(args: argparse.Namespace, cmd: list[str], status: int, log_dir: Path, shlex) -> int:
    print(f"fusionlint: note: `{shlex.join(cmd)}` exited with status {status}", file=sys.stderr)
    paths = sorted(str(p) for p in log_dir.glob("cublaslt-*.log"))
    return _trace_logs(args, _read_logs(paths), status)


def _trace_logs(args: argparse.Namespace, logs: list, status: int | None) -> int:
    from fusionlint.trace.calls import calls_of
    from fusionlint.trace.facts import trace_facts

    traced = [trace_facts(calls_of(log)) for log in logs]
    if not args.quiet:
        for log in logs:
            if log.skipped:
                first = "; ".join(f"line {n}: {why}" for n, why in log.skipped_examples[:2])
                print(f"fusionlint: note: {log.path}: {log.skipped} line{'s' if log.skipped != 1 else ''} "
                      f"skipped (not cuBLASLt API log lines: {first})", file=sys.stderr)
        for t in traced:
            if t.undescribed:
                print(f"fusionlint: note: {t.path}: {t.undescribed} GEMM call(s) without descriptor dumps "
                      "(the log has neither their heuristic query nor their Trace line) not checked", file=sys.stderr)
            unknown = sorted({u for tc in t.configs for u in tc.unknown_fields})
            if unknown:
                print(f"fusionlint: note: {t.path}: log fields fusionlint does not know, not checked: "
                      f"{', '.join(unknown)}", file=sys.stderr)
    if not any(t.configs for t in traced):
        where = "" if status is not None else f" in {', '.join(log.path for log in logs)}"
        print(f"fusionlint: {NOTHING_LOGGED}{where}"
              + (" (does the program call cuBLASLt 12 or later, on a GPU?)" if status is not None else ""),
              file=sys.stderr)
        if args.output_format == "json":
            _write(args, json.dumps({"findings": [], "gemms": [], "logs": [_log_dict(log, t) for log, t in
                                                                            zip(logs, traced)]}, indent=2) + "\n")
        elif args.output_format and args.output_format != "text":
            _write(args, _render(args, [], [], logs))
        return EXIT_CLEAN
    version = next((log.version for log in logs if log.version), None)
    rules, table = _rules_and_table(args, version)
    sel = _selection(args, rules)
    static = _static_configurations(args.static) if args.static else []
    findings: list[Finding] = []
    rows: list[dict] = []
    for t in traced:
        found, links = log_findings(t, rules, args.arch, table, static)
        findings += [f for f in found if sel.enabled(f.code, f.path)]
        rows += [gemm_row(tc, links.get(id(tc), [])) for tc in t.configs]
    findings.sort(key=lambda f: (f.path, f.line, f.column, f.code))
    explained = {(f.path, f.line) for f in findings}
    if not args.quiet:
        for r in rows:
            if r["cublaslt_said"] and not any((r["log"], c.site.line) in explained for c in _row_configs(traced, r)):
                s = r["cublaslt_said"][0]
                print(f"fusionlint: note: {r['log']}:{r['line']}: cuBLASLt said: {s['text']} (no rule explains it)",
                      file=sys.stderr)
    fmt = _format(args)
    if fmt == "json":
        out = json.dumps({"findings": [f.to_dict() for f in findings], "gemms": rows,
                          "logs": [_log_dict(log, t) for log, t in zip(logs, traced)]}, indent=2) + "\n"
    else:
        out = _render(args, findings, rules, logs)
        if args.summary and fmt == "text":
            out += format_summary(rows, logs)
        elif args.summary:
            sys.stderr.write(format_summary(rows, logs))
    _write(args, out)
    if args.exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if any(f.severity in ("error", "warning") for f in findings) else EXIT_CLEAN


def _row_configs(traced: list, row: dict) -> list:
    for t in traced:
        for tc in t.configs:
            if tc.first.path == row["log"] and tc.first.line == row["line"]:
                return tc.configurations
    return []


def _said(tc) -> tuple[Related, ...]:
    out, seen = [], set()
    for c in tc.calls:
        for line, text in c.errors:
            if text not in seen:
                seen.add(text)
                out.append(Related(c.path, line, 1, f"cuBLASLt said: {text}"))
    return tuple(out)


def _log_dict(log, t) -> dict:
    return {"path": log.path, "lines": log.lines, "records": len(log.records), "skipped": log.skipped,
            "cublaslt_version": log.version, "gemm_calls": len(t.calls.calls), "configurations": len(t.configs)}


def _format(args: argparse.Namespace) -> str:
    if args.output_format:
        return args.output_format
    github = os.environ.get("GITHUB_ACTIONS", "").strip().lower()
    return "github" if github not in ("", "0", "false") else "text"


def _render(args: argparse.Namespace, findings: list[Finding], rules: list, logs: list) -> str:
    from fusionlint.paths import project_root
    from fusionlint.report import ReportContext, render

    color = _format(args) == "text" and not args.output_file and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    ctx = ReportContext(project_root(), [log.path for log in logs], sorted(rules, key=lambda r: r.id), False, color)
    return render(_format(args), findings, ctx)


def _write(args: argparse.Namespace, out: str) -> None:
    from fusionlint.report import write_output

    write_output(args.output_file, out)
