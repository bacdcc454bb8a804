"""Build fixture and reference programs with nvcc, run them on the local GPU, record the result.

Run on a GPU machine from the repository root:

    python3 -m fusionlint.evidence.harness --out kernels_ref/evidence/h200-evidence.txt \
        fixtures/cublaslt/rules/*.cpp kernels_ref/cublaslt/*.cpp

Each program prints ``EVIDENCE <call> <status>`` lines and ``EVIDENCE numerics ok|mismatch``
(see fixtures/cublaslt/probe.h). The record keeps, per program, the build command, exit
status and those lines, plus a header describing the machine. Standard library only, so it
runs where fusionlint's own dependencies are not installed.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

NVCC_FLAGS = ["-std=c++17", "-O2", "-arch=sm_90a", "-lcublasLt", "-lcublas"]


@dataclass
class Outcome:
    source: str
    build_cmd: str
    build_rc: int
    build_log: str
    run_rc: int | None
    run_log: str


def machine_description() -> str:
    lines = []
    for cmd in (["nvidia-smi", "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"],
                ["nvcc", "--version"]):
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
        except (OSError, subprocess.TimeoutExpired) as exc:
            out = f"unavailable: {exc}"
        lines.append(f"$ {' '.join(cmd)}\n{out}")
    return "\n".join(lines)


def build_and_run(source: Path, workdir: Path, timeout: int = 120) -> Outcome:
    exe = workdir / (source.stem + ".bin")
    cmd = ["nvcc", "-x", "cu", str(source), "-o", str(exe), *NVCC_FLAGS]
    b = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if b.returncode != 0:
        return Outcome(str(source), " ".join(cmd), b.returncode, (b.stdout + b.stderr)[-4000:], None, "")
    env = dict(os.environ, CUBLASLT_LOG_LEVEL="1")
    try:
        r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout, env=env)
        rc, log = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        rc, log = None, "timed out"
    return Outcome(str(source), " ".join(cmd), 0, (b.stdout + b.stderr)[-2000:], rc, log[-8000:])


def record(outcomes: list[Outcome]) -> str:
    parts = ["# fusionlint device evidence", machine_description(), ""]
    for o in outcomes:
        parts.append(f"=== {o.source}")
        parts.append(f"build: {o.build_cmd} -> rc={o.build_rc}")
        if o.build_rc != 0:
            parts.append(o.build_log.rstrip())
            continue
        parts.append(f"run: rc={o.run_rc}")
        parts.append(o.run_log.rstrip())
        parts.append("")
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 4)
    args = ap.parse_args(argv)
    if shutil.which("nvcc") is None:
        print("fusionlint evidence: nvcc not found", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        with cf.ThreadPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(lambda s: build_and_run(Path(s), Path(tmp)), sorted(args.sources)))
    Path(args.out).write_text(record(outcomes), encoding="utf-8")
    print(f"wrote {args.out}: {len(outcomes)} programs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
