"""``fusionlint check``: each file's settings (command line over compile_commands.json over the
nearest config file) -> pipeline -> inline suppressions -> selection -> baseline -> report.

Command line over file: ``--select``, ``--ignore``, ``--per-file-ignores``, ``--exclude``,
``--arch`` and ``--std`` replace the config's value; ``--extend-select``, ``--ruleset``,
``-I`` and ``-D`` add to it. The compilation database, being per file, comes between the two
for include dirs, macros, standard and arch.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from fusionlint import baseline, compile_db, config, selection, suppress
from fusionlint.cli import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, UsageError
from fusionlint.findings import BUILTIN_CODES, Finding
from fusionlint.frontend.parse import ParseOptions
from fusionlint.paths import glob_matches, project_root
from fusionlint.report import ReportContext, render
from fusionlint.rules.loader import Rule, load_rules

DEFAULT_ARCH, DEFAULT_STD = "sm_90", "c++17"


@lru_cache(maxsize=None)
def _rules(extra: tuple[str, ...], only: bool) -> tuple[Rule, ...]:
    return tuple(load_rules(list(extra), replace=only))


@dataclass(frozen=True)
class Settings:
    cfg: config.FileConfig | None
    rules: tuple[Rule, ...]
    known: tuple[str, ...]  # every code these rules (and fusionlint itself) can report
    selection: selection.Selection
    exclude: tuple[tuple[str, Path], ...]  # (glob, directory it is relative to)

    def excluded(self, path: Path) -> bool:
        return any(glob_matches(g, path, base) for g, base in self.exclude)


class Checker:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.cwd = Path.cwd()
        self._settings: dict[Path | None, Settings] = {}
        self._noted: set[Path] = set()
        self.db = compile_db.load(Path(args.compile_commands)) if args.compile_commands else None
        self.pfi = selection.parse_per_file_ignores(args.per_file_ignores) if args.per_file_ignores else None
        self.settings(None)  # validates the command line's codes even when no file is checked

    def settings(self, cfg: config.FileConfig | None) -> Settings:
        key = cfg.path if cfg else None
        if key not in self._settings:
            self._settings[key] = self._make_settings(cfg)
        return self._settings[key]

    def _make_settings(self, cfg: config.FileConfig | None) -> Settings:
        a = self.args
        rules = _rules((*(a.ruleset or ()), *(cfg.rulesets if cfg else ())), a.only_rulesets)
        known = (*(r.id for r in rules), *BUILTIN_CODES)

        def check(codes: tuple[str, ...] | list[str], where: str) -> tuple[str, ...]:
            return selection.check_codes(codes, known, where)

        def pick(option: str, cli: list[str] | None, key: str) -> tuple[str, ...] | None:
            """The command line's value, else the config's (None: neither gives one)."""
            if cli is not None:
                return check(cli, option)
            value = getattr(cfg, key.replace("-", "_")) if cfg else None
            return None if value is None else check(value, f"{cfg.path}: {key}")

        select = pick("--select", a.select, "select")
        select = ("FL",) if select is None else select
        ignore = pick("--ignore", a.ignore, "ignore") or ()
        extend = check(a.extend_select or [], "--extend-select") + \
            (check(cfg.extend_select, f"{cfg.path}: extend-select") if cfg else ())
        if self.pfi is not None:
            pfi = tuple(selection.PerFileIgnore(g, self.cwd, check(c, "--per-file-ignores")) for g, c in self.pfi.items())
        elif cfg is not None:
            pfi = tuple(selection.PerFileIgnore(g, cfg.base, check(c, f"{cfg.path}: per-file-ignores"))
                        for g, c in cfg.per_file_ignores)
        else:
            pfi = ()
        if a.exclude is not None:
            exclude = tuple((g, self.cwd) for g in a.exclude)
        else:
            exclude = tuple((g, cfg.base) for g in cfg.exclude) if cfg else ()
        return Settings(cfg, rules, known, selection.Selection(select + extend, ignore, pfi), exclude)

    def _flags(self, path: Path) -> compile_db.CompileFlags:
        db_path = self.db.path if self.db else compile_db.discover(path.resolve().parent)
        if db_path is None:
            return compile_db.CompileFlags()
        db = self.db or compile_db.load(db_path)
        if db.path not in self._noted:
            self._noted.add(db.path)
            for note in db.notes:
                print(f"fusionlint: note: {note}", file=sys.stderr)
        return db.lookup(path) or compile_db.CompileFlags()

    def options(self, path: Path, s: Settings) -> tuple[ParseOptions, str]:
        a, cfg, flags = self.args, s.cfg, self._flags(path)
        options = ParseOptions(
            include_dirs=[*(a.include or ()), *flags.include_dirs, *(cfg.include_dirs if cfg else ())],
            defines=[*(cfg.defines if cfg else ()), *flags.defines, *(a.define or ())],
            extra_args=list(flags.extra_args),
            std=a.std or flags.std or (cfg.std if cfg else None) or DEFAULT_STD,
            use_system_headers=not a.no_system_headers)
        return options, a.arch or flags.arch or (cfg.arch if cfg else None) or DEFAULT_ARCH

    def check(self, path: Path) -> tuple[list[Finding], bool] | None:
        """The reported findings of one file and whether it failed; None when excluded."""
        from fusionlint.pipeline import check_file

        s = self.settings(config.config_for_file(path))
        if s.excluded(path):
            return None
        options, arch = self.options(path, s)
        result = check_file(path, list(s.rules), options, arch)
        if result.skipped:
            print(f"fusionlint: {path}: skipped: {result.skipped}", file=sys.stderr)
        if result.error:
            print(f"fusionlint: {path}: {result.error}", file=sys.stderr)
        kept = suppress.apply(result.findings, [str(path)], s.known)
        return [f for f in kept if s.selection.enabled(f.code, f.path)], bool(result.error)

    def all_rules(self) -> list[Rule]:
        by_id = {r.id: r for s in self._settings.values() for r in s.rules}
        return sorted(by_id.values(), key=lambda r: r.id)


def output_format(args: argparse.Namespace) -> str:
    if args.output_format:
        return args.output_format
    github = os.environ.get("GITHUB_ACTIONS", "").strip().lower()
    return "github" if github not in ("", "0", "false") else "text"


def run_check(args: argparse.Namespace, files: list[Path]) -> int:
    config.config_for_dir.cache_clear()
    config.load_config.cache_clear()
    compile_db.discover.cache_clear()
    compile_db.load.cache_clear()
    if args.update_baseline and not args.baseline:
        raise UsageError("--update-baseline needs --baseline FILE")
    checker = Checker(args)
    findings: set[Finding] = set()
    checked: list[str] = []
    failed = 0
    for f in files:
        outcome = checker.check(f)
        if outcome is None:
            continue
        checked.append(str(f))
        findings.update(outcome[0])
        failed += outcome[1]
    ordered = sorted(findings, key=lambda x: x.sort_key())
    if args.update_baseline:
        n = baseline.write(ordered, Path(args.baseline))
        print(f"fusionlint: recorded {n} finding(s) in {args.baseline}", file=sys.stderr)
        return EXIT_CLEAN
    if args.baseline:
        ordered = baseline.filter_new(ordered, Path(args.baseline))
    fmt = output_format(args)
    color = fmt == "text" and not args.output_file and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    ctx = ReportContext(project_root(), checked, checker.all_rules(), args.show_source, color)
    out = render(fmt, ordered, ctx)
    if args.statistics:
        from fusionlint.report.text import format_statistics

        stats = format_statistics(ordered)
        if fmt == "text":
            out += stats
        else:  # keep machine-readable output parseable
            sys.stderr.write(stats)
    if args.output_file:
        try:
            Path(args.output_file).write_text(out, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{args.output_file}: cannot write: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(out)
    if checked and failed == len(checked):
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if any(x.severity in ("error", "warning") for x in ordered) else EXIT_CLEAN
