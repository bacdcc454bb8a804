"""``fusionlint calibrate``: measure the cuBLASLt support table (FL127) on this machine's GPU.

It builds the sweep driver (fusionlint/evidence/sweep) with nvcc against the cuBLASLt found the
way ``verify`` finds it, asks cuBLASLt about the whole configuration space, and writes the table
where ``check`` finds it (``support_select.user_table_dir()``, or ``--out``); with ``--joint N``
it also checks the table's factorised model on N random configurations of the joint space.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from fusionlint.errors import InputError


class CalibrateUnavailable(InputError):
    """This machine cannot calibrate (no nvcc, GPU or cuBLASLt): one line, exit status 2."""


def run_calibrate(args: argparse.Namespace) -> int:
    from fusionlint.run import support_select
    from fusionlint.run.verify import Missing, find_cublas, find_gpu, find_nvcc

    nvcc = find_nvcc()
    if nvcc is None:
        raise CalibrateUnavailable("calibrate needs nvcc (the CUDA toolkit): not found on PATH, $CUDA_HOME or "
                                   "/usr/local/cuda")
    gpu, why = find_gpu()
    if gpu is None:
        raise CalibrateUnavailable(f"calibrate needs an NVIDIA GPU: {why}")
    try:
        includes, lib_dirs, _link = find_cublas([])
    except Missing as exc:
        raise CalibrateUnavailable(f"calibrate needs {exc}") from None
    from fusionlint.evidence.sweep.runner import SweepError, calibrate

    out = Path(args.out) if args.out else support_select.user_table_dir()
    if not out.name.endswith(".json.gz"):
        out.mkdir(parents=True, exist_ok=True)
    quiet = args.quiet or not sys.stderr.isatty()

    def log(message: str) -> None:
        if not quiet or message.startswith(("wrote", "joint")):
            print(f"fusionlint: calibrate: {message}", file=sys.stderr, flush=True)

    log(f"sweeping cuBLASLt on {gpu} (this takes minutes)")
    try:
        summary = calibrate(out, args.joint, args.seed, args.jobs or max(1, (os.cpu_count() or 2) - 1), nvcc,
                            includes, lib_dirs, log)
    except SweepError as exc:
        raise CalibrateUnavailable(f"calibrate failed: {exc}") from None
    print(summary["table"])
    print(f"fusionlint: calibrate: `fusionlint check` uses it for cuBLASLt "
          f"{_version(summary)} (or pass --support-table {summary['table']})", file=sys.stderr)
    return 0


def _version(summary: dict) -> str:
    from fusionlint.model.support_table import version_text

    return version_text(int(summary["machine"].get("cublaslt_version") or 0))
