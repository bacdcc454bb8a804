"""Command line: ``fusionlint [check] PATHS``, ``facts``, ``graph``, ``rule``.

Exit status: 0 no findings, 1 findings, 2 usage/configuration/internal error.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from fusionlint import __version__
from fusionlint.defaults import CHECK_TIMEOUT, DEFAULT_STD, ISOLATED_TIMEOUT, MAX_FILES, VERIFY_ARCH, VERIFY_BUILD_TIMEOUT
from fusionlint.errors import (  # noqa: F401  (re-exported: the exit statuses are part of the CLI)
    EXIT_BROKEN_PIPE,
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    InputError,
    UsageError,
)

COMMANDS = ("check", "facts", "graph", "rule", "test-rules", "probe", "verify", "calibrate", "server", "trace", "index")
# facts, graph and probe parse each file in a forked child (workers.call_isolated) with the limit
# defaults.ISOLATED_TIMEOUT; test-rules goes through check's workers, with it as its default --timeout


def _parse_options(args: argparse.Namespace):
    from fusionlint.run.options import parse_options

    return parse_options(args.include, args.define, args.std, args.no_system_headers, args.device_bodies)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _arch(text: str) -> str:
    """``--arch``: one of the spellings ``fusionlint.arch`` accepts, normalized (``90`` -> ``sm_90``)."""
    from fusionlint.arch import argument

    return argument(text)


def _add_speed_args(p: argparse.ArgumentParser, timeout: int):
    """Workers, time limit, cache and precompiled headers: the same for check and test-rules."""
    speed = p.add_argument_group("speed")
    speed.add_argument("-j", "--jobs", type=_positive_int, metavar="N",
                       help="check N files at a time in worker processes (default: all cores)")
    speed.add_argument("--timeout", type=float, default=float(timeout), metavar="SECONDS",
                       help=f"give up on a file after SECONDS, reported as FL000 (default: {timeout}; 0: no limit)")
    speed.add_argument("--no-cache", action="store_true",
                       help="neither read nor write the result cache and precompiled headers")
    speed.add_argument("--cache-dir", metavar="DIR",
                       help="cache directory (default: $FUSIONLINT_CACHE_DIR, else $XDG_CACHE_HOME/fusionlint, "
                            "else ~/.cache/fusionlint)")
    speed.add_argument("--no-pch", action="store_true", help="do not use precompiled headers")
    speed.add_argument("--no-prefilter", action="store_true",
                       help="parse every file, also those that name neither cuBLASLt nor CUTLASS")
    return speed


def _add_frontend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("-I", "--include", action="append", metavar="DIR", help="add an include directory")
    p.add_argument("-D", "--define", action="append", metavar="NAME[=VALUE]", help="define a macro")
    p.add_argument("--std", help=f"C++ standard (default: {DEFAULT_STD})")
    p.add_argument("--no-system-headers", action="store_true",
                   help="ignore CUDA/cuBLAS/CUTLASS headers installed on this machine; use fusionlint's stand-ins")
    p.add_argument("--device-bodies", action=argparse.BooleanOptionalAction, default=None,
                   help="with the CUTLASS headers, also instantiate the kernels' and collectives' __device__ bodies "
                        "as nvcc does for sm_90a, so that FL300 reports the static_asserts inside them (about 10x "
                        "slower per GEMM; default: off, or `device-bodies` in [tool.fusionlint]; the rules that "
                        "mirror those asserts run either way)")


def build_parser() -> argparse.ArgumentParser:
    parser = _TopParser(prog="fusionlint", usage="fusionlint [check] [OPTIONS] PATH...\n       fusionlint COMMAND ...",
                        description="Static linter for cuBLASLt and CUTLASS GEMM configurations on Hopper (sm_90).")
    parser.add_argument("--version", action="version", version=f"fusionlint {__version__}")
    sub = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND", prog="fusionlint")

    check = sub.add_parser("check", help="check files and directories (the default command)")
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.add_argument("--output-format", choices=["text", "json", "sarif", "github", "junit"],
                       help="default: text (github when GITHUB_ACTIONS is set)")
    check.add_argument("-o", "--output-file", metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--arch", type=_arch, metavar="ARCH",
                       help="target architecture of the rules: sm_90 or sm_90a (also 90, 90a, compute_90; "
                            "default: from the compilation database or config, else sm_90)")
    check.add_argument("--ruleset", action="append", metavar="FILE", help="add a ruleset file (repeatable)")
    check.add_argument("--only-rulesets", action="store_true", help="use only the --ruleset files, not the built-in rules")
    check.add_argument("--support-table", metavar="FILE",
                       help="the measured cuBLASLt support table FL127 checks against (written by `fusionlint "
                            "calibrate`; default: the one matching the cuBLASLt headers found; `none`: FL127 off)")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    codes = dict(type=lambda s: [c for c in s.split(",") if c.strip()], metavar="CODE[,CODE...]")
    check.add_argument("--select", **codes, help="report only these codes or prefixes (default: FL, all)")
    check.add_argument("--ignore", **codes, help="do not report these codes or prefixes (longest prefix wins)")
    check.add_argument("--extend-select", **codes, help="report these codes or prefixes as well")
    check.add_argument("--per-file-ignores", action="append", metavar="GLOB:CODE[,CODE...]",
                       help="ignore codes in files matching GLOB (repeatable)")
    check.add_argument("--exclude", action="append", metavar="GLOB", help="skip files matching GLOB (repeatable)")
    check.add_argument("--statistics", action="store_true", help="print the number of findings per code")
    check.add_argument("--show-source", action="store_true", help="print the source line with a caret under the column")
    check.add_argument("--baseline", metavar="FILE", help="hide the findings recorded in FILE")
    check.add_argument("--update-baseline", action="store_true", help="record the current findings in --baseline FILE")
    check.add_argument("-p", "--compile-commands", metavar="PATH",
                       help="compile_commands.json (or its directory); default: the nearest one above each file")
    check.add_argument("-v", "--verbose", action="store_true",
                       help="also print each file's arch and where it came from, the files checked without the "
                            "CUTLASS headers, and what was dropped from compile commands (plugins, response files)")
    check.add_argument("-q", "--quiet", action="store_true",
                       help="no progress line (shown only when stderr is a terminal)")
    check_speed = _add_speed_args(check, timeout=CHECK_TIMEOUT)
    check_speed.add_argument(
        "--max-files", type=int, default=MAX_FILES, metavar="N",
        help=f"refuse to check more than N files (default: {MAX_FILES}; 0: no limit)")
    check_speed.add_argument("--no-index", action="store_true",
                             help="do not use the project index (`fusionlint index`): calls from other files, "
                                  "what their functions return")
    _add_frontend_args(check)

    facts = sub.add_parser("facts", help="print the configurations extracted from files")
    facts.add_argument("paths", nargs="+", metavar="PATH")
    facts.add_argument("--output-format", choices=["json"], default="json")
    facts.add_argument("-p", "--compile-commands", metavar="PATH",
                       help="compile_commands.json (or its directory) whose project index (`fusionlint index`) gives "
                            "the calls from other files; default: the nearest one above each file")
    facts.add_argument("--cache-dir", metavar="DIR", help="where the project index is (default: as for check)")
    facts.add_argument("--no-index", action="store_true", help="do not use the project index")
    _add_frontend_args(facts)

    index = sub.add_parser("index", help="index a project's translation units (compile_commands.json): the "
                                         "functions that reach cuBLASLt and their calls from other files, and "
                                         "what functions return when that does not depend on the caller, which "
                                         "check and facts then use")
    index.add_argument("paths", nargs="*", metavar="PATH",
                       help="files or directories to (re)index (default: every file of the compilation database)")
    index.add_argument("-p", "--compile-commands", metavar="PATH",
                       help="compile_commands.json (or its directory); default: the nearest one above each file "
                            "(above the current directory without PATHs)")
    index.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    _add_speed_args(index, timeout=CHECK_TIMEOUT)
    _add_frontend_args(index)

    graph = sub.add_parser("graph", help="print the dependency graph of one file")
    graph.add_argument("file", metavar="FILE")
    graph.add_argument("--output-format", choices=["dot", "json"], default="dot")
    _add_frontend_args(graph)

    rule = sub.add_parser("rule", help="show the documentation of a rule")
    rule.add_argument("code", nargs="?", metavar="FLnnn|NAME", help="a rule's code (FL100) or name (set-attribute-size-mismatch)")
    rule.add_argument("--all", action="store_true", help="list every rule, the built-in codes (FL000, FL001, ...) included")
    rule.add_argument("--ruleset", action="append", metavar="FILE")
    rule.add_argument("--output-format", choices=["text", "json"], default="text")

    probe = sub.add_parser("probe", help="write a runnable probe program for each extracted GEMM configuration "
                                         "(cuBLASLt and CUTLASS)")
    probe.add_argument("paths", nargs="+", metavar="PATH")
    probe.add_argument("-o", "--output-dir", "--out", dest="output_dir", required=True, metavar="DIR",
                       help="directory for the generated programs (--out: the same)")
    _add_frontend_args(probe)

    verify = sub.add_parser("verify", help="build and run a probe of each extracted configuration on this GPU and "
                                           "check that it fails exactly when the lint says it does",
                            epilog="exit status: 0 every verified configuration agrees (no stand-ins, D checked), "
                                   "1 some disagree, 2 this machine cannot verify (or a usage error), 3 none "
                                   "disagrees but some agree only with stand-ins or have D not checked")
    verify.add_argument("paths", nargs="+", metavar="PATH")
    verify.add_argument("--config", type=int, action="append", metavar="N", help="only the Nth configuration (repeatable)")
    verify.add_argument("--keep", metavar="DIR", help="keep the probes and executables in DIR (default: a temporary directory)")
    verify.add_argument("-j", "--jobs", type=int, help="parallel lints and builds (default: the number of CPUs)")
    verify.add_argument("--timeout", type=int, default=VERIFY_BUILD_TIMEOUT, metavar="S",
                        help=f"time limit of one build in seconds (default: {VERIFY_BUILD_TIMEOUT})")
    verify.add_argument("--time-limit", type=int, metavar="S",
                        help="for the whole run: what is not built and run by then is reported as not verified")
    verify.add_argument("--json", metavar="FILE", help="also write the result as JSON to FILE")
    verify.add_argument("--arch", type=_arch, default=VERIFY_ARCH, metavar="ARCH",
                        help=f"target architecture (sm_90a, sm_90, 90a, compute_90...; default: {VERIFY_ARCH})")
    verify.add_argument("--ruleset", action="append", metavar="FILE")
    verify.add_argument("-v", "--verbose", action="store_true", help="report each lint and build on stderr as it ends")
    _add_frontend_args(verify)

    cal = sub.add_parser("calibrate", help="measure the cuBLASLt support table (FL127) on this machine's GPU")
    cal.add_argument("--out", metavar="PATH", help="table file (.json.gz) or directory to write it to (default: "
                                                  "$XDG_DATA_HOME/fusionlint/support, where check finds it)")
    cal.add_argument("--joint", type=int, default=2000, metavar="N",
                     help="check the table's model on N random configurations of the joint space (default: 2000; 0: no)")
    cal.add_argument("--seed", type=int, default=15, help="seed of the joint check's configurations")
    cal.add_argument("-j", "--jobs", type=_positive_int, metavar="N", help="driver processes (default: all cores but one)")
    cal.add_argument("-q", "--quiet", action="store_true", help="no progress lines")

    trace = sub.add_parser("trace", help="run a command with cuBLASLt logging (or read its logs) and check the "
                                         "GEMM configurations it used",
                           usage="fusionlint trace [OPTIONS] -- CMD ARGS...\n       fusionlint trace [OPTIONS] "
                                 "--from-log FILE...",
                           epilog="exit status: 0 clean (or no cuBLASLt call logged), 1 findings, 2 usage error")
    from fusionlint.trace.command import add_arguments as add_trace_arguments

    add_trace_arguments(trace, _arch)

    from fusionlint.lsp import add_arguments as add_server_arguments

    server = sub.add_parser("server", help="language server (LSP over stdio): live diagnostics, hover, quick fixes")
    add_server_arguments(server, _positive_int)
    _add_frontend_args(server)

    test = sub.add_parser("test-rules", help="check ruleid/ok-annotated fixture files against the rules")
    test.add_argument("paths", nargs="*", metavar="PATH", default=["fixtures"])
    test.add_argument("--ruleset", action="append", metavar="FILE", help="add a ruleset file (repeatable)")
    test.add_argument("--only-rulesets", action="store_true", help="use only the --ruleset files, not the built-in rules")
    test.add_argument("--arch", type=_arch, metavar="ARCH",
                      help="target architecture of the rules (as for check: from the compilation database or config, "
                           "else sm_90)")
    test.add_argument("-p", "--compile-commands", metavar="PATH", help="compile_commands.json (or its directory)")
    test.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    _add_speed_args(test, timeout=ISOLATED_TIMEOUT)
    _add_frontend_args(test)
    parser.check_parser = check
    return parser


class _TopParser(argparse.ArgumentParser):
    """``fusionlint --help`` (and ``fusionlint`` alone) ends with the options of ``check``, the
    default command, as ruff and clang-tidy show their lint options at the top level; formatted
    only when asked for, so start-up does not pay for it."""

    check_parser: argparse.ArgumentParser | None = None

    def format_help(self) -> str:
        text = super().format_help()
        if self.check_parser is None:
            return text
        check = self.check_parser.format_help()
        options = check[check.index("\n\n") + 2:] if "\n\n" in check else check  # without check's usage
        return (text + "\ncheck (the default command: `fusionlint PATH...` is `fusionlint check PATH...`):\n\n"
                + options.rstrip() + "\n\n`fusionlint COMMAND --help` shows the options of the other commands; "
                "`fusionlint rule --all` lists the rules.\n")


def _collect(paths: list[str]) -> list[Path]:
    from fusionlint.run.sources import collect

    files, errors = collect(paths)
    for e in errors:
        print(f"fusionlint: error: {e}", file=sys.stderr)
    if errors:
        raise UsageError("bad path")
    return files


def cmd_check(args: argparse.Namespace) -> int:
    from fusionlint.run.check import check_paths, run_check
    from fusionlint.run.options import check_options

    check_paths(args.paths)
    return run_check(check_options(args), _collect(args.paths))


def _extract_isolated(path: Path, options, contexts=None, includers: list | None = None):
    """The facts of one file, extracted in a forked child: a file that crashes libclang (or runs
    past ISOLATED_TIMEOUT) raises ``ChildFailed`` with the reason instead of ending the command.
    ``contexts``: its surroundings in the project index (``IndexContext``); ``includers``: the
    project's files that include it, where its template GEMMs are instantiated."""
    from fusionlint.facts.extract import extract_file
    from fusionlint.run.workers import call_isolated

    if contexts or includers:
        import functools

        extra = {**({"contexts": contexts} if contexts else {}), **({"includers": includers} if includers else {})}
        return call_isolated(functools.partial(extract_file, **extra), path, options,
                             timeout=float(ISOLATED_TIMEOUT))
    return call_isolated(extract_file, path, options, timeout=float(ISOLATED_TIMEOUT))


def cmd_index(args: argparse.Namespace) -> int:
    from fusionlint.run.options import check_options
    from fusionlint.run.index_build import run_index

    return run_index(check_options(args), args.paths)


def cmd_facts(args: argparse.Namespace) -> int:
    from fusionlint.run.pipeline import SkipFile

    files = _collect(args.paths)
    options = _parse_options(args)
    out = []
    indexed = None
    if not args.no_index:
        from fusionlint.run.index_build import IndexedFacts

        indexed = IndexedFacts(args)
    for f in files:
        try:
            with_index = indexed.options_and_contexts(f) if indexed is not None else None
            if with_index is not None:  # the project's index: the file's flags from its database, its callers
                facts = _extract_isolated(f, *with_index)
            else:
                facts = _extract_isolated(f, options)
        except SkipFile as exc:
            print(f"fusionlint: {f}: skipped: {exc}", file=sys.stderr)
            continue
        except Exception as exc:  # noqa: BLE001 - report and go on with the other files
            print(f"fusionlint: {f}: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
            continue
        for message in facts.functions_not_read:
            print(f"fusionlint: note: {f}: {message}", file=sys.stderr)
        for d in [cfg.to_dict() for cfg in facts.configurations] + [
                {"library": "cutlass", **g.to_dict()} for g in facts.cutlass]:
            d.setdefault("library", "cublaslt")
            d["headers"] = facts.header_mode
            if facts.missing_headers:
                d["missing_headers"] = facts.missing_headers
            if facts.functions_not_read:
                d["functions_not_read"] = facts.functions_not_read
            out.append(d)
    json.dump(out, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")
    return EXIT_CLEAN


def cmd_graph(args: argparse.Namespace) -> int:
    from fusionlint.facts import graph

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{args.file}: no such file")
    from fusionlint.run.workers import ChildFailed

    try:
        facts = _extract_isolated(path, _parse_options(args))
    except ChildFailed as exc:
        print(f"fusionlint: {path}: not checked: {exc}", file=sys.stderr)
        return EXIT_ERROR
    g = graph.build(facts)
    if not facts.configurations and not facts.cutlass:
        print(f"fusionlint: {path}: no cuBLASLt or CUTLASS GEMM found: the graph is empty", file=sys.stderr)
    sys.stdout.write(graph.to_dot(g) if args.output_format == "dot" else graph.to_json(g) + "\n")
    return EXIT_CLEAN


def cmd_rule(args: argparse.Namespace) -> int:
    """A rule's documentation by code or name (``FL100``, ``set-attribute-size-mismatch``), the
    built-in codes (FL000, FL001, FL127, FL300) included; ``--all`` lists them all, YAML rules first."""
    from fusionlint.findings import BUILTIN_CODES
    from fusionlint.rules.docs import builtin_dict, builtin_severity, describe, describe_builtin, rule_dict
    from fusionlint.rules.loader import load_rules

    rules = load_rules(args.ruleset)
    if not (args.all or args.code):
        raise UsageError("name a rule (FLnnn or its name) or use --all")
    builtins = [c for c in BUILTIN_CODES if c not in {r.id for r in rules}]
    if not args.all:
        key = args.code.strip()
        rules = [r for r in rules if r.id == key.upper() or r.name == key.lower()]
        builtins = [c for c in builtins if not rules and (c == key.upper() or BUILTIN_CODES[c][0] == key.lower())]
        if not rules and not builtins:
            raise UsageError(f"unknown rule {args.code}: neither a code nor a rule name (see 'fusionlint rule --all')")
    if args.output_format == "json":
        json.dump([rule_dict(r) for r in rules] + [builtin_dict(c) for c in builtins], sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.all:
        for r in rules:
            print(f"{r.id}  {r.severity:<7}  {r.name}")
        for c in builtins:
            print(f"{c}  {builtin_severity(c):<7}  {BUILTIN_CODES[c][0]}")
    else:
        print(describe(rules[0]) if rules else describe_builtin(builtins[0]))
    return EXIT_CLEAN


def _cutlass_probes(facts, text: str, out: Path) -> list[Path]:
    """A probe per CUTLASS GEMM of ``facts`` in ``out``; one that cannot be written is a note saying why."""
    from fusionlint.evidence.probegen_cutlass import write_probes

    def skipped(g, why: str) -> None:
        line = (g.instantiated_at or g.loc).line
        print(f"fusionlint: {facts.path}:{line}: CUTLASS {g.api} {g.kind} `{g.name}`: no probe: {why}", file=sys.stderr)

    return write_probes(facts.cutlass, out, text, on_skip=skipped)


def cmd_probe(args: argparse.Namespace) -> int:
    """``fusionlint probe -o DIR PATH...``: a standalone program per cuBLASLt configuration and per
    CUTLASS GEMM (what ``verify`` builds and runs); what gets no probe is a note saying why."""
    from fusionlint.evidence.probegen import write_probes
    from fusionlint.run.pipeline import SkipFile
    from fusionlint.run.workers import ChildFailed

    out = Path(args.output_dir)
    options = _parse_options(args)
    written = 0
    for f in _collect(args.paths):
        try:
            facts = _extract_isolated(f, options)
        except SkipFile as exc:
            print(f"fusionlint: {f}: skipped: {exc}", file=sys.stderr)
            continue
        except ChildFailed as exc:
            print(f"fusionlint: {f}: not checked: {exc}", file=sys.stderr)
            continue
        paths: list[Path] = []
        if facts.configurations:
            judged = {c.heuristic_loc for c in facts.configurations if c.kind == "matmul"}
            gemms = [c for c in facts.configurations
                     if not (c.kind == "descriptor" or (c.kind == "heuristic" and c.loc in judged))]
            paths = write_probes(facts, out)
            if len(paths) < len(gemms):
                print(f"fusionlint: {f}: {len(gemms) - len(paths)} cuBLASLt configuration(s) without a probe: the "
                      "descriptor or a layout did not resolve (see `fusionlint facts`)", file=sys.stderr)
        if facts.cutlass:
            paths += _cutlass_probes(facts, f.read_text(encoding="utf-8", errors="replace"), out)
        if not facts.configurations and not facts.cutlass:
            print(f"fusionlint: {f}: no cuBLASLt or CUTLASS GEMM found: nothing to probe", file=sys.stderr)
        for path in paths:
            print(path)
        written += len(paths)
    print(f"{written} probe program{'s' if written != 1 else ''} in {out}"
          + (" (CUTLASS probes build with -I <cutlass>/include; `fusionlint verify` builds and runs them all)"
             if written else ""), file=sys.stderr)
    return EXIT_CLEAN


def cmd_verify(args: argparse.Namespace) -> int:
    from fusionlint.run.options import verify_options
    from fusionlint.run.verify import Missing, VerifyUsageError, run_verify

    try:
        return run_verify(verify_options(args), _collect(args.paths))
    except Missing as exc:
        print(f"fusionlint: error: cannot verify on this machine: it needs {exc}", file=sys.stderr)
        return EXIT_ERROR
    except VerifyUsageError as exc:
        raise UsageError(str(exc)) from exc


def cmd_calibrate(args: argparse.Namespace) -> int:
    from fusionlint.run.calibrate import run_calibrate

    return run_calibrate(args)


def cmd_server(args: argparse.Namespace) -> int:
    from fusionlint.lsp import run

    return run(args)


def cmd_trace(args: argparse.Namespace) -> int:
    from fusionlint.trace.command import run_trace

    return run_trace(args)


def cmd_test_rules(args: argparse.Namespace) -> int:
    from fusionlint.run.options import check_options
    from fusionlint.run.selftest import annotated_files, run_test_rules

    files = annotated_files([Path(p) for p in args.paths])
    if not files:
        raise UsageError(f"no annotated fixtures under {' '.join(args.paths)}")
    # test-rules' options; every other option of check at its default
    return run_test_rules(check_options(args), files)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in COMMANDS and not argv[0].startswith("-"):
        argv.insert(0, "check")
    elif argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv.insert(0, "check")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    handlers = {"check": cmd_check, "facts": cmd_facts, "graph": cmd_graph, "rule": cmd_rule,
                "test-rules": cmd_test_rules, "probe": cmd_probe, "verify": cmd_verify, "calibrate": cmd_calibrate,
                "server": cmd_server, "trace": cmd_trace, "index": cmd_index}
    try:
        status = handlers[args.command](args)
        sys.stdout.flush()  # a reader that went away is noticed here, not at interpreter exit
        return status
    except BrokenPipeError:  # `fusionlint facts FILE | head`: stop quietly, as a command killed by SIGPIPE
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except InputError as exc:  # usage, config, compilation database, ruleset, selection, baseline
        if str(exc) != "bad path":
            print(f"fusionlint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:  # Ctrl-C: workers are stopped by now; no traceback
        print("fusionlint: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - an internal error is exit 2 and one line, never a traceback
        print(f"fusionlint: internal error: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return EXIT_ERROR


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's final flush of what is still buffered
    does not fail (and print) a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is not a file (e.g. redirected in-process)
        pass


def entry() -> None:
    """The console script (and ``python -m fusionlint.cli``): ``main()``, then leave at once.
    Everything is written and flushed by then, the cache entries were written by the workers, and
    no worker is left; the interpreter's own teardown (freeing every module and object, ~20 ms)
    would only delay pre-commit."""
    status = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (stdout was silenced by main)
            pass
    os._exit(status)


if __name__ == "__main__":
    entry()
