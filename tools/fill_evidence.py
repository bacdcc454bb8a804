"""Fill each rule's `evidence:` block in a ruleset from the fixtures and the device record.

    python3 tools/fill_evidence.py rulesets/hopper-sm90/cublaslt.yaml kernels_ref/evidence/h200-evidence.json

For rule FLnnn the failing fixtures are fixtures/cublaslt/rules/FLnnn_*.cpp without the `_ok`
suffix, the passing ones those with it. `observed` summarises, per fixture, the first
non-SUCCESS call (or the numerics) as recorded on the device. Only the blocks of rules whose
`device_record:` is this record, and `evidence: {}` blocks with fixtures in it, are rewritten:
a ruleset's rules may cite different records.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def outcome(p: dict) -> str:
    if p["build_rc"] != 0:
        m = re.search(r'static assertion failed with "([^"\\]+)', p["log"])
        if m:
            return f"compile error: {m.group(1).strip()}"
        m = re.search(r'incomplete type "([^"<]+)', p["log"])
        if m:
            return f"compile error: incomplete type {m.group(1).strip()}"
        m = re.search(r'class "([^"<]+)[^"]*" has no member "(\w+)"', p["log"])
        if m:
            return f"compile error: {m.group(1).rsplit('::', 1)[-1]} has no member {m.group(2)}"
        return "build failed"
    bad = next((c for c in p["calls"] if c["status"] not in ("CUBLAS_STATUS_SUCCESS", "Success")), None)
    if bad:
        return f"{bad['function']} -> {bad['status']}"
    if any(e != "cudaSuccess" for e in p["cuda_errors"]):
        return f"all calls SUCCESS, then CUDA error {next(e for e in p['cuda_errors'] if e != 'cudaSuccess')}"
    if p["numerics"] and not all(n["ok"] for n in p["numerics"]):
        return f"all calls SUCCESS but D is wrong (max abs err {max(n['max_abs_err'] for n in p['numerics']):g})"
    return "works, D matches the host reference"


def block(code: str, record_path: str, programs: dict, indent: str, old: list[str]) -> str:
    """``old``: the block's current lines; fail/pass lists written there (which may name other
    rules' fixtures as neighbours) are kept, missing ones are derived from the file names."""
    def listed(key: str) -> list[str] | None:
        for line in old:
            if m := re.match(rf"\s*{key}: \[(.*)\]\s*$", line):
                return [x.strip() for x in m[1].split(",") if x.strip()]
        return None

    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "fixtures").glob(f"*/rules/{code}_*.c*"))
    fail = listed("fail") or [f for f in files if not Path(f).stem.endswith("_ok")]
    ok = listed("pass") or [f for f in files if Path(f).stem.endswith("_ok")]
    observed = "; ".join(f"{Path(f).stem}: {outcome(programs[f]) if f in programs else 'not run'}" for f in fail + ok)
    lines = [f"{indent}evidence:", f"{indent}  fail: [{', '.join(fail)}]", f"{indent}  pass: [{', '.join(ok)}]",
             f"{indent}  device_record: {record_path}", f"{indent}  observed: >-"]
    words, line = observed.split(), ""
    for w in words:
        if len(line) + len(w) > 90:
            lines.append(f"{indent}    {line.rstrip()}")
            line = ""
        line += w + " "
    lines.append(f"{indent}    {line.rstrip()}")
    return "\n".join(lines)


def main() -> int:
    ruleset, record_path = Path(sys.argv[1]), sys.argv[2]
    programs = json.loads((ROOT / record_path).read_text())["programs"]
    text = ruleset.read_text()
    out, code = [], None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := re.match(r"\s*- id: (FL\d{3})", line):
            code = m[1]
        if m := re.match(r"(\s*)evidence:", line):
            indent = m[1]
            i += 1
            start = i
            while i < len(lines) and (lines[i].startswith(indent + " ") and lines[i].strip()):
                i += 1
            old = lines[start:i]
            cited = next((m[1] for x in old if (m := re.match(r"\s*device_record:\s*(\S+)", x))), None)
            fixtures = any(f.startswith(f"fixtures/") and Path(f).stem.startswith(f"{code}_") for f in programs)
            new = block(code, record_path, programs, indent, old)
            ran = any(f"{Path(f).stem}: not run" not in new for f in programs if Path(f).stem.startswith(f"{code}_"))
            if (cited == record_path or (cited is None and fixtures)) and ran:
                out.append(new)
            else:
                out.append(line)
                out.extend(old)
            continue
        out.append(line)
        i += 1
    ruleset.write_text("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
