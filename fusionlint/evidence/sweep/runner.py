"""Build the sweep driver, ask cuBLASLt about every configuration of the plan, write the table.

    python3 -m fusionlint.evidence.sweep --out DIR [--joint 3000] [--jobs 14]

Standard library only. Writes ``DIR/cublaslt-support.json.gz`` (the table, see
fusionlint/model/support_table.py) and, with ``--joint N``, ``DIR/joint-check.json``: N configurations
drawn at random from the joint space, run through the driver, against the table's prediction.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from fusionlint.evidence.sweep import space, stages
from fusionlint.model.support_table import (
    ALPHABET,
    BAD_LINE,
    DRIVER_DIED,
    FORMAT,
    OK,
    UNREADABLE,
    SupportTable,
    _digits,
)

STATUS_NAMES = {0: "CUBLAS_STATUS_SUCCESS", 1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED",
                7: "CUBLAS_STATUS_INVALID_VALUE", 8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR",
                13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR",
                15: "CUBLAS_STATUS_NOT_SUPPORTED", 16: "CUBLAS_STATUS_LICENSE_ERROR"}
DESC_ATTRIBUTES = {3: "TRANSA", 4: "TRANSB", 7: "EPILOGUE", 8: "BIAS_POINTER", 11: "EPILOGUE_AUX_POINTER",
                   12: "EPILOGUE_AUX_LD", 13: "EPILOGUE_AUX_BATCH_STRIDE", 17: "A_SCALE_POINTER",
                   18: "B_SCALE_POINTER", 19: "C_SCALE_POINTER", 20: "D_SCALE_POINTER", 21: "AMAX_D_POINTER",
                   22: "EPILOGUE_AUX_DATA_TYPE", 25: "FAST_ACCUM", 26: "BIAS_DATA_TYPE", 31: "A_SCALE_MODE",
                   32: "B_SCALE_MODE", 2: "POINTER_MODE"}
LAYOUT_ATTRIBUTES = {1: "ORDER", 5: "BATCH_COUNT", 6: "STRIDED_BATCH_OFFSET"}


class SweepError(RuntimeError):
    pass


def driver_source() -> Path:
    return Path(str(resources.files("fusionlint.evidence.sweep").joinpath("driver.cpp")))


def build_driver(workdir: Path, nvcc: str = "nvcc", include_dirs: list[str] = (), lib_dirs: list[str] = ()) -> Path:
    exe = workdir / "fusionlint-sweep-driver"
    cmd = [nvcc, "-std=c++17", "-O2", str(driver_source()), "-o", str(exe),
           *(f"-I{d}" for d in include_dirs), *(x for d in lib_dirs for x in (f"-L{d}", f"-Xlinker=-rpath={d}")),
           "-lcublasLt"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SweepError(f"building the sweep driver failed: {(r.stdout + r.stderr).strip()[:2000]}")
    return exe


def outcome(tokens: list[str]) -> str:
    """The table's status text of one driver output line (without its line number)."""
    hs, returned, ms, cuda, where = int(tokens[0]), int(tokens[1]), int(tokens[2]), tokens[3], tokens[4]
    status = STATUS_NAMES.get(hs, f"CUBLAS_STATUS_{hs}")
    if where == "desc_create":
        return f"cublasLtMatmulDescCreate -> {status}"
    if where.startswith("desc_set:"):
        attr = DESC_ATTRIBUTES.get(int(where.split(":")[1]), where.split(":")[1])
        return f"cublasLtMatmulDescSetAttribute(CUBLASLT_MATMUL_DESC_{attr}) -> {status}"
    if where == "layout_create":
        return f"cublasLtMatrixLayoutCreate -> {status}"
    if where.startswith("layout_set:"):
        attr = LAYOUT_ATTRIBUTES.get(int(where.split(":")[1]), where.split(":")[1])
        return f"cublasLtMatrixLayoutSetAttribute(CUBLASLT_MATRIX_LAYOUT_{attr}) -> {status}"
    if hs != 0:
        return f"cublasLtMatmulAlgoGetHeuristic -> {status}"
    if returned == 0:
        return "cublasLtMatmulAlgoGetHeuristic -> no algorithm (0 results)"
    if ms != 0:
        return f"cublasLtMatmul -> {STATUS_NAMES.get(ms, f'CUBLAS_STATUS_{ms}')}"
    if cuda != "cudaSuccess":
        return f"cublasLtMatmul -> CUDA error {cuda}"
    return OK


_ANSWER = re.compile(r"(\d+) (bad-line|-?\d+ -?\d+ -?\d+ \S+ \S+)\s*$")


def _run_chunk(exe: Path, lines: list[str], timeout: float) -> list[str]:
    """Outcomes of ``lines`` through one driver process, restarted after a line that left a CUDA error.
    Answers are matched to input lines by the line number the driver prints first; anything else
    on its standard output (text the library printed) is reported once on stderr and skipped."""
    results: list[str] = []
    start = 0
    while start < len(lines):
        data = "\n".join(lines[start:]) + "\n"
        r = subprocess.run([str(exe)], input=data, capture_output=True, text=True, errors="replace", timeout=timeout)
        answers: dict[int, list[str]] = {}
        for ln in r.stdout.splitlines():
            m = _ANSWER.search(ln)
            if m and int(m.group(1)) >= 1:
                answers[int(m.group(1))] = m.group(2).split()
                if m.start() == 0:
                    continue
            if ln.strip():
                _foreign_output(ln)
        answered = max(answers, default=0)
        for n in range(1, answered + 1):
            tok = answers.get(n)
            if tok is None:
                results.append(UNREADABLE)
            else:
                results.append(BAD_LINE if tok[0] == "bad-line" else outcome(tok))
        start += answered
        if r.returncode not in (0, 3) or (r.returncode == 3 and not answered):
            # the driver died without answering the next line: record that line and go on
            results.append(f"{DIED} (exit status {r.returncode}): {r.stderr.strip()[:200]}")
            start += 1
    return results[:len(lines)]


_FOREIGN_SEEN: set[str] = set()


def _foreign_output(line: str) -> None:
    key = line.strip()[:80]
    if key not in _FOREIGN_SEEN and len(_FOREIGN_SEEN) < 20:
        _FOREIGN_SEEN.add(key)
        print(f"sweep: driver printed: {line.strip()[:300]}", file=sys.stderr, flush=True)


def run_lines(exe: Path, lines: list[str], jobs: int, timeout: float = 3600) -> list[str]:
    if not lines:
        return []
    size = max(1, -(-len(lines) // jobs))
    chunks = [lines[i:i + size] for i in range(0, len(lines), size)]
    with cf.ThreadPoolExecutor(len(chunks)) as pool:
        parts = list(pool.map(lambda c: _run_chunk(exe, c, timeout), chunks))
    return [x for p in parts for x in p]


def machine_info(workdir: Path, nvcc: str) -> dict:
    """GPU, compute capability, driver and library versions (harness's version probe)."""
    from fusionlint.evidence import harness

    return harness.machine(workdir, harness.Toolchain(nvcc=nvcc))


def _type_lines(domains: dict[str, list]) -> list[str]:
    """Driver lines for every type combination, the other fields at the base (built as strings:
    there are millions)."""
    import itertools

    first = {f: domains[f][0] for f in space.TYPE_FIELDS}
    tail = " ".join(space.encode(stages.configuration(first)).split()[len(space.TYPE_FIELDS):])
    ints = [[str(space.ENUM_VALUES[v]) for v in domains[f]] for f in space.TYPE_FIELDS]
    return [" ".join(c) + " " + tail for c in itertools.product(*ints)]


Measure = Callable[[list[str]], list[str]]  # driver input lines -> outcome texts


DIED = DRIVER_DIED  # the outcome of a line the driver did not survive


class TimeLimit(SweepError):
    pass


class Checkpoint:
    """Outcomes measured so far, kept in a file after every block of lines, so that a sweep cut
    short (a time limit per command on a lent GPU) goes on where it stopped. Keyed by the hash of
    each measured line list; a different plan simply measures afresh."""

    def __init__(self, path: Path, deadline: float | None = None, block: int = 100_000):
        self.path, self.deadline, self.block = path, deadline, block
        self.done: dict[str, list[str]] = {}
        if path.exists():
            for key, rec in json.loads(gzip.decompress(path.read_bytes())).items():
                self.done[key] = [rec["statuses"][ALPHABET.index(c)] for c in rec["chars"]]

    def save(self) -> None:
        out = {}
        for key, got in self.done.items():
            statuses = sorted(set(got))
            if len(statuses) > len(ALPHABET):
                raise SweepError("too many distinct outcomes for a checkpoint")
            index = {s: ALPHABET[i] for i, s in enumerate(statuses)}
            out[key] = {"statuses": statuses, "chars": "".join(index[s] for s in got)}
        from fusionlint.store import write_atomic

        if not write_atomic(self.path, gzip.compress(json.dumps(out).encode(), 6, mtime=0)):
            raise SweepError(f"cannot write the checkpoint {self.path}")

    def wrap(self, measure: Measure) -> Measure:
        import hashlib

        def resumable(lines: list[str]) -> list[str]:
            key = hashlib.sha256("\n".join(lines).encode()).hexdigest()
            got = self.done.setdefault(key, [])
            died = [i for i, o in enumerate(got) if o.startswith(DIED)]
            if died:  # measured by a driver that lost its buffered answers when killed: blame unreliable
                for i, o in zip(died, measure([lines[i] for i in died])):
                    got[i] = o
                self.save()
            last = 0.0
            while len(got) < len(lines):
                if self.deadline is not None and time.time() + last > self.deadline:
                    self.save()
                    raise TimeLimit(f"time limit reached after {len(got)} of {len(lines)} lines of this step; "
                                    f"measured outcomes kept in {self.path}: run again with --resume {self.path}")
                t = time.time()
                got += measure(lines[len(got):len(got) + self.block])
                last = time.time() - t
                self.save()
            return got

        return resumable


def sweep(measure: Measure, domains: dict[str, list] | None = None, log=print) -> dict:
    """Measure the whole plan (``domains``: the space, by default space.DOMAINS); the table as a dict."""
    domains = domains or space.DOMAINS
    statuses: list[str] = [OK]

    def char(text: str) -> str:
        if text not in statuses:
            statuses.append(text)
        return ALPHABET[statuses.index(text)]

    t0 = time.time()
    lines = _type_lines(domains)
    type_out = measure(lines)
    type_rows = "".join(char(s) for s in type_out)
    ok_types = [i for i, s in enumerate(type_out) if s == OK]
    log(f"sweep: types: {len(lines)} combinations, {len(ok_types)} work ({time.time() - t0:.0f} s)")
    radix = [len(domains[f]) for f in space.TYPE_FIELDS]
    table_stages = []
    for stage in stages.STAGES:
        t1 = time.time()
        name, fields, complete = stage
        per_type: list[tuple[int, int]] = []  # (type index, number of rows)
        lines = []
        for t in ok_types:
            types = {f: domains[f][d] for f, d in zip(space.TYPE_FIELDS, _digits(t, radix))}
            rows = [space.encode(cfg) for cfg in stages.stage_rows(types, stage, domains)]
            per_type.append((t, len(rows)))
            lines += rows
        out = measure(lines)
        rows_by_type, i = {}, 0
        for t, n in per_type:
            rows_by_type[str(t)] = "".join(char(s) for s in out[i:i + n])
            i += n
        works = sum(s == OK for s in out)
        log(f"sweep: stage {name}: {len(lines)} rows, {works} work ({time.time() - t1:.0f} s)")
        table_stages.append({"name": name, "fields": fields, "complete_epilogue": complete, "rows": rows_by_type,
                             "ties": stages.ties(fields)})
    if len(statuses) > len(ALPHABET):
        raise SweepError(f"{len(statuses)} distinct outcomes: more than the table format holds")
    return {
        "format": FORMAT,
        "fields": {f: list(dom) for f, dom in domains.items()},
        "base": space.BASE,
        "needs": {e: space.needs(e) for e in domains["epilogue"] if space.needs(e)},
        "scale_needs": {"pointers": dict(space.SCALE_POINTERS), "except": list(space.UNSCALED_MODES)},
        "statuses": statuses,
        "types": {"fields": space.TYPE_FIELDS, "rows": type_rows},
        "stages": table_stages,
        "shape": {"m": 64, "n": 64, "k": 64, "ld": 64, "aux_ld": 128,
                  "note": "square, well-aligned problems: the table records type/mode legality only"},
    }


JOINT_KINDS = ("uniform", "predicted to work", "one field changed", "two fields changed")


def random_configs(table: SupportTable, count: int, seed: int) -> list[tuple[str, dict]]:
    """Configurations from the joint space, a quarter of each kind: every field uniform over its
    domain; a configuration the model predicts to work, built stage by stage from rows each stage
    accepts (so several stages away from the base at once: what the factorisation claims and
    the per-stage sweep never measured together); and such a configuration with one or two
    fields changed at random (the way real mistakes are made)."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        kind = JOINT_KINDS[n % 4]
        if kind == "uniform":
            cfg = {f: rng.choice(dom) for f, dom in table.fields.items()}
        else:
            cfg = _working_config(table, rng)
            if kind != "predicted to work":
                for f in rng.sample(sorted(table.fields), 1 if kind == "one field changed" else 2):
                    cfg[f] = rng.choice([v for v in table.fields[f] if v != cfg[f]] or table.fields[f])
        out.append((kind, cfg))
    return out


def _working_config(table: SupportTable, rng: random.Random, tries: int = 50) -> dict:
    """A configuration the table predicts to work: an accepted type combination, then for each stage
    (in random order) a random accepted row that agrees with the fields fixed so far."""
    radix = [len(table.fields[f]) for f in table.type_fields]
    cfg: dict = {}
    for _ in range(tries):
        t = rng.choice(table._ok_types)
        cfg = dict(table.base)
        cfg.update({f: table.fields[f][d] for f, d in zip(table.type_fields, _digits(t, radix))})
        fixed = set(table.type_fields)
        order = list(table.stages)
        rng.shuffle(order)
        for stage in order:
            rows = stage.rows.get(t, "")
            ok = [combo for combo, ch in zip(stages.product(list(stage.fields), table.fields), rows)
                  if ch == table._ok_char
                  and all(cfg[f] == v for f, v in zip(stage.fields, combo) if f in fixed)]
            if not ok:
                break
            cfg.update(zip(stage.fields, rng.choice(ok)))
            fixed |= set(stage.fields)
        else:
            if table.verdict(cfg).supported:
                return cfg
    return cfg


def joint_check(measure: Measure, table: SupportTable, count: int, seed: int) -> dict:
    configs = random_configs(table, count, seed)
    measured = measure([space.encode(c) for _, c in configs])
    rows, by_kind = [], {}
    for (kind, cfg), got in zip(configs, measured):
        v = table.verdict(cfg)
        works = got == OK
        agree = v.supported == works
        rows.append({"kind": kind, "config": cfg, "measured": got, "predicted": OK if v.supported else v.failure,
                     "predicted_stage": v.stage, "agree": agree})
        k = by_kind.setdefault(kind, Counter())
        k["n"] += 1
        k["agree"] += agree
        k["measured_works"] += works
        k["predicted_works"] += bool(v.supported)
        k["missed_failure"] += (not works) and bool(v.supported)
        k["false_failure"] += works and not v.supported
    total = len(rows)
    agree = sum(r["agree"] for r in rows)
    return {"seed": seed, "count": total, "agree": agree, "accuracy": agree / total if total else 0.0,
            "by_kind": {k: dict(v) for k, v in by_kind.items()},
            "disagreements": [r for r in rows if not r["agree"]], "configs": rows}


def write_table(table: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(table, separators=(",", ":"), sort_keys=True).encode()
    path.write_bytes(gzip.compress(raw, 9, mtime=0))


def table_name(info: dict) -> str:
    """``cublaslt-13.1.0-nvidia-h200.json.gz``: the version and GPU a table was measured on."""
    from fusionlint.model.support_table import version_text

    gpu = "".join(ch if ch.isalnum() else "-" for ch in str(info.get("gpu") or "gpu").lower()).strip("-")
    return f"cublaslt-{version_text(int(info.get('cublaslt_version') or 0)).replace(' ', '-')}-{gpu}.json.gz"


def calibrate(table_path: Path, joint: int = 0, seed: int = 15, jobs: int = 1, nvcc: str = "nvcc",
              include_dirs: list[str] = (), lib_dirs: list[str] = (), log=print,
              checkpoint: Checkpoint | None = None) -> dict:
    """Build the driver, sweep, write the table to ``table_path`` (a directory: there, under
    :func:`table_name`) and, with ``joint``, the joint check next to it
    (``<table>.joint-check.json``); returns a summary."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_driver(Path(tmp), nvcc, include_dirs, lib_dirs)
        info = machine_info(Path(tmp), nvcc)
        if table_path.is_dir() or not table_path.name.endswith(".json.gz"):
            table_path = table_path / table_name(info)

        def measure(lines: list[str]) -> list[str]:
            return run_lines(exe, lines, jobs)

        if checkpoint is not None:
            measure = checkpoint.wrap(measure)

        t0 = time.time()
        table = sweep(measure, log=log)
        table["machine"] = info
        table["cublaslt_version"] = int(info.get("cublaslt_version") or 0)
        table["sweep_seconds"] = round(time.time() - t0, 1)
        write_table(table, table_path)
        log(f"wrote {table_path} ({table['sweep_seconds']} s)")
        summary = {"table": str(table_path), "machine": info, "sweep_seconds": table["sweep_seconds"]}
        if joint:
            model = SupportTable.load(table_path)
            rec = joint_check(measure, model, joint, seed)
            rec["machine"] = info
            rec["table"] = table_path.name
            joint_path = table_path.with_name(table_path.name.replace(".json.gz", "") + ".joint-check.json")
            joint_path.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
            log(f"joint check: {rec['agree']}/{rec['count']} agree ({100 * rec['accuracy']:.2f} %): {joint_path}")
            summary["joint"] = {k: rec[k] for k in ("count", "agree", "accuracy", "by_kind")}
    return summary


def _joint_only(table_path: Path, out: Path, count: int, seed: int, jobs: int, nvcc: str) -> int:
    model = SupportTable.load(table_path)
    with tempfile.TemporaryDirectory() as tmp:
        exe = build_driver(Path(tmp), nvcc)
        t0 = time.time()
        rec = joint_check(lambda lines: run_lines(exe, lines, jobs), model, count, seed)
        rec["machine"] = machine_info(Path(tmp), nvcc)
    rec["table"] = table_path.name
    rec["seconds"] = round(time.time() - t0, 1)
    path = out / (table_path.name.replace(".json.gz", "") + ".joint-check.json") if out.is_dir() else out
    path.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    print(f"joint check: {rec['agree']}/{rec['count']} agree ({100 * rec['accuracy']:.2f} %): {path}")
    for kind, k in rec["by_kind"].items():
        print(f"  {kind}: {k['agree']}/{k['n']} agree, {k['measured_works']} work, {k['predicted_works']} predicted "
              f"to work, {k['missed_failure']} failures missed, {k['false_failure']} false failures")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m fusionlint.evidence.sweep",
                                 description="Sweep cuBLASLt's support of the configuration space on this GPU.")
    ap.add_argument("--out", required=True, help="the table file to write (.json.gz), or a directory for it")
    ap.add_argument("--joint", type=int, default=0, help="random joint-space configurations to check the model on")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("-j", "--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "nvcc")
    ap.add_argument("--resume", metavar="FILE", help="keep measured outcomes in FILE (.json.gz) and go on from "
                    "those already there: for a sweep split over several runs")
    ap.add_argument("--time-limit", type=float, metavar="SECONDS",
                    help="stop (exit status 4) before this many seconds have passed, keeping what was measured "
                         "in the --resume file")
    ap.add_argument("--table", metavar="TABLE", help="no sweep: check the joint-space model of this measured table "
                    "(--joint N configurations) and write the check next to --out")
    args = ap.parse_args(argv)
    if args.table:
        return _joint_only(Path(args.table), Path(args.out), args.joint or 3000, args.seed, args.jobs, args.nvcc)
    if args.time_limit is not None and not args.resume:
        ap.error("--time-limit needs --resume FILE to keep what was measured")
    checkpoint = None
    if args.resume:
        deadline = time.time() + args.time_limit if args.time_limit is not None else None
        checkpoint = Checkpoint(Path(args.resume), deadline)
    try:
        calibrate(Path(args.out), args.joint, args.seed, args.jobs, args.nvcc, log=lambda m: print(m, flush=True),
                  checkpoint=checkpoint)
    except TimeLimit as exc:
        print(f"sweep: {exc}", file=sys.stderr)
        return 4
    except SweepError as exc:
        print(f"sweep: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
