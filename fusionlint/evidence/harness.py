"""Build fixture and reference programs with nvcc, run them on the local GPU, record the result.

Run on a GPU machine from the repository root:

    python3 -m fusionlint.evidence.harness --out kernels_ref/evidence/h200-evidence \\
        fixtures/cublaslt/rules/*.cpp kernels_ref/cublaslt/*.cpp

Each program prints ``EVIDENCE ...`` lines (protocol in fixtures/cublaslt/probe.h). The
harness writes ``<out>.json`` (machine-readable: the machine, library versions, and per
program the build result, each cuBLAS call's status, numerical error, CUDA error state,
TFLOP/s) and ``<out>.txt`` (the raw logs). Standard library only, so it runs where
fusionlint's own dependencies are not installed. ``fusionlint verify`` builds and runs its
generated probes through the same functions (:func:`run_all` with a :class:`Toolchain`) and
names outcomes with the same words (:func:`describe`, :func:`kind_of`) as the rules'
recorded ``evidence.observed`` (tools/fill_evidence.py).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

NVCC_FLAGS = ["-std=c++17", "-O2", "-arch=sm_90a", "-lcublasLt", "-lcublas", "--expt-relaxed-constexpr",
              "-DNDEBUG"]
EXTRA_INCLUDES_ENV = "FUSIONLINT_EVIDENCE_INCLUDES"  # e.g. the CUTLASS include dirs, ':'-separated
# When set to a directory: each program runs with cuBLASLt's API trace (log level 5) written to
# DIR/<source stem>.log, the recordings `fusionlint trace --from-log` is tested on.
TRACE_DIR_ENV = "FUSIONLINT_EVIDENCE_TRACE_DIR"
BUILD_TIMEOUT = 900
RUN_TIMEOUT = 300


@dataclass
class Toolchain:
    """How to build a program: the compiler, include and library directories, link flags, time limits.
    The default is what the evidence runs always used: ``nvcc`` from PATH linking cuBLAS(Lt)."""

    nvcc: str = "nvcc"
    include_dirs: list[str] = field(default_factory=list)
    lib_dirs: list[str] = field(default_factory=list)  # also the run-time search path (rpath)
    link: list[str] = field(default_factory=lambda: ["-lcublasLt", "-lcublas"])
    arch: str = "sm_90a"
    build_timeout: int = BUILD_TIMEOUT
    run_timeout: int = RUN_TIMEOUT
    # Host-only programs (no __global__ code, e.g. the cuBLASLt mutation set): compile a .cpp as the
    # host C++ it is (no "-x cu", so no device code generation) and link as usual; ~5x faster.
    host_only: bool = False

    def command(self, source: Path, exe: Path) -> list[str]:
        flags = [f for f in NVCC_FLAGS if not f.startswith("-arch=") and not f.startswith("-lcublas")]
        includes = [*self.include_dirs, *(d for d in os.environ.get(EXTRA_INCLUDES_ENV, "").split(":") if d)]
        libs = [x for d in self.lib_dirs for x in (f"-L{d}", f"-Xlinker=-rpath={d}")]
        if self.host_only:
            flags = [f for f in flags if f != "--expt-relaxed-constexpr"]
            return [self.nvcc, "-x", "c++", str(source), "-o", str(exe), *flags,
                    *(f"-I{d}" for d in includes), *libs, *self.link]
        return [self.nvcc, "-x", "cu", str(source), "-o", str(exe), *flags, f"-arch={self.arch}",
                *(f"-I{d}" for d in includes), *libs, *self.link]

_VERSION_PROGRAM = r"""
#include <cstdio>
#ifndef FUSIONLINT_NO_CUBLAS
#include <cublasLt.h>
#else
static size_t cublasLtGetVersion() { return 0; }
#endif
#include <cuda_runtime.h>
int main() {
  int rt = 0, drv = 0, dev = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  cudaDeviceProp p = {};
  if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) p.name[0] = 0;
  std::printf("{\"gpu\": \"%s\", \"compute_capability\": \"%d.%d\", \"sm_count\": %d, "
              "\"cublaslt_version\": %zu, \"cudart_version\": %d, \"driver_api_version\": %d}\n",
              p.name, p.major, p.minor, p.multiProcessorCount, cublasLtGetVersion(), rt, drv);
  return 0;
}
"""

_CALL = re.compile(r"^EVIDENCE (?P<call>cublas\w+\(.*\)) (?P<status>CUBLAS_STATUS_\w+)$")
# Any other library step: "EVIDENCE step <name> <status>" (CUTLASS: can_implement, initialize, run).
_STEP = re.compile(r"^EVIDENCE step (?P<call>\S+) (?P<status>\S+)$")
OK_STATUSES = {"CUBLAS_STATUS_SUCCESS", "Success", "kSuccess", "cudaSuccess"}
_NUMERICS = re.compile(r"^EVIDENCE numerics (?P<verdict>ok|mismatch) max_abs_err=(?P<err>\S+)$")
_NUMERICS_SKIPPED = re.compile(r"^EVIDENCE numerics skipped (?P<why>.*)$")
_CUDA = re.compile(r"^EVIDENCE cuda (?P<error>\w+)$")
_TFLOPS = re.compile(r"^EVIDENCE tflops (?P<tflops>[\d.]+) m=(?P<m>\d+) n=(?P<n>\d+) k=(?P<k>\d+)$")


@dataclass
class Outcome:
    source: str
    build_rc: int
    run_rc: int | None = None
    calls: list[dict] = field(default_factory=list)  # [{"function", "call", "status"}]
    numerics: list[dict] = field(default_factory=list)  # [{"ok", "max_abs_err"}]
    cuda_errors: list[str] = field(default_factory=list)
    tflops: list[dict] = field(default_factory=list)
    log: str = ""
    numerics_skipped: str = ""  # why D was not checked (no host reference for the epilogue)

    @property
    def works(self) -> bool:
        """Every cuBLAS call succeeded, no CUDA error, and every numerical check matched (or the
        program said why it has none)."""
        return (self.build_rc == 0 and self.run_rc == 0 and bool(self.calls)
                and all(c["status"] in OK_STATUSES for c in self.calls)
                and all(e == "cudaSuccess" for e in self.cuda_errors)
                and (bool(self.numerics) or bool(self.numerics_skipped)) and all(n["ok"] for n in self.numerics))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["works"] = self.works
        return d


def clip_log(log: str, keep: int = 3000) -> str:
    """The start (where nvcc names the first error) and the end of a long log."""
    if len(log) <= 2 * keep:
        return log
    return f"{log[:keep]}\n[... {len(log) - 2 * keep} characters left out ...]\n{log[-keep:]}"


def parse_output(source: str, build_rc: int, run_rc: int | None, log: str) -> Outcome:
    out = Outcome(source, build_rc, run_rc, log=clip_log(log))
    for line in log.splitlines():
        if m := _CALL.match(line):
            out.calls.append({"function": m["call"].split("(", 1)[0], "call": m["call"], "status": m["status"]})
        elif m := _STEP.match(line):
            out.calls.append({"function": m["call"], "call": m["call"], "status": m["status"]})
        elif m := _NUMERICS.match(line):
            out.numerics.append({"ok": m["verdict"] == "ok", "max_abs_err": float(m["err"])})
        elif m := _NUMERICS_SKIPPED.match(line):
            out.numerics_skipped = m["why"].strip() or "no host reference"
        elif m := _CUDA.match(line):
            out.cuda_errors.append(m["error"])
        elif m := _TFLOPS.match(line):
            out.tflops.append({"tflops": float(m["tflops"]), "m": int(m["m"]), "n": int(m["n"]), "k": int(m["k"])})
    return out


def _run(cmd: list[str], timeout: int, env: dict | None = None) -> tuple[int | None, str]:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout, env=env)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as exc:
        return None, f"timed out after {timeout}s: {exc}"
    except OSError as exc:
        return 127, f"cannot run {cmd[0]}: {exc}"


def build(source: Path, exe: Path, toolchain: Toolchain | None = None) -> tuple[int, str]:
    """nvcc ``source`` -> ``exe``; rc 124 when it ran past the toolchain's time limit."""
    tc = toolchain or Toolchain()
    rc, log = _run(tc.command(source, exe), timeout=tc.build_timeout)
    return (rc if rc is not None else 124), log


def _exe(source: Path, workdir: Path) -> Path:
    return workdir / (re.sub(r"\W", "_", str(source)) + ".bin")


def run_built(source: Path, workdir: Path, timeout: int = RUN_TIMEOUT) -> Outcome:
    env = dict(os.environ, CUBLASLT_LOG_LEVEL="1")
    trace_dir = os.environ.get(TRACE_DIR_ENV)
    if trace_dir:
        env.update(CUBLASLT_LOG_LEVEL="5", CUBLASLT_LOG_FILE=str(Path(trace_dir) / f"{Path(source).stem}.log"))
    run_rc, log = _run([str(_exe(source, workdir))], timeout, env)
    return parse_output(str(source), 0, run_rc, log)


def machine(workdir: Path, toolchain: Toolchain | None = None) -> dict:
    info: dict = {}
    src, exe = workdir / "version.cu", workdir / "version.bin"
    src.write_text(_VERSION_PROGRAM)
    tc = toolchain or Toolchain()
    rc, log = build(src, exe, tc)
    if rc != 0:  # no cuBLAS here (a CUTLASS-only run): the GPU and CUDA versions alone
        tc = Toolchain(tc.nvcc, [*tc.include_dirs], [*tc.lib_dirs], ["-DFUSIONLINT_NO_CUBLAS"], tc.arch, tc.build_timeout)
        rc, log = build(src, exe, tc)
    if rc == 0:
        _, out = _run([str(exe)], 60)
        try:
            info.update(json.loads(out.strip().splitlines()[-1]))
        except (ValueError, IndexError):
            info["version_probe"] = out[-500:]
    _, smi = _run(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"], 60)
    info["nvidia_smi"] = smi.strip()
    _, nvcc = _run([(toolchain or Toolchain()).nvcc, "--version"], 60)
    info["nvcc"] = nvcc.strip().splitlines()[-1] if nvcc.strip() else ""
    return info


def run_all(sources: list[Path], jobs: int, serial: bool = False, toolchain: Toolchain | None = None,
            workdir: Path | None = None) -> tuple[dict, list[Outcome]]:
    """Build in parallel; run in parallel, or one at a time (``serial``) for timings. Executables go
    to a temporary directory, or to ``workdir`` (kept) when given."""
    tc = toolchain or Toolchain()
    with tempfile.TemporaryDirectory() as tmp:
        work = workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        info = machine(Path(tmp), tc)
        with cf.ThreadPoolExecutor(jobs) as pool:
            builds = dict(zip(sources, pool.map(lambda s: build(s, _exe(s, work), tc), sources)))
        runnable = [s for s in sources if builds[s][0] == 0]
        if serial:
            ran = {s: run_built(s, work, tc.run_timeout) for s in runnable}
        else:
            with cf.ThreadPoolExecutor(jobs) as pool:
                ran = dict(zip(runnable, pool.map(lambda s: run_built(s, work, tc.run_timeout), runnable)))
    outcomes = [ran[s] if s in ran else Outcome(str(s), builds[s][0], log=clip_log(builds[s][1])) for s in sources]
    return info, outcomes


# ---- naming outcomes (the words of the rules' evidence.observed, written by tools/fill_evidence.py) ----
KINDS = ("works", "compile error", "status", "launch error", "numerics", "crash", "timeout")
_STATIC_ASSERT = re.compile(r'static assertion failed with "([^"\\]+)')


def describe(o: Outcome) -> str:
    """One line: ``works, D matches the host reference``, ``compile error: <static_assert text>``,
    ``<call> -> <status>``, ``all calls SUCCESS, then CUDA error <name>``, ``all calls SUCCESS but D is
    wrong (max abs err <x>)``, or how the program died."""
    if o.build_rc != 0:
        if o.build_rc == 124:
            return o.log.strip() if o.log.startswith("not built") else "build timed out"
        m = _STATIC_ASSERT.search(o.log)
        if m:
            return f"compile error: {m.group(1).strip()}"
        first = next((ln.strip() for ln in o.log.splitlines() if "error" in ln), "")
        return f"build failed: {first[:200]}" if first else "build failed"
    bad = next((c for c in o.calls if c["status"] not in OK_STATUSES), None)
    if bad:
        return f"{bad['function']} -> {bad['status']}"
    if any(e != "cudaSuccess" for e in o.cuda_errors):
        return f"all calls SUCCESS, then CUDA error {next(e for e in o.cuda_errors if e != 'cudaSuccess')}"
    if o.numerics and not all(n["ok"] for n in o.numerics):
        return f"all calls SUCCESS but D is wrong (max abs err {max(n['max_abs_err'] for n in o.numerics):g})"
    if o.run_rc is None:
        return o.log.strip() if o.log.startswith("not run") else "run timed out"
    if o.works:
        if o.numerics_skipped:
            return f"works (D not checked: {o.numerics_skipped})"
        return "works, D matches the host reference"
    return f"crashed (exit status {o.run_rc})" if o.run_rc else "no result (the program printed no checks)"


def kind_of(text: str) -> str:
    """The kind of an outcome line from :func:`describe` or a rule's ``evidence.observed`` entry."""
    t = text.strip()
    if t.startswith("works"):
        return "works"
    if t.startswith(("compile error", "build failed")):
        return "compile error"
    if t.startswith(("build timed out", "run timed out", "not built", "not run")):
        return "timeout"
    if "CUDA error" in t:
        return "launch error"
    if "D is wrong" in t:
        return "numerics"
    if " -> " in t:
        return "status"
    return "crash"


def write_record(out: Path, info: dict, outcomes: list[Outcome]) -> None:
    record = {"machine": info, "programs": {o.source: o.to_dict() for o in outcomes}}
    out.with_suffix(".json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    text = [f"# fusionlint device evidence\n{json.dumps(info, indent=1)}\n"]
    for o in outcomes:
        text.append(f"=== {o.source} (build rc={o.build_rc}, run rc={o.run_rc}, works={o.works})\n{o.log.rstrip()}\n")
    out.with_suffix(".txt").write_text("\n".join(text), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Build and run evidence programs on this machine's GPU.")
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--out", required=True, help="record path without suffix (.json and .txt are written)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--serial-run", action="store_true", help="run one program at a time (for timings)")
    ap.add_argument("--host-only", action="store_true",
                    help="build the programs as host C++ (no -x cu, no device code): for programs without "
                         "__global__ code, such as the cuBLASLt mutation set; much faster")
    args = ap.parse_args(argv)
    if shutil.which("nvcc") is None:
        print("fusionlint evidence: nvcc not found on PATH", file=sys.stderr)
        return 2
    info, outcomes = run_all(sorted(Path(s) for s in args.sources), args.jobs, args.serial_run,
                             Toolchain(host_only=True) if args.host_only else None)
    write_record(Path(args.out), info, outcomes)
    works = sum(o.works for o in outcomes)
    print(f"wrote {args.out}.json/.txt: {len(outcomes)} programs, {works} work, {len(outcomes) - works} fail")
    return 0


if __name__ == "__main__":
    sys.exit(main())
