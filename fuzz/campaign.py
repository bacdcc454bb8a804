"""A long, resumable fuzz campaign: seeded inputs from ``fuzz/generators.py`` through the real
pipeline in this one process (stand-in headers), with the properties of ``tests/test_fuzz.py``:

- no exception escapes ``check_file`` and it neither reports an internal error (``FL000``:
  "file not checked" or "CUTLASS extraction failed") nor hangs (``--timeout`` seconds);
- text output has the ``path:line:col: error|warning: message [FLnnn]`` shape (plus ``note:``
  lines), JSON parses with the documented keys, SARIF validates against the 2.1.0 schema;
- the verdict is deterministic: every ``--repeat-every``-th input is checked twice and must
  give the same findings.

Input ``N`` is ``generators.generate(random.Random(N))``, so any seed is reproduced with
``--replay N`` (prints the source and the outcome). Progress goes to ``--state`` after every
input (atomically), so an interrupted campaign resumes where it stopped and a partial run
still records its count; a seed that killed the process (a crash inside libclang) is found
on restart and recorded.

    python fuzz/campaign.py --count 10000            # run or resume
    python fuzz/campaign.py --replay 1234            # one input, verbosely
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generators import generate  # noqa: E402
from oracles import json_problems, sarif_problems, text_problems  # noqa: E402

from fusionlint.frontend.clang.parse import ParseOptions  # noqa: E402
from fusionlint.run.pipeline import check_file  # noqa: E402
from fusionlint.report import ReportContext, render  # noqa: E402
from fusionlint.rules.loader import load_rules  # noqa: E402


class Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise Timeout()


def run_one(seed: int, workdir: Path, rules, options, timeout: int, repeat: bool,
            codes: dict | None = None) -> tuple[str, list[str], float]:
    """(kind, problems, seconds) of input ``seed``; counts the codes found into ``codes``."""
    kind, src = generate(random.Random(seed))
    suffix = ".cu" if seed % 3 == 0 else ".cpp"
    path = workdir / f"fuzz_{seed}{suffix}"
    path.write_bytes(src.encode("utf-8", errors="surrogatepass"))
    problems: list[str] = []
    t0 = time.monotonic()
    signal.alarm(timeout)
    try:
        result = check_file(path, rules, options)
        again = check_file(path, rules, options) if repeat else None
    except Timeout:
        return kind, [f"hang: no verdict within {timeout} s"], time.monotonic() - t0
    except BaseException as exc:  # noqa: BLE001 - what escaped is the finding
        if isinstance(exc, KeyboardInterrupt):
            raise
        return kind, [f"exception escaped check_file: {type(exc).__name__}: {exc}"[:300]], time.monotonic() - t0
    finally:
        signal.alarm(0)
    elapsed = time.monotonic() - t0
    if result.error:
        problems.append(f"file not checked: {result.error}"[:300])
    for reason in (result.facts.internal_errors if result.facts else []):
        problems.append(f"internal error: {reason}"[:300])
    findings = sorted(result.findings, key=lambda f: f.sort_key())
    for f in findings if codes is not None else ():
        codes[f.code] = codes.get(f.code, 0) + 1
    if again is not None and sorted(again.findings, key=lambda f: f.sort_key()) != findings:
        problems.append("nondeterministic: a second run gave different findings")
    ctx = ReportContext(HERE.parent, [str(path)], rules)
    try:
        problems += text_problems(render("text", findings, ctx), str(path))
        problems += json_problems(render("json", findings, ctx))
        problems += sarif_problems(render("sarif", findings, ctx))
    except Exception as exc:  # noqa: BLE001
        problems.append(f"exception while rendering: {type(exc).__name__}: {exc}"[:300])
    if not problems:
        path.unlink()
    return kind, problems, elapsed


def _save(state_path: Path, state: dict) -> None:
    tmp = state_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, state_path)


def _supervise(args: argparse.Namespace, argv: list[str]) -> int:
    """Run the campaign in a child process, restarting it after an input killed it (the
    restarted child records that input as a failure and goes on with the next)."""
    last = None
    while True:
        rc = subprocess.run([sys.executable, __file__, *argv, "--child"]).returncode
        if rc == 0:
            return 0
        state = json.loads(args.state.read_text(encoding="utf-8")) if args.state.is_file() else {}
        where = (state.get("next_seed"), state.get("in_progress"))
        if where == last or state.get("in_progress") is None:
            print(f"campaign child failed (exit {rc}) without progress; stopping", file=sys.stderr)
            return 1
        print(f"campaign child died (exit {rc}) on seed {state.get('in_progress')}; resuming", flush=True)
        last = where


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10000, help="inputs in the campaign (seeds 0..count-1)")
    ap.add_argument("--state", type=Path, default=HERE / "campaign-state.json")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "fusionlint-fuzz")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per input before it counts as a hang")
    ap.add_argument("--repeat-every", type=int, default=4, help="check every N-th input twice (determinism)")
    ap.add_argument("--replay", type=int, metavar="SEED", help="run one input and print it and its outcome")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.replay is None and not args.child:
        return _supervise(args, sys.argv[1:] if argv is None else argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    rules = load_rules()
    options = ParseOptions(use_system_headers=False)
    signal.signal(signal.SIGALRM, _alarm)
    if args.replay is not None:
        kind, problems, secs = run_one(args.replay, args.workdir, rules, options, args.timeout, True)
        print(generate(random.Random(args.replay))[1])
        print(f"--- seed {args.replay} ({kind}, {secs:.2f} s): {problems or 'ok'}")
        return 1 if problems else 0

    state = {"next_seed": 0, "checked": 0, "by_kind": {}, "failures": [], "seconds": 0.0, "in_progress": None}
    if args.state.is_file():
        state.update(json.loads(args.state.read_text(encoding="utf-8")))
    if state["in_progress"] is not None:  # the previous run died on this input
        seed = state["in_progress"]
        state["failures"].append({"seed": seed, "kind": generate(random.Random(seed))[0],
                                  "problems": ["the process died on this input (crash in native code?)"]})
        state["next_seed"], state["in_progress"] = seed + 1, None
        state["checked"] += 1
    import hashlib

    sha = hashlib.sha256((HERE / "generators.py").read_bytes()).hexdigest()[:16]
    if state.setdefault("generator_sha256", sha) != sha:
        print(f"note: generators.py changed since this campaign started ({state['generator_sha256']}); "
              "new seeds use the current generators", file=sys.stderr)
    started = time.monotonic()
    base_seconds = state["seconds"]
    for seed in range(state["next_seed"], args.count):
        state["in_progress"] = seed
        _save(args.state, state)
        kind, problems, secs = run_one(seed, args.workdir, rules, options, args.timeout,
                                       args.repeat_every > 0 and seed % args.repeat_every == 0,
                                       state.setdefault("findings_by_code", {}))
        state["checked"] += 1
        state["by_kind"][kind] = state["by_kind"].get(kind, 0) + 1
        if problems:
            state["failures"].append({"seed": seed, "kind": kind, "problems": problems})
            print(f"seed {seed} ({kind}): {problems}", flush=True)
        state["next_seed"], state["in_progress"] = seed + 1, None
        state["seconds"] = round(base_seconds + time.monotonic() - started, 1)
        state["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        state["slowest"] = max(state.get("slowest", [0, None]), [round(secs, 2), seed])
        if seed % 100 == 0:
            print(f"{state['checked']} inputs, {len(state['failures'])} failing, {state['seconds']:.0f} s", flush=True)
    _save(args.state, state)
    print(f"done: {state['checked']} inputs, {len(state['failures'])} failing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
