"""Run the real command line in-process and build small projects from the repo's fixtures."""
from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

from conftest import FIXTURES
from fusionlint.cli import main

RULES = FIXTURES / "cublaslt" / "rules"
BAD = RULES / "FL100_transa_int64_size.cpp"  # one FL100 error at 19:75 (the buffer argument)
GOOD = RULES / "FL100_transa_int32_ok.cpp"  # clean
FL117 = RULES / "FL117_transc_t.cpp"  # one FL117 error (arch sm_90) at 24:75 (the TRANSC set's buffer)


@contextlib.contextmanager
def chdir(path: Path | None) -> Iterator[None]:
    old = Path.cwd()
    if path is not None:
        os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def run_cli(*argv: str | Path, cwd: Path | None = None) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``fusionlint ARGV``."""
    out, err = io.StringIO(), io.StringIO()
    with chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse usage errors
            rc = exc.code if isinstance(exc.code, int) else 2
    return rc, out.getvalue(), err.getvalue()


def codes(text_output: str) -> list[tuple[str, int, str]]:
    """(file name, line, code) of each finding line of text output."""
    import re

    found = re.findall(r"^(.+?):(\d+):\d+: (?:error|warning|info): .* \[(FL\d{3})\]$", text_output, re.M)
    return [(Path(f).name, int(line), code) for f, line, code in found]


def project(root: Path, *fixtures: Path, subdir: str = "src") -> list[Path]:
    """Copy fixtures (and the probe.h they include) into ``root/subdir`` and return the copies."""
    (root / subdir).mkdir(parents=True, exist_ok=True)
    probe = (FIXTURES / "cublaslt" / "probe.h").read_text(encoding="utf-8")
    real = (FIXTURES.parent / "fusionlint" / "evidence" / "include" / "fusionlint_probe.h").as_posix()
    (root / "probe.h").write_text(probe.replace('"../../fusionlint/evidence/include/fusionlint_probe.h"',
                                                f'"{real}"'), encoding="utf-8")
    out = []
    for f in fixtures:
        dest = root / subdir / f.name
        text = f.read_text(encoding="utf-8").replace('#include "../probe.h"', f'#include "{"../" * (subdir.count("/") + 1)}probe.h"')
        dest.write_text(text, encoding="utf-8")
        out.append(dest)
    return out


def guarded(root: Path) -> Path:
    """``root/src/guarded.cpp``: the FL100 fixture whose bad write is only compiled with
    ``-DCHECK_TRANSA`` and whose buffer type comes from ``transa_type.h`` in ``root/include``
    (so include dirs and macros must reach the parser); the finding is then at line 21."""
    project(root)
    inc = root / "include"
    inc.mkdir(exist_ok=True)
    (inc / "transa_type.h").write_text("#include <cstdint>\ntypedef int64_t transa_t;\n")
    src = root / "src" / "guarded.cpp"
    src.write_text(BAD.read_text().replace('#include "../probe.h"', '#include "../probe.h"\n#include "transa_type.h"')
                   .replace("int64_t transa = CUBLAS_OP_T;", "transa_t transa = CUBLAS_OP_T;")
                   .replace("int main() {", "#ifdef CHECK_TRANSA\nint main() {").rstrip() + "\n#endif\n")
    return src
