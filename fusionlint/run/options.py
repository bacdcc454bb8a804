"""The options of a run, typed and built once from the command line.

``check_options`` makes the :class:`CheckOptions` of ``check``, ``test-rules`` and the language
server's checks from their argparse namespace (an option a command does not have is at ``check``'s
default); ``verify_options`` the :class:`VerifyOptions` of ``verify``. These commands see only
these objects, never the namespace.

Per file, :func:`file_options` joins a run's options with the file's ``compile_commands.json``
entry (``compile_db.py``) and its nearest ``[tool.fusionlint]`` config (``config.py``): the one
place where the command line wins over the compilation database, and the database over the config,
for include dirs, macros, standard and arch (``--std`` and ``--arch`` replace, ``-I`` and ``-D``
add). The defaults (``c++17``, ``sm_90``, the time limits) are those of ``fusionlint.defaults``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from fusionlint.defaults import (
    CHECK_TIMEOUT, DEFAULT_ARCH, DEFAULT_STD, DEVICE_BODIES, MAX_FILES, NO_DEVICE_BODIES_MACRO, VERIFY_ARCH,
    VERIFY_BUILD_TIMEOUT,
)
from fusionlint.frontend.clang.parse import ParseOptions

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up (~6 ms)

if TYPE_CHECKING:
    import argparse

    from fusionlint.run.compile_db import CompileFlags
    from fusionlint.run.config import FileConfig


@dataclass(frozen=True)
class CheckOptions:
    """What ``check`` (and ``test-rules``, and the language server's checks) were asked for. A list
    option is a tuple, None where the command line did not give it (``--select`` given as nothing
    selects nothing; not given, the config's or the default selection applies)."""

    # the front end: the command line's part of each file's ParseOptions (see file_options)
    include: tuple[str, ...] = ()
    define: tuple[str, ...] = ()
    std: str | None = None
    no_system_headers: bool = False
    device_bodies: bool | None = None  # None: the config's, else defaults.DEVICE_BODIES
    arch: str | None = None
    compile_commands: str | None = None  # -p: one database for every file (else the nearest one)
    # the rules and what is reported
    ruleset: tuple[str, ...] = ()
    only_rulesets: bool = False
    support_table: str | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[str, ...] = ()
    exclude: tuple[str, ...] | None = None
    baseline: str | None = None
    update_baseline: bool = False
    # the report
    output_format: str | None = None  # None: text, github under GitHub Actions (check.output_format)
    output_file: str | None = None
    show_source: bool = False
    statistics: bool = False
    exit_zero: bool = False
    verbose: bool = False
    quiet: bool = False
    # speed
    jobs: int | None = None  # None: every core
    timeout: float = float(CHECK_TIMEOUT)
    max_files: int = MAX_FILES
    no_cache: bool = False
    cache_dir: str | None = None
    no_pch: bool = False
    no_prefilter: bool = False
    no_index: bool = False  # do not use the project index (``fusionlint index``) even where one exists


@dataclass(frozen=True)
class VerifyOptions:
    """What ``verify`` was asked for."""

    include: tuple[str, ...] = ()
    define: tuple[str, ...] = ()
    std: str | None = None
    no_system_headers: bool = False
    device_bodies: bool | None = None
    arch: str = VERIFY_ARCH
    ruleset: tuple[str, ...] = ()
    config: tuple[int, ...] | None = None  # only these configurations (1-based)
    keep: str | None = None
    jobs: int | None = None  # None: the number of CPUs
    timeout: int = VERIFY_BUILD_TIMEOUT  # of one build, in seconds
    time_limit: int | None = None  # of the whole run
    json: str | None = None
    verbose: bool = False

    def parse_options(self) -> ParseOptions:
        return parse_options(self.include, self.define, self.std, self.no_system_headers, self.device_bodies)


def _typed(cls: type, namespace: argparse.Namespace | None):
    """An instance of the options dataclass ``cls`` from the namespace's attributes of the same
    names (lists become tuples); the ones it lacks keep their defaults."""
    given = vars(namespace) if namespace is not None else {}
    values = {}
    for f in dataclasses.fields(cls):
        if f.name in given:
            value = given[f.name]
            values[f.name] = tuple(value) if isinstance(value, list) else value
    for name in ("include", "define", "ruleset", "extend_select", "per_file_ignores"):  # None: not given
        if name in values and values[name] is None:
            values[name] = ()
    return cls(**values)


def check_options(namespace: argparse.Namespace | None = None) -> CheckOptions:
    """The options of ``check`` / ``test-rules`` / the server's checks, from their command line."""
    return _typed(CheckOptions, namespace)


def verify_options(namespace: argparse.Namespace | None = None) -> VerifyOptions:
    """The options of ``verify``, from its command line."""
    return _typed(VerifyOptions, namespace)


def device_body_defines(*choices: bool | None) -> list[str]:
    """The macro that turns the prelude's device-side instantiation off, unless the first choice
    made (the command line's, then the config's; None: not made) or else the default wants it."""
    wanted = next((c for c in choices if c is not None), DEVICE_BODIES)
    return [] if wanted else [NO_DEVICE_BODIES_MACRO]


def parse_options(include: tuple[str, ...] | list[str] | None = (), define: tuple[str, ...] | list[str] | None = (),
                  std: str | None = None, no_system_headers: bool = False,
                  device_bodies: bool | None = None) -> ParseOptions:
    """The front end's options from the command line alone (``facts``, ``graph``, ``probe``,
    ``verify``: no config file or compilation database)."""
    return ParseOptions(include_dirs=list(include or []),
                        defines=[*(define or []), *device_body_defines(device_bodies)], std=std or DEFAULT_STD,
                        use_system_headers=not no_system_headers)


def file_options(opts: CheckOptions, cfg: FileConfig | None, flags: CompileFlags) -> tuple[ParseOptions, str, str]:
    """A file's parse options, its target arch and where the arch came from: the command line over
    its compilation database entry (``flags``) over its config (``cfg``), else the defaults."""
    options = ParseOptions(
        include_dirs=[*opts.include, *flags.include_dirs, *(cfg.include_dirs if cfg else ())],
        defines=[*(cfg.defines if cfg else ()), *flags.defines, *opts.define,
                 *device_body_defines(opts.device_bodies, cfg.device_bodies if cfg else None)],
        extra_args=list(flags.extra_args),
        std=opts.std or flags.std or (cfg.std if cfg else None) or DEFAULT_STD,
        use_system_headers=not opts.no_system_headers)
    if opts.arch:
        arch, where = opts.arch, "--arch"
    elif flags.arch:
        arch, where = flags.arch, flags.arch_from or "compile_commands.json"
    elif cfg is not None and cfg.arch:
        arch, where = cfg.arch, f"{cfg.path}: arch"
    else:
        arch, where = DEFAULT_ARCH, "the default"
    return options, arch, where


def cache_dir(opts: CheckOptions) -> Path | None:
    """The result cache's directory (None: ``--no-cache``)."""
    if opts.no_cache:
        return None
    from fusionlint.run import cache

    return Path(opts.cache_dir) if opts.cache_dir else cache.default_dir()
