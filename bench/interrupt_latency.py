"""How long Ctrl-C takes to end a run whose workers are inside a libclang parse, on a loaded machine.

    python bench/interrupt_latency.py [--trials N] [--busy K]

Each trial starts ``fusionlint check`` on small files whose workers the test hook
(FUSIONLINT_TEST_WORKER_HOOK=parse:NAME) sends into a libclang parse of minutes, waits until every
worker is inside it, sends SIGINT and times the exit. K busy-loop processes (default: one per core)
keep the cores saturated meanwhile. Both paths are measured: the worker pool (-j 2, two files) and a
single file's child. Prints the load average, each trial and the worst latency per path.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = """#include <cublasLt.h>
void set_transa(cublasLtMatmulDesc_t desc) {
  int t = CUBLAS_OP_T;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
}
"""


def trial(folder: Path, files: list[str], jobs: int) -> tuple[int, float, int]:
    """(exit status, seconds from SIGINT to exit, workers still alive afterwards)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in files:
        (folder / name).write_text(SOURCE)
        (folder / f"{name}.parsing").unlink(missing_ok=True)
    env = {**os.environ, "FUSIONLINT_TEST_WORKER_HOOK": ",".join(f"parse:{f}" for f in files)}
    proc = subprocess.Popen([sys.executable, "-m", "fusionlint.cli", "--no-system-headers", "--no-cache", "-j", str(jobs),
                             *[str(folder / f) for f in files]],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    markers = [folder / f"{f}.parsing" for f in files]
    deadline = time.monotonic() + 120
    while not all(m.exists() and m.read_text() for m in markers) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    pids = [int(m.read_text()) for m in markers if m.exists() and m.read_text()]
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=300)
    seconds = time.monotonic() - start
    alive = sum(1 for p in pids if Path(f"/proc/{p}").exists()
                and "Z" not in Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0])
    return proc.returncode, seconds, alive


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--busy", type=int, default=os.cpu_count() or 2, help="busy-loop processes (default: one per core)")
    a = ap.parse_args()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.busy)]
    worst: dict[str, float] = {}
    try:
        time.sleep(2)
        print(f"cores {os.cpu_count()}, busy loops {a.busy}, load average {os.getloadavg()[0]:.2f} "
              f"{os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(a.trials):
                for label, files, jobs in (("pool", ["a.cpp", "b.cu"], 2), ("one file", ["a.cpp"], 1)):
                    rc, seconds, alive = trial(Path(tmp) / label.replace(" ", "_"), files, jobs)
                    worst[label] = max(worst.get(label, 0.0), seconds)
                    print(f"trial {i + 1} {label:8s}: exit {rc}, {seconds:.3f} s after SIGINT, {alive} worker(s) left")
        print(f"load average at the end {os.getloadavg()[0]:.2f}")
        print("worst: " + ", ".join(f"{k} {v:.3f} s" for k, v in worst.items()))
    finally:
        for b in busy:
            b.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
