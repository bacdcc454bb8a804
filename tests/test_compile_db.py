"""compile_commands.json: per-file flags reach the parser, nvcc flags are translated, flags
that load code are dropped, and nothing named in the database is ever executed."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import FL117, codes, guarded, project, run_cli
from fusionlint.run.compile_db import CompileFlags, translate

PLUGIN_FLAGS = ["-fplugin={p}", "-fpass-plugin={p}", "-Xclang", "-load", "-Xclang", "{p}", "-Xclang", "-plugin",
                "-Xclang", "evil", "-Xclang", "-add-plugin", "-Xclang", "evil", "-Xcompiler=-fplugin={p}"]


def test_translate_nvcc_command() -> None:
    args = ("-forward-unknown-to-host-compiler -DFOO=1 -D BAR -UBAZ -Iinc -I /abs/inc -isystem /sys -isystemsys2 "
            "--expt-relaxed-constexpr --extended-lambda -std=c++20 -gencode arch=compute_80,code=sm_80 "
            "--generate-code=arch=compute_90a,code=[sm_90a] -Xcompiler=-fPIC,-DHOST=2 -Xcompiler -Wall "
            "-Xptxas -v -ccbin /opt/evil/g++ -x cu -c src/a.cu -o a.o -MD -MF a.d @flags.rsp "
            "--options-file more.txt").split()
    flags = translate(args, Path("/proj/build"))
    assert flags == CompileFlags(include_dirs=("/proj/build/inc", "/abs/inc"), defines=("FOO=1", "BAR", "HOST=2"),
                                 std="c++20", arch="sm_90a",
                                 extra_args=("-UBAZ", "-isystem", "/sys", "-isystem", "/proj/build/sys2"))
    assert translate(["-arch=sm_90a"], Path("/")).arch == "sm_90a"
    assert translate(["--gpu-architecture", "sm_80", "--std", "c++17"], Path("/")) == CompileFlags(std="c++17", arch="sm_80")
    assert translate(["--cuda-gpu-arch=sm_90"], Path("/")).arch == "sm_90"


def test_code_loading_flags_are_always_dropped() -> None:
    flags = translate([f.format(p="/x/plugin.so") for f in PLUGIN_FLAGS] + ["@/x/resp.rsp"], Path("/x"))
    assert flags == CompileFlags()


def _db(tmp_path: Path, entries: list[dict]) -> Path:
    (tmp_path / "build").mkdir(exist_ok=True)
    db = tmp_path / "build" / "compile_commands.json"
    db.write_text(json.dumps(entries))
    return db


def test_database_flags_reach_the_parser_and_arch_the_rules(tmp_path: Path) -> None:
    src = guarded(tmp_path)
    (fl117,) = project(tmp_path, FL117)
    build = str(tmp_path / "build")
    nvcc = "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler --expt-relaxed-constexpr"
    _db(tmp_path, [
        {"directory": build, "file": "../src/guarded.cpp",
         "command": f"{nvcc} -I../include -DCHECK_TRANSA=1 -std=c++17 -gencode arch=compute_90a,code=sm_90a "
                    "-x cu -c ../src/guarded.cpp -o guarded.o"},
        {"directory": build, "file": str(fl117), "arguments": ["nvcc", "-arch=sm_80", "-c", str(fl117)]},
    ])
    rc, out, err = run_cli(src, fl117)  # found by walking up from each file (…/build/compile_commands.json)
    assert rc == 1 and codes(out) == [("guarded.cpp", 21, "FL100")], err  # FL117 is sm_90 only: sm_80 here
    assert codes(run_cli("--arch", "sm_90a", fl117)[1]) == [(fl117.name, 24, "FL117")]  # command line wins
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "compile_commands.json").write_text("[]")
    # -p: only that database (a directory works): no flags for either file, default arch sm_90
    assert codes(run_cli("-p", other, src, fl117)[1]) == [(fl117.name, 24, "FL117")]


def test_nothing_in_the_database_is_executed_or_loaded(tmp_path: Path) -> None:
    src = guarded(tmp_path)
    marker_cc, marker_plugin = tmp_path / "compiler-ran", tmp_path / "plugin-loaded"
    cc = tmp_path / "evil-cc"
    cc.write_text(f"#!/bin/sh\ntouch {marker_cc}\n")
    cc.chmod(0o755)
    plugin = tmp_path / "plugin.so"
    if shutil.which("cc"):
        c = tmp_path / "plugin.c"
        c.write_text('#include <stdio.h>\n__attribute__((constructor)) static void m(void) '
                     f'{{ FILE *f = fopen("{marker_plugin}", "w"); if (f) fclose(f); }}\n')
        subprocess.run(["cc", "-shared", "-fPIC", "-o", str(plugin), str(c)], check=True)
    else:
        plugin.write_text("not a shared object")
    rsp = tmp_path / "build" / "flags.rsp"
    rsp.parent.mkdir()
    rsp.write_text("-DCHECK_TRANSA=1\n")  # were the response file read, FL100 would appear
    args = [str(cc), "-I../include", *(f.format(p=plugin) for f in PLUGIN_FLAGS), f"@{rsp}",
            "--options-file", str(rsp), "-ccbin", str(cc), "-c", str(src)]
    db = _db(tmp_path, [{"directory": str(tmp_path / "build"), "file": str(src), "arguments": args}])
    rc, out, err = run_cli("-p", db, src)
    assert (rc, out) == (0, ""), err
    assert not marker_cc.exists() and not marker_plugin.exists()


def test_missing_files_are_skipped_with_a_note(tmp_path: Path) -> None:
    src = guarded(tmp_path)
    db = _db(tmp_path, [{"directory": "/nonexistent", "file": "gone.cu", "command": "nvcc -c gone.cu"},
                        {"directory": "..", "file": "src/guarded.cpp",  # relative to the database's directory
                         "arguments": ["c++", "-Iinclude", "-DCHECK_TRANSA"]}])
    rc, out, err = run_cli(src)
    assert rc == 1 and codes(out) == [("guarded.cpp", 21, "FL100")]
    assert err == f"fusionlint: note: {db}: entry 1: gone.cu: no such file; entry skipped\n"


@pytest.mark.parametrize("content, problem", [
    ("{not json", "malformed compilation database"),
    ('{"file": "a.cu"}', "expected a JSON array"),
    ('[{"file": "a.cu"}]', "entry 1: malformed compilation database: needs 'directory' and 'file'"),
    ('[{"directory": "/", "file": "a.cu"}]', "entry 1: needs 'arguments'"),
])
def test_malformed_database_is_one_line_exit_two(tmp_path: Path, content: str, problem: str) -> None:
    (fl117,) = project(tmp_path, FL117)
    db = tmp_path / "compile_commands.json"
    db.write_text(content)
    for argv in (["-p", str(db)], []):  # given, or discovered
        rc, out, err = run_cli(*argv, fl117)
        assert rc == 2 and out == "" and err.count("\n") == 1
        assert err.startswith(f"fusionlint: error: {db}: ") and problem in err
