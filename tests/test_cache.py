"""Result cache: a warm run says exactly what the cold one said without parsing; anything that can
change a file's findings (the file, a header it includes, a header that appears, the rules,
fusionlint itself) makes it parse again; broken entries and parallel runs are harmless."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from cli_helpers import codes, run_cli
from conftest import ROOT
from fusionlint.run import cache

LT = """#include <cublasLt.h>
#include "types.h"

void set_transa(cublasLtMatmulDesc_t desc) {
  transa_t t = CUBLAS_OP_T;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
}
"""
OK = LT.replace('#include "types.h"\n', "").replace("transa_t t", "int32_t t")


def aged(*paths: Path) -> None:
    """Files written a while ago (a header modified in the last second is never trusted to the cache)."""
    past = time.time() - 30
    for p in paths:
        os.utime(p, (past, past))


def project(tmp_path: Path) -> dict[str, Path]:
    src = tmp_path / "src"
    src.mkdir(parents=True)
    files = {"lt": src / "lt.cpp", "ok": src / "ok.cpp", "types": src / "types.h", "plain": src / "plain.cpp",
             "blob": src / "blob.h"}
    files["lt"].write_text(LT)
    files["ok"].write_text(OK)
    files["types"].write_text("typedef long long transa_t;\n")
    files["plain"].write_text("int plain() { return 1; }\n")
    files["blob"].write_bytes(b"\x00\x01\x02 not source")
    aged(*files.values())
    return files


def lint(tmp_path: Path, monkeypatch, *args) -> tuple[int, str, str, dict]:
    target = tmp_path / "stats.json"
    monkeypatch.setenv("FUSIONLINT_STATS", str(target))
    rc, out, err = run_cli("--no-system-headers", "--cache-dir", tmp_path / "cache", *args)
    return rc, out, err, json.loads(target.read_text())


def test_warm_run_is_identical_and_parses_nothing(tmp_path: Path, monkeypatch) -> None:
    f = project(tmp_path)
    src = tmp_path / "src"
    cold = lint(tmp_path, monkeypatch, src)
    assert codes(cold[1]) == [("lt.cpp", 6, "FL100")] and "blob.h: skipped" in cold[2]
    assert (cold[3]["parsed"], cold[3]["prefiltered"], cold[3]["cache_hits"]) == (3, 2, 0)  # plain.cpp, types.h
    warm = lint(tmp_path, monkeypatch, src)
    assert warm[:3] == cold[:3]
    assert (warm[3]["parsed"], warm[3]["cache_hits"]) == (0, 3)
    # selection and suppression are applied after the cache: no new parse needed
    rc, out, _, st = lint(tmp_path, monkeypatch, "--ignore", "FL100", src)
    assert (rc, out, st["parsed"]) == (0, "", 0)
    f["lt"].write_text(LT.replace("  cublasLtMatmulDescSetAttribute", "  // fusionlint: ignore-next-line[FL100]\n"
                                                                      "  cublasLtMatmulDescSetAttribute"))
    aged(f["lt"])
    rc, out, _, st = lint(tmp_path, monkeypatch, src)
    assert (rc, out, st["parsed"]) == (0, "", 1)  # the file changed: parsed again, finding suppressed


def test_header_change_invalidates(tmp_path: Path, monkeypatch) -> None:
    f = project(tmp_path)
    first = lint(tmp_path, monkeypatch, f["lt"])
    assert codes(first[1]) == [("lt.cpp", 6, "FL100")]
    f["types"].write_text("typedef int transa_t;\n")  # now the right size
    rc, out, _, st = lint(tmp_path, monkeypatch, f["lt"])
    assert (rc, out, st["parsed"]) == (0, "", 1)
    f["types"].write_text("typedef long long transa_t;\n")
    aged(f["types"])
    again = lint(tmp_path, monkeypatch, f["lt"])
    assert again[:3] == first[:3]  # the first entry holds again (the header's bytes are the first ones)


def test_header_that_appears_invalidates(tmp_path: Path, monkeypatch) -> None:
    f = project(tmp_path)
    f["types"].unlink()
    f["lt"].write_text(LT.replace('#include "types.h"\n', '#include "late.h"\n#ifdef LONG_TRANSA\n'
                                  "typedef long long transa_t;\n#else\ntypedef int transa_t;\n#endif\n"))
    aged(f["lt"])
    rc, out, _, st = lint(tmp_path, monkeypatch, f["lt"])
    assert (rc, out, st["parsed"]) == (0, "", 1)
    assert lint(tmp_path, monkeypatch, f["lt"])[3]["cache_hits"] == 1
    late = f["lt"].parent / "late.h"
    late.write_text("#define LONG_TRANSA 1\n")
    aged(late)
    rc, out, _, st = lint(tmp_path, monkeypatch, f["lt"])
    assert codes(out) == [("lt.cpp", 11, "FL100")] and st["parsed"] == 1


RULE = """\
rules:
  - id: FL900
    name: my-rule
    severity: warning
    scope: attribute_set
    when: {fact: attribute, eq: CUBLASLT_MATMUL_DESC_TRANSA}
    message: "MESSAGE {attribute}"
    fix: "do not"
    references: [{source: "my notes"}]
"""


def test_ruleset_and_fusionlint_changes_invalidate(tmp_path: Path, monkeypatch) -> None:
    f = project(tmp_path)
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULE.replace("MESSAGE", "first"))
    _, out, _, st = lint(tmp_path, monkeypatch, "--ruleset", rules, f["ok"])
    assert "first CUBLASLT_MATMUL_DESC_TRANSA [FL900]" in out and st["parsed"] == 1
    assert lint(tmp_path, monkeypatch, "--ruleset", rules, f["ok"])[3]["parsed"] == 0
    rules.write_text(RULE.replace("MESSAGE", "second"))
    _, out, _, st = lint(tmp_path, monkeypatch, "--ruleset", rules, f["ok"])
    assert "second CUBLASLT_MATMUL_DESC_TRANSA [FL900]" in out and "first" not in out and st["parsed"] == 1
    # another fusionlint (version or code) never reuses the old results
    monkeypatch.setattr(cache, "fusionlint_key", lambda: "another fusionlint")
    assert lint(tmp_path, monkeypatch, "--ruleset", rules, f["ok"])[3]["parsed"] == 1


def test_corrupt_entries_are_ignored(tmp_path: Path, monkeypatch) -> None:
    f = project(tmp_path)
    cold = lint(tmp_path, monkeypatch, f["lt"], f["ok"])
    entries = sorted((tmp_path / "cache").rglob("results/*/*.json"))
    assert len(entries) == 2
    entries[0].write_text('{"key": "x", "result": ')  # truncated
    entries[1].write_text(json.dumps({"key": entries[1].stem, "deps": [], "absent": [],
                                      "result": {"findings": [{"code": 1}]}}))  # wrong shape
    again = lint(tmp_path, monkeypatch, f["lt"], f["ok"])
    assert again[:3] == cold[:3] and again[3]["parsed"] == 2
    assert all(json.loads(e.read_text())["key"] == e.stem for e in entries)  # rewritten whole
    assert lint(tmp_path, monkeypatch, f["lt"], f["ok"])[3]["cache_hits"] == 2


def test_parallel_runs_share_the_cache_safely(tmp_path: Path) -> None:
    f = project(tmp_path)
    env = {**os.environ, "FUSIONLINT_CACHE_DIR": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "fusionlint.cli", "--no-system-headers", str(f["lt"])]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
             for _ in range(3)]
    results = [(p.wait(), p.stdout.read(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert len(set(results)) == 1 and results[0][0] == 1 and "[FL100]" in results[0][1]
    assert not list((tmp_path / "cache").rglob(".tmp-*"))
    warm = subprocess.run(cmd, capture_output=True, text=True, env={**env, "FUSIONLINT_STATS": str(tmp_path / "s")},
                          cwd=ROOT)
    assert (warm.returncode, warm.stdout, warm.stderr) == results[0]
    assert json.loads((tmp_path / "s").read_text())["cache_hits"] == 1


def test_no_cache_writes_nothing(tmp_path: Path, monkeypatch) -> None:
    f = project(tmp_path)
    monkeypatch.setenv("FUSIONLINT_CACHE_DIR", str(tmp_path / "env-cache"))
    rc, out, _ = run_cli("--no-system-headers", "--no-cache", f["lt"])
    assert rc == 1 and "[FL100]" in out
    assert not (tmp_path / "env-cache").exists()
    run_cli("--no-system-headers", f["lt"])  # without --no-cache the environment's directory is used
    assert list((tmp_path / "env-cache").rglob("results/*/*.json"))


def test_default_location(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FUSIONLINT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.default_dir() == tmp_path / "xdg" / "fusionlint"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.default_dir() == tmp_path / "home" / ".cache" / "fusionlint"


def test_size_bound_evicts_least_recently_used(tmp_path: Path) -> None:
    c = cache.Cache(tmp_path, size_mb=1)  # evicts down to 80% of 1 MiB
    now = time.time()
    paths = []
    for i in range(8):  # 8 x 256 KiB = 2 MiB, the oldest first
        p = c.base / "results" / "aa" / f"{i}.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x" * (256 << 10))
        os.utime(p, (now - 100 + i, now - 100 + i))
        paths.append(p)
    stale = c.base / "results" / "aa" / ".tmp-dead"
    stale.write_bytes(b"half")
    os.utime(stale, (now - 7200, now - 7200))
    c.evict()
    assert [p.exists() for p in paths] == [False] * 5 + [True] * 3
    assert not stale.exists()
    # precompiled headers go before results, whatever their age
    pch = c.base / "pch" / "k.pch"
    pch.parent.mkdir(parents=True)
    pch.write_bytes(b"x" * (700 << 10))
    c.evict()
    assert not pch.exists() and [p.exists() for p in paths[5:]] == [True] * 3
