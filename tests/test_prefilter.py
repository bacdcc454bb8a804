"""Pre-filter: files that cannot hold a cuBLASLt/CUTLASS configuration are passed over without
libclang, and a configuration reached only through headers is never hidden."""
from __future__ import annotations

import json
import os
from pathlib import Path

from cli_helpers import codes, run_cli
from fusionlint.prefilter import Prefilter

SET_TRANSA = """
void set_transa(cublasLtMatmulDesc_t desc) {
  long long t = CUBLAS_OP_T;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def stats(tmp_path: Path, monkeypatch) -> Path:
    target = tmp_path / "stats.json"
    monkeypatch.setenv("FUSIONLINT_STATS", str(target))
    return target


def test_tokens_and_includes_decide(tmp_path: Path) -> None:
    pf = Prefilter()
    inc = tmp_path / "include"
    write(inc / "gemm" / "lt.h", "#pragma once\n#include <cublasLt.h>\n")
    write(inc / "wrap.h", '#pragma once\n#include "gemm/lt.h"\n')
    write(inc / "plain.h", "#pragma once\n#include <vector>\nint plain();\n")
    write(inc / "cute_user.h", "namespace x { using namespace cute; }\n")
    # a cycle: a.h -> b.h -> a.h, and b.h also reaches a relevant header
    write(inc / "a.h", '#include "b.h"\n')
    write(inc / "b.h", '#include "a.h"\n#include "gemm/lt.h"\n')
    src = tmp_path / "src"
    cases = {
        "direct.cpp": ("#include <cublasLt.h>\n", [], True),
        "cutlass.cu": ("using T = cutlass::half_t;\n", [], True),
        "none.cpp": ("#include <vector>\n#include <cstdio>\nint main() { return 0; }\n", [], False),
        "plain_inc.cpp": ('#include "plain.h"\n', ["-I", str(inc)], False),
        "through_wrapper.cpp": ('#include "wrap.h"\nint f();\n', ["-I", str(inc)], True),
        "wrapper_not_on_path.cpp": ('#include "wrap.h"\nint f();\n', [], False),  # libclang: empty stand-in
        "angle_to_project.cpp": ("#include <wrap.h>\n", [f"-I{inc}"], True),
        "isystem.cpp": ("#include <cute_user.h>\n", ["-isystem", str(inc)], True),
        "cycle.cpp": ('#include "a.h"\n', ["-I", str(inc)], True),
        "computed.cpp": ("#define H <vector>\n#include H\n", [], True),  # cannot tell without preprocessing
        "forced.cpp": ("int f();\n", ["-include", str(inc / "wrap.h")], True),
    }
    for name, (text, args, expected) in cases.items():
        f = write(src / name, text)
        assert pf.relevant(str(f), args) is expected, name
    # a second file sharing the cycle, after the cycle's headers were memoised
    f = write(src / "cycle2.cpp", '#include "b.h"\n')
    assert pf.relevant(str(f), ["-I", str(inc)]) is True
    # a macro given on the command line can name the API
    f = write(src / "by_macro.cpp", "int main() { GEMM(); }\n")
    assert pf.relevant(str(f), [], ["GEMM()=cublasLtMatmul(0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0)"]) is True
    assert pf.relevant(str(f), [], ["N=4"]) is False


def test_doubt_means_parse(tmp_path: Path) -> None:
    pf = Prefilter()
    binary = tmp_path / "blob.h"
    binary.write_bytes(b"\x00\x01binary")
    assert pf.relevant(str(binary), []) is True  # the pipeline reports it as skipped
    missing = tmp_path / "gone.cpp"
    assert pf.relevant(str(missing), []) is True  # the pipeline reports FL000


def test_prefiltered_tree_is_not_parsed_and_reports_nothing(tmp_path: Path, monkeypatch) -> None:
    target = stats(tmp_path, monkeypatch)
    for i in range(300):
        write(tmp_path / "tree" / f"d{i % 7}" / f"f{i}.cpp",
              f"#include <vector>\n#include \"f{i}.h\"\nint f{i}(int x) {{ return x * {i}; }}\n")
    # an unrelated file with an unused suppression still gets its FL001
    write(tmp_path / "tree" / "sup.cpp", "int g() { return 1; }  // fusionlint: ignore[FL100]\n")
    rc, out, err = run_cli("--no-system-headers", tmp_path / "tree")
    data = json.loads(target.read_text())
    assert data["files"] == 301 and data["prefiltered"] == 301 and data["parsed"] == 0
    assert codes(out) == [("sup.cpp", 1, "FL001")] and rc == 1 and err == ""


def test_configuration_behind_a_wrapper_header_is_still_found(tmp_path: Path, monkeypatch) -> None:
    """The main file names neither API: the tokens sit in a header found through -I. Its finding
    must be reported, exactly as without the pre-filter."""
    target = stats(tmp_path, monkeypatch)
    inc = tmp_path / "include"
    write(inc / "lt_wrap.h", "#pragma once\n#include <cublasLt.h>\n"
          "#define DESC_T cublasLtMatmulDesc_t\n"
          "#define SET_TRANSA(d, v) cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &v, sizeof(v))\n"
          "#define OP_T CUBLAS_OP_T\n")
    main = write(tmp_path / "src" / "main.cpp",
                 '#include "lt_wrap.h"\n\nvoid f(DESC_T desc) {\n  long long t = OP_T;\n  SET_TRANSA(desc, t);\n}\n')
    other = write(tmp_path / "src" / "other.cpp", "#include <vector>\nint other() { return 2; }\n")
    rc, out, _ = run_cli("--no-system-headers", "--no-cache", "-I", inc, main, other)
    assert rc == 1 and codes(out) == [("main.cpp", 5, "FL100")]
    data = json.loads(target.read_text())
    assert (data["prefiltered"], data["parsed"]) == (1, 1)
    assert [Path(o["path"]).name for o in data["outcomes"]] == ["main.cpp"]
    rc2, out2, _ = run_cli("--no-system-headers", "--no-cache", "--no-prefilter", "-I", inc, main, other)
    assert (rc2, out2) == (rc, out)
    assert json.loads(target.read_text())["parsed"] == 2


def test_unreadable_file_is_reported_not_skipped(tmp_path: Path) -> None:
    f = write(tmp_path / "locked.cpp", "int x;\n")
    os.chmod(f, 0)
    try:
        if os.access(f, os.R_OK):  # running as root: nothing is unreadable
            return
        rc, out, _ = run_cli("--no-system-headers", "--no-cache", f)
        assert codes(out) == [("locked.cpp", 1, "FL000")] and rc == 2
    finally:
        os.chmod(f, 0o644)


def test_every_gemm_fixture_passes_the_filter() -> None:
    """Every fixture and reference program with a GEMM reaches libclang (cheap: no parse)."""
    from conftest import FIXTURES

    pf = Prefilter()
    roots = [FIXTURES / "cublaslt", FIXTURES / "cutlass", FIXTURES.parent / "kernels_ref"]
    files = [f for r in roots for f in sorted(r.rglob("*")) if f.suffix in (".cpp", ".cu", ".cuh", ".h", ".hpp")]
    assert len(files) > 100
    assert [f for f in files if not pf.relevant(str(f), [])] == []
    assert not pf.relevant(str(FIXTURES / "mixed" / "plain_kernel.cu"), [])
