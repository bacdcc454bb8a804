"""FL336 and FL344 against the 2.x thread-block grid measured on the H200
(fusionlint.evidence.grid_2x_threads; kernels_ref/evidence/h200-2x-threads-grid.*): the grid's
programs are written again from the generator and linted as users would (source mode); on every
program that built, FL336 fires exactly on those whose run() failed (kErrorInternal: the block's
registers exceed the SM's 64K), and no working program gets an error."""
from __future__ import annotations

import json
import re
from pathlib import Path

from cli_helpers import run_cli
from fusionlint.evidence import grid_2x_threads

EVIDENCE = Path(__file__).resolve().parents[1] / "kernels_ref" / "evidence"


def test_the_grid_is_the_one_measured():
    record = json.loads((EVIDENCE / "h200-2x-threads-grid.json").read_text())
    assert "H200" in record["machine"]["gpu"]
    assert sorted(Path(k).name for k in record["programs"]) == sorted(e["file"] for e in grid_2x_threads.grid())


def test_fl336_fires_exactly_on_the_blocks_that_failed_to_launch(tmp_path):
    record = {Path(k).name: r for k, r in
              json.loads((EVIDENCE / "h200-2x-threads-grid.json").read_text())["programs"].items()}
    entries = grid_2x_threads.write(tmp_path)
    rc, out, err = run_cli("check", "--no-cache", "--no-system-headers", "-j", "2", tmp_path)
    errors: dict[str, set[str]] = {}
    for name, code in re.findall(r"^.*/(t\d{3}_plain\.cu):\d+:\d+: error: .* \[(FL\d{3})\]$", out, re.M):
        errors.setdefault(name, set()).add(code)
    built = [e for e in entries if record[e["file"]]["build_rc"] == 0]
    assert len(built) == 47
    launch_failed = {e["file"] for e in built if not record[e["file"]]["works"]}
    assert len(launch_failed) == 18 and all("ErrorInternal" in record[f]["log"] for f in launch_failed)
    assert {e["file"] for e in built if "FL336" in errors.get(e["file"], set())} == launch_failed
    assert [e["file"] for e in built if e["file"] not in launch_failed and e["file"] in errors] == []
    # the 16- and 32-warp blocks that work are there too: the bound is not a thread count
    assert {e["warps"] for e in built if e["file"] not in launch_failed} == {8, 16, 32}
    # the compile errors the grid also found: FL344 on tf32's crosswise rows, FL336 on K-major tiles with
    # too few access rows for the warps; each rule on exactly the programs nvcc stopped with its assertion
    def stopped_by(message: str) -> set[str]:
        return {e["file"] for e in entries if record[e["file"]]["build_rc"] and message in record[e["file"]]["log"]}

    crosswise = stopped_by("kCrosswise should be no large than one shared memory cache line.")
    iterations = stopped_by("Number of iterations must be non-zero")
    assert (len(crosswise), len(iterations)) == (9, 12)
    assert {f for f, c in errors.items() if "FL344" in c} == crosswise
    fl336 = {f for f, c in errors.items() if "FL336" in c}
    assert launch_failed | iterations <= fl336
    # the others FL336 names (register-bound 16-warp blocks) fail too: nvcc stopped them first with
    # another assertion (the epilogue's thread map, tf32's crosswise rows)
    assert all(record[f]["build_rc"] for f in fl336 - launch_failed - iterations)
