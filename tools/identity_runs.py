#!/usr/bin/env python3
"""The package restructure's behaviour-identity runs (docs/restructure-identity.md), for a many-core machine.

Started by tools/identity_runs.sh, which names the inputs. For every commit of the ranges
(parent and end of each range) it makes a worktree from the bundle and runs, from inside the
worktree, with a fresh cache directory per run,

    fusionlint --output-format json --cache-dir C -j J [--timeout 0] fixtures kernels_ref   (check)
    fusionlint test-rules --cache-dir C -j J -q [--timeout 0] fixtures                      (test-rules)
    fusionlint facts fixtures kernels_ref                                                   (facts)

in source mode (PYTHONPATH = the worktree) and in instantiated mode (PYTHONPATH = the worktree
and the unpacked nvidia-cutlass wheel; --timeout 0). fusionlint's dependencies come from SITE
through a `.pth` file of a venv made for the runs (no fusionlint installed anywhere, and none of
the machine's own site-packages), and `fusionlint` is the console script's text.

`facts` has neither -j nor a cache and parses each file in a forked child, one file after the
other, and its output is one JSON list in the sorted order of the files: it is run in shards
(consecutive files of that order, `fusionlint facts FILE...`) side by side, and the whole
command's output is rebuilt from them (the lists joined, written as cmd_facts writes them; the
stderr joined). `combine` writes the rebuilt stdout of a commit and mode.

Work is ordered by importance (see PRIORITY) and packed onto the cores; at --stop-at seconds
the runs still going are stopped (not recorded: a resumed run does them again), a summary is
written and everything recorded is packed into $OUT/identity.tar.xz, which --prev takes to
resume. Outputs are stored once per content (blobs/SHA256), with each run's metadata in
res/COMMIT/MODE/NAME.json.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# (range, parent, end); range 6's end is the rebased split of rules/derived.py (9ed8901, on a51a717:
# the 9e0bb0f that the doc compared was not kept)
RANGES = [("1", "e2801e2", "95b55c5"), ("2", "181c224", "2fa18b5"), ("3", "685a819", "70244b6"),
          ("4", "9c0c0e3", "262b842"), ("5", "45a0b45", "8bac526"), ("6", "a51a717", "9ed8901")]
# what the doc records for source mode (sha256 prefixes), to show the machine gives the same bytes
DOC_SOURCE = {
    ("check", "e2801e2"): "58e2303b8fbb", ("check", "95b55c5"): "58e2303b8fbb",
    ("check", "181c224"): "58e2303b8fbb", ("check", "2fa18b5"): "58e2303b8fbb",
    ("check", "685a819"): "0f15be869071", ("check", "70244b6"): "0f15be869071",
    ("check", "9c0c0e3"): "0f15be869071", ("check", "262b842"): "0f15be869071",
    ("check", "45a0b45"): "0f15be869071", ("check", "8bac526"): "0f15be869071",
    ("facts", "45a0b45"): "02b77f37198c", ("facts", "8bac526"): "02b77f37198c",
    ("test-rules", "181c224"): "0fb4c29ef021", ("test-rules", "2fa18b5"): "0fb4c29ef021",
    ("test-rules", "45a0b45"): "0fb4c29ef021", ("test-rules", "8bac526"): "0fb4c29ef021",
}
# order of the work: (mode, command, ranges), as --order spells it "inst:check:1234,..."; the doc's
# gaps first: instantiated check of ranges 1-4, then test-rules and facts there, then the source-mode
# runs the doc lacks, then instantiated mode over everything for ranges 5 and 6 (the doc has subsets)
PRIORITY = [
    ("inst", "check", "1234"), ("inst", "test-rules", "1234"), ("inst", "facts", "1234"),
    ("src", "test-rules", "134"), ("src", "facts", "12346"),
    ("inst", "check", "56"), ("inst", "test-rules", "56"), ("inst", "facts", "56"),
]
MODES = {"src": "source", "inst": "instantiated"}
CONSOLE_SCRIPT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from fusionlint.cli import entry
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(entry())
"""
T0 = time.monotonic()
LOG = None


def log(msg: str) -> None:
    line = f"[{time.monotonic() - T0:7.1f}s] {msg}"
    print(line, flush=True)
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def sh(cmd, **kw) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout.strip()


# ---------------------------------------------------------------- setup

class Env:
    def __init__(self, ns: argparse.Namespace) -> None:
        self.work = Path(ns.work).resolve()
        self.out = Path(ns.out).resolve()
        self.site = Path(ns.site).resolve()
        self.cutlass = Path(ns.cutlass).resolve()
        self.repo = self.work / "repo.git"
        self.venv = self.work / "venv"
        self.res = self.work / "res"
        self.blobs = self.work / "blobs"
        self.tmp = self.work / "tmp"
        for d in (self.work, self.out, self.res, self.blobs, self.tmp):
            d.mkdir(parents=True, exist_ok=True)
        self.python = self.venv / "bin" / "python"

    def wt(self, sha: str) -> Path:
        return self.work / "wt" / sha[:12]

    def run_env(self, sha: str, mode: str, home: Path) -> dict:
        """The environment of one run: nothing of the caller's but PATH and the locale."""
        pp = [str(self.wt(sha))] + ([str(self.cutlass)] if mode == "inst" else [])
        env = {"PATH": f"{self.venv / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
               "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"), "XDG_DATA_HOME": str(home / "data"),
               "XDG_CONFIG_HOME": str(home / "config"), "TMPDIR": str(home / "t"),
               "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "PYTHONNOUSERSITE": "1", "PYTHONPATH": ":".join(pp)}
        for v in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
            if v in os.environ:
                env[v] = os.environ[v]
        return env


def setup(e: Env, ns: argparse.Namespace, commits: list[str]) -> dict[str, str]:
    """The clone, one worktree per commit, the venv; returns short name -> full sha."""
    if not (e.repo / "HEAD").exists():
        sh(["git", "clone", "--quiet", "--bare", str(Path(ns.bundle).resolve()), str(e.repo)])
    full = {}
    for c in commits:
        full[c] = sh(["git", "-C", str(e.repo), "rev-parse", "--verify", f"{c}^{{commit}}"])
    for c, sha in full.items():
        wt = e.wt(sha)
        if not (wt / ".git").exists():
            shutil.rmtree(wt, ignore_errors=True)
            sh(["git", "-C", str(e.repo), "worktree", "add", "--detach", str(wt), sha])
        if (wt / ".cutlass").exists():
            raise SystemExit(f"{wt}/.cutlass exists")
    if not e.python.exists():
        shutil.rmtree(e.venv, ignore_errors=True)
        subprocess.run([ns.python, "-m", "venv", "--without-pip", str(e.venv)], check=True)
    purelib = sh([str(e.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    Path(purelib, "identity17_site.pth").write_text(f"{e.site}\n")
    script = e.venv / "bin" / "fusionlint"
    script.write_text(CONSOLE_SCRIPT.format(python=e.python))
    script.chmod(0o755)
    return full


VERIFY = r"""
import importlib.util, json, sys
out = {"python": sys.version.split()[0], "executable": sys.executable, "sys_path": sys.path}
import fusionlint
out["fusionlint"] = fusionlint.__file__
spec = importlib.util.find_spec("fusionlint.rulesets")
out["rulesets_spec"] = None if spec is None else (spec.origin or list(spec.submodule_search_locations or []))
try:
    from fusionlint.rules import loader
    out["rulesets_root"] = str(loader._rulesets_root()) if hasattr(loader, "_rulesets_root") else None
except Exception as exc:
    out["rulesets_root"] = f"error: {exc!r}"
for top in ("cutlass_library", "nvidia", "clang", "networkx", "yaml", "jsonschema"):
    s = importlib.util.find_spec(top)
    out["spec_" + top] = None if s is None else (s.origin or list(s.submodule_search_locations or []))
try:
    from fusionlint.frontend.clang import toolchain
    f = getattr(toolchain, "find_header_dirs", None) or (lambda: toolchain.discover(True))
    h = f()
    out["headers"] = {k: [str(p) for p in getattr(h, k)] for k in ("cuda", "cublas", "cutlass")}
except Exception as exc:
    out["headers"] = f"error: {exc!r}"
print(json.dumps(out, indent=1))
"""


def verify(e: Env, sha: str, mode: str) -> tuple[bool, dict]:
    """fusionlint and its rulesets from the worktree; the CUTLASS headers found only in instantiated mode."""
    home = Path(tempfile.mkdtemp(prefix="home-", dir=e.tmp))
    env = e.run_env(sha, mode, home)
    p = subprocess.run([str(e.python), "-c", VERIFY], env=env, cwd=e.wt(sha), capture_output=True, text=True)
    shutil.rmtree(home, ignore_errors=True)
    if p.returncode:
        return False, {"error": p.stderr[-2000:]}
    info = json.loads(p.stdout)
    wt = str(e.wt(sha))
    problems = []
    if not info["fusionlint"].startswith(wt + "/"):
        problems.append("fusionlint not from the worktree")
    rs = info["rulesets_spec"]
    if rs is not None and not str(rs).startswith(wt):
        problems.append("fusionlint.rulesets not from the worktree")
    if info.get("rulesets_root") and not info["rulesets_root"].startswith(wt + "/"):
        problems.append("rulesets root not in the worktree")
    if not str(info["spec_clang"]).startswith(str(e.site)):
        problems.append("clang not from SITE")
    if info["spec_nvidia"] is not None:
        problems.append("an 'nvidia' package is importable (cuBLAS headers from a wheel)")
    if mode == "src" and info["spec_cutlass_library"] is not None:
        problems.append("cutlass_library importable in source mode")
    if mode == "inst" and not str(info["spec_cutlass_library"]).startswith(str(e.cutlass)):
        problems.append("cutlass_library not from CUTLASS in instantiated mode")
    h = info.get("headers")
    if isinstance(h, dict):
        if mode == "src" and h["cutlass"]:
            problems.append("CUTLASS headers found in source mode")
        if mode == "inst" and (not h["cutlass"] or not all(d.startswith(str(e.cutlass)) for d in h["cutlass"])):
            problems.append("CUTLASS headers not (only) from CUTLASS in instantiated mode")
    info["problems"] = problems
    return not problems, info


# ---------------------------------------------------------------- tasks

class Task:
    def __init__(self, prio: tuple, rng: str, sha: str, mode: str, cmd: str, name: str, argv: list[str], cores: int,
                 cache: bool) -> None:
        self.prio, self.rng, self.sha, self.mode, self.cmd, self.name = prio, rng, sha, mode, cmd, name
        self.argv, self.cores, self.cache = argv, cores, cache
        self.kind = "whole"
        self.proc = None
        self.start = 0.0

    @property
    def key(self) -> str:
        return f"{self.sha[:12]}/{self.mode}/{self.name}"


def meta_path(e: Env, key: str) -> Path:
    return e.res / f"{key}.json"


def done(e: Env, key: str) -> dict | None:
    p = meta_path(e, key)
    if not p.exists():
        return None
    m = json.loads(p.read_text())
    if all((e.blobs / m[k]).exists() for k in ("stdout_sha256", "stderr_sha256")):
        return m
    return None


def facts_files(e: Env, sha: str, paths: list[str]) -> list[str]:
    """The files `fusionlint facts PATHS` reads, in its order (the commit's own _collect)."""
    home = Path(tempfile.mkdtemp(prefix="home-", dir=e.tmp))
    code = ("import sys; from fusionlint.cli import _collect; "
            "print('\\n'.join(map(str, _collect(sys.argv[1:]))))")
    out = subprocess.run([str(e.python), "-c", code, *paths], env=e.run_env(sha, "src", home), cwd=e.wt(sha),
                         check=True, capture_output=True, text=True).stdout
    shutil.rmtree(home, ignore_errors=True)
    return [ln for ln in out.splitlines() if ln]


def heavy(path: Path) -> bool:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return True
    return "cutlass/" in text or "cute/" in text


def shards(e: Env, sha: str, files: list[str], mode: str, light_group: int) -> list[list[str]]:
    """Consecutive runs of the sorted files: a file that includes CUTLASS alone, others in groups."""
    out: list[list[str]] = []
    cur: list[str] = []
    for f in files:
        if heavy(e.wt(sha) / f):
            if cur:
                out.append(cur)
                cur = []
            out.append([f])
        else:
            cur.append(f)
            if len(cur) >= light_group:
                out.append(cur)
                cur = []
    if cur:
        out.append(cur)
    return out


def plan(e: Env, ns: argparse.Namespace, full: dict[str, str], ranges, ok: dict) -> list[Task]:
    tasks: list[Task] = []
    shas = sorted({full[c] for _, p, q in ranges for c in (p, q)})
    with ThreadPoolExecutor(max_workers=min(16, os.cpu_count() or 2)) as pool:
        listed = dict(zip(shas, pool.map(lambda sha: facts_files(e, sha, ns.check_paths), shas)))
    j = str(ns.run_jobs)
    seen = set()
    for pi, (mode, cmd, rsel) in enumerate(ns.order):
        if ns.only and f"{mode}:{cmd}" not in ns.only:
            continue
        for rng, parent, end in ranges:
            if rng not in rsel and not ns.all_ranges:
                continue
            for side, c in enumerate((parent, end)):
                sha = full[c]
                if not ok.get((sha, mode)):
                    continue
                if (sha, mode, cmd) in seen:
                    continue
                seen.add((sha, mode, cmd))
                timeout = ["--timeout", "0"] if mode == "inst" else []
                prio = (pi, int(rng), side)
                if cmd == "check":
                    argv = ["fusionlint", "--output-format", "json", "--cache-dir", "{CACHE}", "-j", j, *timeout,
                            *ns.check_paths]
                    tasks.append(Task(prio, rng, sha, mode, cmd, "check", argv, ns.run_jobs, True))
                elif cmd == "test-rules":
                    argv = ["fusionlint", "test-rules", "--cache-dir", "{CACHE}", "-j", j, "-q", *timeout,
                            *ns.test_paths]
                    tasks.append(Task(prio, rng, sha, mode, cmd, "test-rules", argv, ns.run_jobs, True))
                else:
                    files = listed[sha]
                    groups = shards(e, sha, files, mode, ns.light_group)
                    index = {"files": len(files), "shards": len(groups), "paths": ns.check_paths}
                    ip = e.res / sha[:12] / mode / "facts.index.json"
                    ip.parent.mkdir(parents=True, exist_ok=True)
                    ip.write_text(json.dumps(index))
                    for i, g in enumerate(groups):
                        t = Task(prio + (i,), rng, sha, mode, cmd, f"facts.{i:04d}", ["fusionlint", "facts", *g], 1,
                                 False)
                        t.kind = "heavy" if len(g) == 1 and heavy(e.wt(sha) / g[0]) else "light"
                        tasks.append(t)
    return tasks


def store(e: Env, data: bytes) -> str:
    h = hashlib.sha256(data).hexdigest()
    p = e.blobs / h
    if not p.exists():
        tmp = p.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.rename(p)
    return h


def launch(e: Env, t: Task) -> None:
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=e.tmp))
    home = run_dir / "home"
    for d in ("", "cache", "data", "config", "t"):
        (home / d).mkdir(parents=True, exist_ok=True)
    cache = run_dir / "cache"
    cache.mkdir()
    env = e.run_env(t.sha, t.mode, home)
    if t.cache:
        env["FUSIONLINT_CACHE_DIR"] = str(cache)
    argv = [a.replace("{CACHE}", str(cache)) for a in t.argv]
    t.run_dir = run_dir
    t.stdout = open(run_dir / "stdout", "wb")
    t.stderr = open(run_dir / "stderr", "wb")
    t.start = time.monotonic()
    t.load = os.getloadavg()[0]
    t.proc = subprocess.Popen(argv, cwd=e.wt(t.sha), env=env, stdout=t.stdout, stderr=t.stderr,
                              stdin=subprocess.DEVNULL, start_new_session=True)


def finish(e: Env, t: Task) -> dict:
    wall = time.monotonic() - t.start
    t.stdout.close()
    t.stderr.close()
    out = (t.run_dir / "stdout").read_bytes()
    err = (t.run_dir / "stderr").read_bytes()
    if b"/tmp/" in out or str(e.work).encode() in out:
        note = "stdout holds an absolute path"
    else:
        note = ""
    m = {"key": t.key, "commit": t.sha, "mode": t.mode, "command": t.cmd, "name": t.name, "range": t.rng,
         "argv": [a if "{CACHE}" not in a else "<fresh cache dir>" for a in t.argv], "cwd": "<worktree>",
         "PYTHONPATH": "<worktree>" + (":<CUTLASS>" if t.mode == "inst" else ""),
         "rc": t.proc.returncode, "wall_s": round(wall, 2), "load_at_start": round(t.load, 2),
         "stdout_sha256": store(e, out), "stdout_bytes": len(out),
         "stderr_sha256": store(e, err), "stderr_bytes": len(err), "note": note,
         "fl000": out.count(b'"FL000"')}
    p = meta_path(e, t.key)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(m, indent=1))
    shutil.rmtree(t.run_dir, ignore_errors=True)
    return m


def kill(t: Task) -> None:
    try:
        os.killpg(t.proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    t.proc.wait()
    t.stdout.close()
    t.stderr.close()
    shutil.rmtree(t.run_dir, ignore_errors=True)


def schedule(e: Env, tasks: list[Task], budget: int, stop_at: float) -> bool:
    """Run the tasks in priority order on `budget` cores; False when stopped at the deadline.

    A run is not started when the runs of its kind (mode, command, whole run or facts shard) that
    ended so far (here or in --prev) took longer than the time left: the cores go to shorter work,
    facts shards, which are kept one by one."""
    walls: dict[tuple, list[float]] = {}
    for t in tasks:
        m = done(e, t.key)
        if m:
            walls.setdefault((t.mode, t.cmd, t.kind), []).append(m["wall_s"])
    pending = sorted((t for t in tasks if not done(e, t.key)), key=lambda t: t.prio)
    log(f"{len(tasks)} runs planned, {len(tasks) - len(pending)} already recorded, {len(pending)} to do; "
        f"{budget} cores")
    running: list[Task] = []
    used = 0
    too_late: set[str] = set()

    def estimate(t: Task) -> float:
        w = sorted(walls.get((t.mode, t.cmd, t.kind), []))
        return w[len(w) // 2] if w else 0.0

    while pending or running:
        now = time.monotonic() - T0
        if now > stop_at:
            for t in running:
                kill(t)
                log(f"stopped at the deadline: {t.key} (after {time.monotonic() - t.start:.0f} s)")
            log(f"{len(pending)} runs not started")
            return False
        for t in list(pending):
            if now + 0.9 * estimate(t) > stop_at:
                if t.key not in too_late:
                    too_late.add(t.key)
                    if t.kind == "whole":
                        log(f"not started, would end after the deadline: {t.key} (~{estimate(t):.0f} s)")
                continue
            if used + t.cores <= budget or not running:
                pending.remove(t)
                launch(e, t)
                running.append(t)
                used += t.cores
            else:
                break
        if not running:
            log(f"{len(pending)} runs left that would not end before the deadline")
            return False
        time.sleep(0.2)
        for t in list(running):
            if t.proc.poll() is not None:
                m = finish(e, t)
                running.remove(t)
                used -= t.cores
                walls.setdefault((t.mode, t.cmd, t.kind), []).append(m["wall_s"])
                if not t.name.startswith("facts.") or m["rc"] or m["stderr_bytes"]:
                    log(f"done {t.key}: rc {m['rc']}, stdout {m['stdout_bytes']} B {m['stdout_sha256'][:12]}, "
                        f"stderr {m['stderr_bytes']} B, {m['wall_s']} s")
                elif t.name.startswith("facts."):
                    left = sum(1 for x in pending + running if x.sha == t.sha and x.mode == t.mode and x.cmd == "facts")
                    if not left:
                        log(f"done {t.sha[:12]}/{t.mode}/facts: all shards")
    return True


# ---------------------------------------------------------------- results

def facts_combined(e: Env, sha: str, mode: str) -> dict | None:
    """The whole `facts` command's result rebuilt from its shards (None while shards are missing)."""
    ip = e.res / sha[:12] / mode / "facts.index.json"
    if not ip.exists():
        return None
    n = json.loads(ip.read_text())["shards"]
    metas = [done(e, f"{sha[:12]}/{mode}/facts.{i:04d}") for i in range(n)]
    if not all(metas):
        return {"incomplete": sum(1 for m in metas if m), "shards": n}
    items, err, rc, wall, bad = [], b"", 0, 0.0, []
    for i, m in enumerate(metas):
        raw = (e.blobs / m["stdout_sha256"]).read_bytes()
        err += (e.blobs / m["stderr_sha256"]).read_bytes()
        rc = max(rc, m["rc"])
        wall += m["wall_s"]
        try:
            items.extend(json.loads(raw))
        except ValueError:
            bad.append(i)
    text = json.dumps(items, indent=2, default=str) + "\n"
    out = text.encode()
    return {"rc": rc, "stdout_sha256": hashlib.sha256(out).hexdigest(), "stdout_bytes": len(out),
            "stderr_sha256": hashlib.sha256(err).hexdigest(), "stderr_bytes": len(err), "shards": n,
            "unparsable_shards": bad, "cpu_s_sum_of_walls": round(wall, 1), "_stdout": out, "_stderr": err,
            "shard_stdout": [m["stdout_sha256"] for m in metas], "shard_stderr": [m["stderr_sha256"] for m in metas]}


def result(e: Env, sha: str, mode: str, cmd: str) -> dict | None:
    if cmd == "facts":
        return facts_combined(e, sha, mode)
    return done(e, f"{sha[:12]}/{mode}/{cmd}")


def summarize(e: Env, ns, full: dict[str, str], ranges, ok: dict, envinfo: dict, planned: set) -> str:
    rows, table = [], []
    for mode in ("inst", "src"):
        for cmd in ("check", "test-rules", "facts"):
            for rng, parent, end in ranges:
                a, b = result(e, full[parent], mode, cmd), result(e, full[end], mode, cmd)

                def cell(r, c):
                    if r is None:
                        return "not run" if ok.get((full[c], mode)) else "env check failed"
                    if "incomplete" in r:
                        return f"{r['incomplete']}/{r['shards']} shards"
                    doc = DOC_SOURCE.get((cmd, c)) if mode == "src" else None
                    extra = "" if doc is None else (" (=doc)" if r["stdout_sha256"].startswith(doc) else " (doc: " + doc + ")")
                    fl0 = f", FL000 x{r['fl000']}" if r.get("fl000") else ""
                    return (f"rc {r['rc']}, out {r['stdout_bytes']:,} B {r['stdout_sha256'][:12]}{extra}, "
                            f"err {r['stderr_bytes']} B {r['stderr_sha256'][:8]}{fl0}")

                complete = all(r is not None and "incomplete" not in r for r in (a, b))
                if complete:
                    same = all(a[k] == b[k] for k in ("rc", "stdout_sha256", "stderr_sha256"))
                    verdict = "**identical**" if same else "**DIFFERS**"
                else:
                    verdict = "incomplete"
                if a is None and b is None and (mode, cmd, rng) not in planned and not ns.show_unrun:
                    continue
                entry = {"range": rng, "parent": parent, "end": end, "mode": MODES[mode], "command": cmd,
                         "verdict": verdict.strip("*")}
                for side, r in (("parent", a), ("end", b)):
                    if r is not None:
                        entry[side] = {k: v for k, v in r.items() if not k.startswith("_")}
                if cmd == "facts" and complete and verdict == "**DIFFERS**":
                    entry["differing_shards"] = [i for i, (x, y) in enumerate(zip(a["shard_stdout"], b["shard_stdout"]))
                                                 if x != y][:50] if a["shards"] == b["shards"] else "shard count differs"
                rows.append(entry)
                table.append(f"| {rng} | {parent} → {end} | {MODES[mode]} | {cmd} | {verdict} | {cell(a, parent)} | "
                             f"{cell(b, end)} |")
    (e.work / "summary.json").write_text(json.dumps({"rows": rows, "env": envinfo}, indent=1))
    head = ["| # | range | mode | command | result | parent | end |", "|---|---|---|---|---|---|---|"]
    hdr = {k: (v.get("headers") if isinstance(v, dict) else v) for k, v in envinfo.items()}
    text = ("# restructure identity runs\n\n" + "\n".join(head + table) + "\n\n" +
            "check/test-rules: whole runs; facts: rebuilt from its shards (`identity_runs.py combine`).\n\n"
            "Header directories found per commit and mode:\n\n```\n" + json.dumps(hdr, indent=1) + "\n```\n")
    return text


def pack(e: Env, max_part: int = 15 * 2**20) -> list[Path]:
    """res/, blobs/, summary.json and the log into $OUT/identity.tar.xz (split when over 15 MiB)."""
    tmp = e.work / "identity.tar.xz"
    names = ["res", "blobs", "summary.json", "plan.json", "env.json"]
    names = [n for n in names if (e.work / n).exists()]
    try:
        subprocess.run(["tar", "-C", str(e.work), "-cf", str(tmp), "-I", "xz -T0 -6", *names], check=True)
    except (subprocess.CalledProcessError, FileNotFoundError):
        with tarfile.open(tmp, "w:xz") as tf:
            for n in names:
                tf.add(e.work / n, arcname=n)
    for old in e.out.glob("identity.tar.xz*"):
        old.unlink()
    data_size = tmp.stat().st_size
    if data_size <= max_part:
        dest = e.out / "identity.tar.xz"
        shutil.copy(tmp, dest)
        return [dest]
    parts = []
    with open(tmp, "rb") as f:
        i = 0
        while chunk := f.read(max_part):
            p = e.out / f"identity.tar.xz.{i:02d}"
            p.write_bytes(chunk)
            parts.append(p)
            i += 1
    return parts


def unpack_prev(e: Env, prev: list[str]) -> None:
    for p in prev:
        path = Path(p)
        files = sorted(path.glob("identity.tar.xz*")) if path.is_dir() else [path]
        if not files:
            continue
        if len(files) > 1 or files[0].name != "identity.tar.xz":
            joined = e.tmp / "prev.tar.xz"
            with open(joined, "wb") as w:
                for f in files:
                    w.write(f.read_bytes())
            files = [joined]
        with tarfile.open(files[0]) as tf:
            members = [m for m in tf.getmembers() if m.name.startswith(("res/", "blobs/"))]
            tf.extractall(e.work, members=members)
        log(f"resumed from {p}")


# ---------------------------------------------------------------- bench

def bench(e: Env, ns, full: dict[str, str]) -> None:
    for c in ns.bench_commits:
        sha = full[c]
        left = ns.stop_at + ns.bench_reserve - (time.monotonic() - T0)
        if left < ns.bench_min:
            log(f"bench at {c}: not started, {left:.0f} s left")
            continue
        home = Path(tempfile.mkdtemp(prefix="home-", dir=e.tmp))
        for d in ("cache", "data", "config", "t"):
            (home / d).mkdir()
        env = e.run_env(sha, "src", home)
        env["PYTHONUNBUFFERED"] = "1"
        log(f"bench at {c} ({sha[:12]}): python bench/run.py {' '.join(ns.bench_args)}, load {os.getloadavg()}")
        start = time.monotonic()
        try:
            p = subprocess.run([str(e.python), "bench/run.py", *ns.bench_args], cwd=e.wt(sha), env=env,
                               capture_output=True, timeout=max(10.0, left - 5), start_new_session=True)
            out, err, rc = p.stdout, p.stderr, p.returncode
        except subprocess.TimeoutExpired as exc:
            out, err, rc = exc.stdout or b"", (exc.stderr or b"") + b"\n[timed out]\n", "timeout"
        name = f"bench-{c}-{sha[:8]}"
        (e.work / "bench").mkdir(exist_ok=True)
        (e.work / "bench" / f"{name}.out").write_bytes(out)
        (e.work / "bench" / f"{name}.err").write_bytes(err)
        log(f"bench at {c}: rc {rc}, {time.monotonic() - start:.0f} s, load {os.getloadavg()}")
        shutil.rmtree(home, ignore_errors=True)
        with tarfile.open(e.out / "bench.tar.gz", "w:gz") as tf:
            tf.add(e.work / "bench", arcname="bench")


# ---------------------------------------------------------------- main

def main() -> int:
    global LOG
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="verb")
    r = sub.add_parser("run")
    r.add_argument("--bundle", required=True)
    r.add_argument("--cutlass", required=True)
    r.add_argument("--site", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--work", required=True)
    r.add_argument("--python", default=sys.executable, help="the Python the venv is made from")
    r.add_argument("--jobs", type=int, default=os.cpu_count(), help="cores to fill (default: all)")
    r.add_argument("--overcommit", type=float, default=1.5, help="cores x this = the budget (whole runs' tails)")
    r.add_argument("--run-jobs", type=int, default=0, help="-j of check and test-rules (default: jobs/2, 2..8)")
    r.add_argument("--order", default="", help="the work's order, e.g. inst:check:1234,src:facts:6 (default: PRIORITY)")
    r.add_argument("--light-group", type=int, default=8, help="files without CUTLASS per facts shard")
    r.add_argument("--stop-at", type=float, default=520, help="seconds after the start: stop the identity runs")
    r.add_argument("--prev", action="append", default=[], help="an earlier identity.tar.xz (or its folder)")
    r.add_argument("--ranges", default="", help="e.g. 1,2 (default: all; the commands' selection by PRIORITY)")
    r.add_argument("--all-ranges", action="store_true", help="every command for every range given")
    r.add_argument("--only", default="", help="comma list of MODE:COMMAND, e.g. inst:check,src:facts")
    r.add_argument("--check-paths", default="fixtures kernels_ref")
    r.add_argument("--test-paths", default="fixtures")
    r.add_argument("--show-unrun", action="store_true")
    r.add_argument("--no-identity", action="store_true", help="only the bench (and the summary of --prev)")
    r.add_argument("--bench", action="store_true", help="then bench/run.py at --bench-commits (source mode)")
    r.add_argument("--bench-commits", default="45a0b45 4380661",
                   help="the doc's pair (4380661 was its HEAD); later commits add features")
    r.add_argument("--bench-args", default="--quick")
    r.add_argument("--bench-reserve", type=float, default=0, help="seconds after --stop-at the bench may use")
    r.add_argument("--bench-min", type=float, default=120, help="start a bench only with this much time left")
    c = sub.add_parser("combine", help="write the rebuilt facts stdout of a commit and mode")
    c.add_argument("work")
    c.add_argument("commit")
    c.add_argument("mode", choices=["src", "inst"])
    ns = ap.parse_args()
    if ns.verb == "combine":
        e = argparse.Namespace(res=Path(ns.work) / "res", blobs=Path(ns.work) / "blobs")
        sha = next(p.name for p in e.res.iterdir() if p.name.startswith(ns.commit[:7]))
        r = facts_combined(e, sha, ns.mode)
        sys.stdout.buffer.write(r["_stdout"])
        sys.stderr.buffer.write(r["_stderr"])
        return 0
    if ns.verb != "run":
        ap.error("run or combine")
    e = Env(ns)
    LOG = e.out / "run.log"
    ns.only = [x for x in ns.only.split(",") if x]
    ns.check_paths = ns.check_paths.split()
    ns.test_paths = ns.test_paths.split()
    ns.bench_commits = ns.bench_commits.split() if ns.bench else []
    ns.bench_args = ns.bench_args.split()
    ns.run_jobs = ns.run_jobs or max(2, min(8, ns.jobs // 2))
    ns.order = [tuple(x.split(":")) for x in ns.order.split(",") if x] or PRIORITY
    ranges = [x for x in RANGES if not ns.ranges or x[0] in ns.ranges.split(",")]
    commits = list(dict.fromkeys([c for _, p, q in ranges for c in (p, q)] + ns.bench_commits))
    log(f"host: {os.cpu_count()} cpus, load {os.getloadavg()}, python {sys.version.split()[0]}; "
        f"jobs {ns.jobs}, -j {ns.run_jobs} per whole run, stop at {ns.stop_at} s")
    full = setup(e, ns, commits)
    log("worktrees: " + ", ".join(f"{c}={s[:12]}" for c, s in full.items()))
    unpack_prev(e, ns.prev)
    ok, envinfo = {}, {}
    pairs = [(cmt, mode) for _, p, q in ranges for cmt in (p, q) for mode in ("src", "inst")]
    with ThreadPoolExecutor(max_workers=min(16, os.cpu_count() or 2)) as pool:
        checks = list(pool.map(lambda cm: verify(e, full[cm[0]], cm[1]), pairs))
    for (cmt, mode), (good, info) in zip(pairs, checks):
        ok[(full[cmt], mode)] = good
        envinfo[f"{cmt} {mode}"] = info
        if not good:
            log(f"ENV CHECK FAILED {cmt} {mode}: {info.get('problems') or info.get('error')}")
    first = next(iter(envinfo.values()), {})
    log(f"env check: {sum(ok.values())}/{len(ok)} good; e.g. fusionlint {first.get('fusionlint')}, "
        f"headers {first.get('headers')}")
    (e.work / "env.json").write_text(json.dumps(envinfo, indent=1))
    planned = set()
    if not ns.no_identity:
        tasks = plan(e, ns, full, ranges, ok)
        planned = {(t.mode, t.cmd, t.rng) for t in tasks}
        (e.work / "plan.json").write_text(json.dumps([{"key": t.key, "prio": t.prio, "argv": t.argv} for t in tasks]))
        budget = max(1, int(ns.jobs * ns.overcommit))
        finished = schedule(e, tasks, budget, ns.stop_at)
        log("all planned runs recorded" if finished else "stopped at the deadline: resume with --prev")
    text = summarize(e, ns, full, ranges, ok, envinfo, planned)
    (e.out / "summary.md").write_text(text)
    parts = pack(e)
    log(f"packed: {', '.join(f'{p.name} {p.stat().st_size:,} B' for p in parts)}")
    print(text, flush=True)
    if ns.bench_commits:
        bench(e, ns, full)
        reports = sorted((e.work / "bench").glob("*.out")) if (e.work / "bench").exists() else []
        with open(e.out / "summary.md", "a", encoding="utf-8") as f:
            for rp in reports:
                f.write(f"\n## {rp.stem}\n\n" + rp.read_text(errors="replace") + "\n")
        for rp in reports:
            print(f"\n## {rp.stem}\n" + rp.read_text(errors="replace"), flush=True)
    log("end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
