"""fusionlint never executes or loads anything from the scanned project: the compiler of a
compilation database is never run; plugin, response-file and tool-path flags are dropped;
rulesets are data (YAML safe loading only); and a check opens no network connection and
starts no program. (tests/test_compile_db.py has the first marker test; these add the other
spellings, a response file outside the project and the command-string form.)"""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import codes, run_cli
from conftest import ROOT

# FL100 at 6:3; a second one at 10:3 only when FROM_FLAGS is defined (by a file that must not be read).
SOURCE = """\
#include <cstdint>
#include <cublasLt.h>

void configure(cublasLtMatmulDesc_t desc) {
  int64_t transa = CUBLAS_OP_T;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa));
#ifdef FROM_FLAGS
  int64_t transb = CUBLAS_OP_T;

  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb));
#endif
}
"""


def _marker_script(path: Path, marker: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\n")
    path.chmod(0o755)
    return path


def _plugin(tmp_path: Path, marker: Path) -> Path:
    """A shared object whose constructor writes ``marker`` (a text file where there is no C compiler:
    loading it would then fail, but the test still shows that nothing tried)."""
    so = tmp_path / "plugins" / "libevil.so"
    so.parent.mkdir()
    if shutil.which("cc"):
        c = tmp_path / "plugins" / "evil.c"
        c.write_text('#include <stdio.h>\n__attribute__((constructor)) static void m(void) '
                     f'{{ FILE *f = fopen("{marker}", "a"); if (f) {{ fputs("loaded\\n", f); fclose(f); }} }}\n')
        subprocess.run(["cc", "-shared", "-fPIC", "-o", str(so), str(c)], check=True)
    else:
        so.write_text("not a shared object")
    return so


@pytest.fixture
def hostile_project(tmp_path: Path) -> dict:
    """A project whose compilation database tries every way to run or load code, and a response
    file outside the project that would define FROM_FLAGS and load the plugin."""
    project, outside = tmp_path / "project", tmp_path / "elsewhere"
    marker = tmp_path / "MARKER"
    src = project / "src" / "gemm.cpp"
    src.parent.mkdir(parents=True)
    src.write_text(SOURCE)
    cc = _marker_script(project / "tools" / "evil-cc", marker)
    tool_dir = project / "tools" / "bin"
    for tool in ("ld", "as", "cc1plus", "clang", "nvcc", "cicc", "ptxas"):
        _marker_script(tool_dir / tool, marker)
    so = _plugin(tmp_path, marker)
    outside.mkdir()
    rsp = outside / "flags.rsp"
    rsp.write_text(f"-DFROM_FLAGS=1 -fplugin={so}\n")
    flags = [f"-fplugin={so}", f"-fpass-plugin={so}", "-Xclang", "-load", "-Xclang", str(so),
             "-Xclang", "-plugin", "-Xclang", "evil", "-Xclang", "-add-plugin", "-Xclang", "evil",
             "-Xclang", f"-plugin-arg-evil={so}", "-mllvm", f"-load={so}", f"-Xcompiler=-fplugin={so}",
             f"--compiler-options=-fplugin={so},-B{tool_dir}", f"-B{tool_dir}", "-B", str(tool_dir),
             "-ccbin", str(cc), f"--compiler-bindir={cc}", f"@{rsp}", "--options-file", str(rsp), "-optf", str(rsp)]
    db = project / "build" / "compile_commands.json"
    db.parent.mkdir()
    db.write_text(json.dumps([
        {"directory": str(project / "build"), "file": str(src),
         "command": " ".join([str(cc), *flags, "-c", str(src), "-o", "gemm.o"])},
    ]))
    return {"project": project, "src": src, "db": db, "marker": marker, "so": so, "rsp": rsp, "flags": flags,
            "cc": cc}


def test_nothing_named_in_the_database_runs_or_loads(hostile_project: dict) -> None:
    h = hostile_project
    rc, out, err = run_cli("--no-system-headers", h["src"])  # the database is found by walking up
    assert rc == 1 and codes(out) == [("gemm.cpp", 6, "FL100")], err  # FROM_FLAGS never defined
    assert not h["marker"].exists(), h["marker"].read_text()
    rc, out, err = run_cli("--no-system-headers", "-p", h["db"], h["src"])
    assert rc == 1 and codes(out) == [("gemm.cpp", 6, "FL100")], err
    assert not h["marker"].exists()


def test_dropped_flags_are_recorded(hostile_project: dict) -> None:
    from fusionlint.run import compile_db

    compile_db.load.cache_clear()
    db = compile_db.load(hostile_project["db"])
    text = "\n".join(db.dropped)
    assert all(line.startswith(f"{hostile_project['db']}: entry 1: dropped ") for line in db.dropped)
    so, rsp = hostile_project["so"], hostile_project["rsp"]
    for needle in (f"-fplugin={so}: loads a compiler plugin", f"-fpass-plugin={so}", "-Xclang -load",
                   "-Xclang -plugin", "-Xclang -add-plugin", f"-mllvm -load={so}", f"@{rsp}: response files",
                   f"--options-file {rsp}", f"-ccbin {hostile_project['cc']}: names a compiler"):
        assert needle in text, needle
    assert db.lookup(hostile_project["src"]).defines == ()


def test_verbose_reports_dropped_flags(hostile_project: dict) -> None:
    h = hostile_project
    rc, out, err = run_cli("--no-system-headers", "-v", "-p", h["db"], h["src"])
    assert rc == 1 and codes(out) == [("gemm.cpp", 6, "FL100")]
    assert f"fusionlint: note: {h['db']}: entry 1: dropped -fplugin={h['so']}: loads a compiler plugin" in err
    assert f"dropped @{h['rsp']}: response files are not read" in err
    rc, _, err = run_cli("--no-system-headers", "-p", h["db"], h["src"])
    assert "dropped" not in err  # only at verbose level


@pytest.mark.parametrize("tag", [
    "!!python/object/apply:os.system ['touch {marker}']",
    "!!python/object/new:subprocess.Popen [['touch', '{marker}']]",
    "!!python/object/apply:subprocess.check_call [['touch', '{marker}']]",
    "rules: !!python/name:os.system",
    "rules:\n  - !!python/object/apply:builtins.exec ['open(\"{marker}\", \"w\")']",
])
def test_rulesets_cannot_run_code(tmp_path: Path, tag: str) -> None:
    marker = tmp_path / "pwned"
    rules = tmp_path / "rules.yaml"
    rules.write_text(tag.format(marker=marker) + "\n")
    src = tmp_path / "gemm.cpp"
    src.write_text(SOURCE)
    rc, out, err = run_cli("--no-system-headers", "--ruleset", rules, src)
    assert (rc, out) == (2, "") and err.count("\n") == 1 and err.startswith(f"fusionlint: error: {rules}:")
    assert not marker.exists()


def test_yaml_is_only_read_with_safe_loaders() -> None:
    """Every yaml.load/load_all in the package names a safe loader; no unsafe entry point appears."""
    unsafe = {"unsafe_load", "unsafe_load_all", "full_load", "full_load_all", "FullLoader", "UnsafeLoader", "Loader"}
    for path in sorted((ROOT / "fusionlint").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        safe_names = {"SafeLoader", "CSafeLoader"}
        for node in ast.walk(tree):  # module-level aliases such as _LOADER = getattr(yaml, "CSafeLoader", ...)
            if isinstance(node, ast.Assign) and "SafeLoader" in ast.unparse(node.value) \
                    and "Loader" not in ast.unparse(node.value).replace("SafeLoader", ""):
                safe_names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "yaml":
                assert node.attr not in unsafe, f"{path}:{node.lineno}: yaml.{node.attr}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                    "load", "load_all") and isinstance(node.func.value, ast.Name) and node.func.value.id == "yaml":
                loader = next((k.value for k in node.keywords if k.arg == "Loader"),
                              node.args[1] if len(node.args) > 1 else None)
                text = ast.unparse(loader) if loader is not None else ""
                assert text.split(".")[-1] in safe_names, f"{path}:{node.lineno}: yaml.{node.func.attr}(Loader={text})"


def test_a_check_opens_no_connection_and_starts_no_program(tmp_path: Path, monkeypatch) -> None:
    """The whole check (workers included: they are forked and inherit the traps) with every way to
    reach the network or start a program replaced by a trap that leaves a trace and fails."""
    import ctypes
    import socket

    src = tmp_path / "gemm.cpp"
    src.write_text('#include "http://example.com/evil.h"\n#include <https://example.com/x.h>\n' + SOURCE)
    # warm up first: libclang itself is loaded once, before the traps
    assert run_cli("--no-system-headers", "--no-cache", src)[0] == 1
    trace = tmp_path / "TRACE"

    def trap(name: str):
        def f(*args, **kwargs):
            with open(trace, "a") as t:
                t.write(f"{name} {args!r:.200}\n")
            raise OSError(f"{name} is not allowed during a check")
        return f

    for mod, names in ((socket, ["create_connection", "getaddrinfo", "gethostbyname"]),
                       (os, ["system", "popen", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp",
                             "execvpe", "execl", "execlp", "spawnv", "spawnve"]),
                       (subprocess, ["Popen", "run", "call", "check_call", "check_output", "getoutput"])):
        for name in names:
            if hasattr(mod, name):
                monkeypatch.setattr(mod, name, trap(f"{mod.__name__}.{name}"))
    monkeypatch.setattr(socket.socket, "connect", trap("socket.connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", trap("socket.connect_ex"))
    load, cdll = ctypes.cdll.LoadLibrary, ctypes.CDLL

    def only_libclang(real, name: str):
        def f(lib, *args, **kwargs):
            if "libclang" in os.path.basename(str(lib)):  # the parser itself (each forked worker loads it)
                return real(lib, *args, **kwargs)
            return trap(name)(lib, *args, **kwargs)
        return f

    monkeypatch.setattr(ctypes, "CDLL", only_libclang(cdll, "ctypes.CDLL"))
    monkeypatch.setattr(ctypes.cdll, "LoadLibrary", only_libclang(load, "ctypes.cdll.LoadLibrary"))
    for fmt in ("text", "sarif"):
        rc, out, err = run_cli("--no-system-headers", "--no-cache", "--output-format", fmt, src)
        assert rc == 1 and "FL100" in out, err
    rc, out, err = run_cli("rule", "FL100")
    assert rc == 0
    assert not trace.exists(), trace.read_text()


def test_the_package_imports_no_network_client() -> None:
    for path in sorted((ROOT / "fusionlint").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert name.split(".")[0] not in ("socket", "requests", "httpx", "ftplib", "smtplib", "telnetlib") \
                    and name not in ("urllib.request", "http.client"), f"{path}:{node.lineno}: import {name}"


@pytest.mark.parametrize("setting", [
    'include-dirs = ["-fplugin={so}", "-Xclang", "-load", "{so}"]',
    'defines = ["X -fplugin={so}", "-fplugin={so}", "Y=1 -Xclang -load -Xclang {so}"]',
    'std = "c++17 -fplugin={so}"',
])
def test_configuration_values_cannot_smuggle_flags(tmp_path: Path, setting: str) -> None:
    """Values from fusionlint.toml reach libclang as single arguments (-I DIR, -DNAME, -std=X),
    never split into flags: nothing is loaded, whatever the values say."""
    marker = tmp_path / "MARKER"
    so = _plugin(tmp_path, marker)
    (tmp_path / "fusionlint.toml").write_text(setting.format(so=so) + "\n")
    src = tmp_path / "gemm.cpp"
    src.write_text(SOURCE)
    rc, out, err = run_cli("--no-system-headers", src)
    assert rc in (1, 2) and "Traceback" not in err and err.count("fusionlint: internal error") == 0, err
    assert not marker.exists()
