"""Build fixture and reference programs with nvcc, run them on the local GPU, record the result.

Run on a GPU machine from the repository root:

    python3 -m fusionlint.evidence.harness --out kernels_ref/evidence/h200-evidence \\
        fixtures/cublaslt/rules/*.cpp kernels_ref/cublaslt/*.cpp

Each program prints ``EVIDENCE ...`` lines (protocol in fixtures/cublaslt/probe.h). The
harness writes ``<out>.json`` (machine-readable: the machine, library versions, and per
program the build result, each cuBLAS call's status, numerical error, CUDA error state,
TFLOP/s) and ``<out>.txt`` (the raw logs). Standard library only, so it runs where
fusionlint's own dependencies are not installed; ``fusionlint verify`` reuses it.
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

_VERSION_PROGRAM = r"""
#include <cstdio>
#include <cublasLt.h>
#include <cuda_runtime.h>
int main() {
  int rt = 0, drv = 0, dev = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, dev);
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

    @property
    def works(self) -> bool:
        """Every cuBLAS call succeeded, no CUDA error, and every numerical check matched."""
        return (self.build_rc == 0 and self.run_rc == 0 and bool(self.calls)
                and all(c["status"] in OK_STATUSES for c in self.calls)
                and all(e == "cudaSuccess" for e in self.cuda_errors)
                and bool(self.numerics) and all(n["ok"] for n in self.numerics))

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
        elif m := _CUDA.match(line):
            out.cuda_errors.append(m["error"])
        elif m := _TFLOPS.match(line):
            out.tflops.append({"tflops": float(m["tflops"]), "m": int(m["m"]), "n": int(m["n"]), "k": int(m["k"])})
    return out


def _run(cmd: list[str], timeout: int, env: dict | None = None) -> tuple[int | None, str]:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as exc:
        return None, f"timed out after {timeout}s: {exc}"
    except OSError as exc:
        return 127, f"cannot run {cmd[0]}: {exc}"


def build(source: Path, exe: Path) -> tuple[int, str]:
    includes = [f"-I{d}" for d in os.environ.get(EXTRA_INCLUDES_ENV, "").split(":") if d]
    rc, log = _run(["nvcc", "-x", "cu", str(source), "-o", str(exe), *NVCC_FLAGS, *includes], timeout=900)
    return (rc if rc is not None else 124), log


def _exe(source: Path, workdir: Path) -> Path:
    return workdir / (re.sub(r"\W", "_", str(source)) + ".bin")


def run_built(source: Path, workdir: Path, timeout: int = 300) -> Outcome:
    env = dict(os.environ, CUBLASLT_LOG_LEVEL="1")
    run_rc, log = _run([str(_exe(source, workdir))], timeout, env)
    return parse_output(str(source), 0, run_rc, log)


def machine(workdir: Path) -> dict:
    info: dict = {}
    src, exe = workdir / "version.cu", workdir / "version.bin"
    src.write_text(_VERSION_PROGRAM)
    rc, log = build(src, exe)
    if rc == 0:
        _, out = _run([str(exe)], 60)
        try:
            info.update(json.loads(out.strip().splitlines()[-1]))
        except (ValueError, IndexError):
            info["version_probe"] = out[-500:]
    _, smi = _run(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"], 60)
    info["nvidia_smi"] = smi.strip()
    _, nvcc = _run(["nvcc", "--version"], 60)
    info["nvcc"] = nvcc.strip().splitlines()[-1] if nvcc.strip() else ""
    return info


def run_all(sources: list[Path], jobs: int, serial: bool = False) -> tuple[dict, list[Outcome]]:
    """Build in parallel; run in parallel, or one at a time (``serial``) for timings."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        info = machine(work)
        with cf.ThreadPoolExecutor(jobs) as pool:
            builds = dict(zip(sources, pool.map(lambda s: build(s, _exe(s, work)), sources)))
        runnable = [s for s in sources if builds[s][0] == 0]
        if serial:
            ran = {s: run_built(s, work) for s in runnable}
        else:
            with cf.ThreadPoolExecutor(jobs) as pool:
                ran = dict(zip(runnable, pool.map(lambda s: run_built(s, work), runnable)))
    outcomes = [ran[s] if s in ran else Outcome(str(s), builds[s][0], log=clip_log(builds[s][1])) for s in sources]
    return info, outcomes


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
    args = ap.parse_args(argv)
    if shutil.which("nvcc") is None:
        print("fusionlint evidence: nvcc not found on PATH", file=sys.stderr)
        return 2
    info, outcomes = run_all(sorted(Path(s) for s in args.sources), args.jobs, args.serial_run)
    write_record(Path(args.out), info, outcomes)
    works = sum(o.works for o in outcomes)
    print(f"wrote {args.out}.json/.txt: {len(outcomes)} programs, {works} work, {len(outcomes) - works} fail")
    return 0


if __name__ == "__main__":
    sys.exit(main())
