"""The seeded random-mutation CUTLASS set: deterministic generation, its spread over
styles, problem-size forms and CUTLASS generations, every mutation visible in the program text and
read back by fusionlint's front end, the device slice's time limit, and the scoring of findings
against a device record."""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import pytest

from fusionlint.evidence import harness
from fusionlint.evidence import mutations_cutlass as mut
from fusionlint.evidence.mutations_cutlass_emit import FORMS, STYLES, expected_facts, program_text
from fusionlint.frontend.cutlass.reader import extract_cutlass
from fusionlint.frontend.clang.parse import ParseOptions, parse_file

ROOT = Path(__file__).resolve().parents[1]
CUTLASS_INCLUDE = ROOT / ".cutlass" / "include"
SEED, COUNT = 1, 320


@lru_cache(maxsize=None)
def entries(seed: int = SEED, count: int = COUNT) -> tuple:
    return tuple(mut.generate(seed, count))


def test_generation_is_deterministic(tmp_path):
    a, b = mut.generate(SEED, 60), mut.generate(SEED, 60)
    assert a == b
    assert [program_text(e) for e in a] == [program_text(e) for e in b]
    assert mut.generate(SEED + 1, 60) != a
    mut.write_set(SEED, 30, tmp_path / "x")
    mut.write_set(SEED, 30, tmp_path / "y")
    names = sorted(p.name for p in (tmp_path / "x").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "y").iterdir())
    assert len(names) == 30 + 2  # the programs, the probe header, manifest.json
    for name in names:
        assert (tmp_path / "x" / name).read_bytes() == (tmp_path / "y" / name).read_bytes(), name
    manifest = json.loads((tmp_path / "x" / "manifest.json").read_text())
    assert [e["file"] for e in manifest["programs"]] == [f"m{i:04d}_{STYLES[i % 3]}.cu" for i in range(30)]


def test_spread_over_styles_forms_generations_bases_and_fields():
    es = entries()
    d = mut.distribution(list(es))
    assert d["programs"] == COUNT
    assert sorted(d["styles"].values()) == [106, 107, 107]
    assert set(d["problem_forms"]) == set(FORMS) and min(d["problem_forms"].values()) >= COUNT // 5 - 2
    assert 0.22 * COUNT <= d["generations"]["2.x"] <= 0.38 * COUNT
    assert set(d["bases"]) == set(mut.BASES)
    assert set(d["mutations_per_program"]) == {1, 2}
    used = {(e["generation"], m["field"]) for e in es for m in e["mutations"]}
    assert used == {(g, f) for g, fields in mut.FIELDS.items() for f in fields}
    combos = {(e["generation"], e["style"], e["problem_form"]) for e in es}
    assert len(combos) == 2 * len(STYLES) * len(FORMS)


def test_bases_are_the_reference_kernels():
    names = {p.stem for p in (ROOT / "kernels_ref" / "cutlass").glob("*.cu")}
    assert set(mut.BASES) == names
    # spot checks against the kernels' text
    for name, (generation, cfg) in mut.BASES.items():
        text = (ROOT / "kernels_ref" / "cutlass" / f"{name}.cu").read_text()
        if generation == "3.x":
            tile = f"Shape<_{cfg['tile_m']}, _{cfg['tile_n']}, _{cfg['tile_k']}>"
            assert f"using TileShape = {tile};" in text, name
            assert f"using ClusterShape = {'Shape<' + ', '.join(f'_{c}' for c in cfg['cluster']) + '>'};" in text
            assert f"using KernelSchedule = {cfg['kernel_schedule']};" in text
            assert f"using EpilogueSchedule = {cfg['epilogue_schedule']};" in text
            assert f"static constexpr int AlignmentA = {cfg['align_a']};" in text
            assert f"using ElementA = {cfg['element_a']};" in text
        else:
            assert "GemmShape<128, 256, 64>" in text and "static constexpr int Stages = 3;" in text


def test_mutations_are_one_or_two_real_changes():
    for e in entries():
        base = mut.base_config(e["base"], tuple(e["base_problem"]))
        assert 1 <= len(e["mutations"]) <= 2
        assert {k for k in base if base[k] != e["config"][k]} == {m["field"] for m in e["mutations"]}
        for m in e["mutations"]:
            assert m["old"] == base[m["field"]] and m["new"] != m["old"]
            assert m["new"] in mut.FIELDS[e["generation"]][m["field"]][0]


def test_every_mutated_field_changes_the_program_text():
    """The mutant differs from its base, and putting back any one mutated field changes the text."""
    for e in entries():
        text = program_text(e)
        assert text != program_text(mut.base_entry(e)), e["file"]
        for m in e["mutations"]:
            reverted = json.loads(json.dumps(e))
            reverted["config"][m["field"]] = m["old"]
            assert program_text(reverted) != text, (e["file"], m["field"])
        # self-checking: runs every step and checks D, as the harness expects
        for call in ("probe_step(\"can_implement\"", "probe_step(\"initialize\"", "probe_step(\"run\"",
                     "probe_sync()", "probe_check(A, B, &C, D"):
            assert call in text, (e["file"], call)


def _cutlass_names(text: str) -> set[str]:
    """The cutlass:: names of a program's configuration (before main)."""
    return set(re.findall(r"\bcutlass::(?:\w+::)*\w+", text.split("int main()")[0]))


@pytest.mark.skipif(not CUTLASS_INCLUDE.is_dir(), reason="no unpacked CUTLASS headers in .cutlass/include")
def test_every_cutlass_name_is_declared_in_the_cutlass_headers():
    """Each cutlass:: name the configurations write (schedules, element types, layouts, arch tags,
    builders, stage counts) is a struct, class or alias of the CUTLASS 4.2 headers."""
    names: set[str] = set()
    for e in entries():
        names |= _cutlass_names(program_text(e))
    declared: set[str] = set()
    for p in CUTLASS_INCLUDE.rglob("*.h*"):
        text = p.read_text(errors="replace")
        declared |= set(re.findall(r"\b(?:struct|class|using)\s+(?:alignas\(\w+\)\s+)?(\w+)", text))
    assert len(names) > 30
    assert sorted(n for n in names if n.rsplit("::", 1)[-1] not in declared) == []


# ---- the front end reads every mutation back --------------------------------------------------------
# Problem sizes the front end does not resolve (fusionlint/frontend/cutlass/source/problem_sizes.py reads literal
# extents and names bound once to a literal): the fields of a problem struct, and GemmCoord accessors
# (problem_size.m()) in a 3.x Arguments. Reported by the evaluation as misses, not hidden here.
KNOWN_GAPS = {("struct", "2.x"), ("struct", "3.x"), ("coord", "3.x")}


def _cover() -> list[dict]:
    """A few programs that together mutate every field of both generations and use every style and
    problem-size form of each generation."""
    need = {("field", e["generation"], m["field"]) for e in entries() for m in e["mutations"]}
    need |= {("combo", e["generation"], e["style"], e["problem_form"]) for e in entries()}
    picked = []
    for e in entries():
        keys = {("field", e["generation"], m["field"]) for m in e["mutations"]}
        keys.add(("combo", e["generation"], e["style"], e["problem_form"]))
        if keys & need:
            picked.append(e)
            need -= keys
    assert not need
    return picked


@pytest.fixture(scope="module")
def cover_set(tmp_path_factory) -> tuple[Path, list[dict]]:
    out = tmp_path_factory.mktemp("mutations_cutlass")
    picked = _cover()
    for e in picked:
        (out / e["file"]).write_text(program_text(e), encoding="utf-8")
    return out, picked


def test_front_end_reads_every_mutated_value(cover_set):
    out, picked = cover_set
    assert len(picked) <= 60
    wrong, gaps = [], []
    for e in picked:
        gemms = extract_cutlass(parse_file(out / e["file"], ParseOptions(use_system_headers=False)))
        assert len(gemms) == 1, e["file"]
        (g,) = gemms
        assert g.api == e["generation"], e["file"]
        assert g.name == "Gemm"
        values = g.values()
        for m in e["mutations"]:
            for key, want in expected_facts(e["generation"], m["field"], e["config"]).items():
                if key.startswith("problem."):
                    assert len(g.problems) == 1, e["file"]
                    got = getattr(g.problems[0], key.split(".")[1])
                    if got is None and (e["problem_form"], e["generation"]) in KNOWN_GAPS:
                        gaps.append(e["file"])
                        continue
                else:
                    got = values.get(key, "missing")
                if got != want:
                    wrong.append(f"{e['file']} ({e['style']}, {e['problem_form']}) {m['field']}: {key} = {got!r}, "
                                 f"want {want!r}")
    assert wrong == []


def test_front_end_reads_the_problem_size_forms(tmp_path):
    """The literal forms (constexpr and const locals, literals, a 2.x GemmCoord) give the problem size;
    the known gaps stay unknown rather than wrong."""
    for generation, base in (("3.x", "bf16_coop_1x1"), ("2.x", "fp16_sm80_2x")):
        for form in FORMS:
            e = {"file": f"{generation[0]}_{form}.cu", "index": 0, "base": base, "generation": generation,
                 "style": "plain", "problem_form": form, "base_problem": [512, 256, 128], "mutations": [],
                 "config": mut.base_config(base, (512, 256, 128)), "variant": 0}
            (tmp_path / e["file"]).write_text(program_text(e))
            (g,) = extract_cutlass(parse_file(tmp_path / e["file"], ParseOptions(use_system_headers=False)))
            (p,) = g.problems
            if (form, generation) in KNOWN_GAPS:
                assert (p.m, p.n, p.k) in ((512, 256, 128), (None, None, None)), (generation, form)
            else:
                assert (p.m, p.n, p.k) == (512, 256, 128), (generation, form)


# ---- the device slice ------------------------------------------------------------------------------------
def test_run_slice_records_programs_past_the_time_limit_as_not_built(tmp_path):
    mut.write_set(SEED, 3, tmp_path)
    sources = sorted(tmp_path.glob("m*.cu"))
    tc = mut.device_toolchain([str(tmp_path)])
    assert "-lcuda" in tc.command(sources[0], tmp_path / "x.bin") and "-arch=sm_90a" in tc.command(sources[0],
                                                                                                 tmp_path / "x.bin")
    outcomes = mut.run_slice(sources, 2, tc, 0, tmp_path)
    assert [(o.build_rc, o.log) for o in outcomes] == [(124, mut.NOT_BUILT)] * 3
    assert {mut.unscored(o.to_dict()) for o in outcomes} == {"not built (time limit)"}
    # a failing compiler: a build failure, scored as a failing program
    (o,) = mut.run_slice(sources[:1], 1, harness.Toolchain(nvcc="false", link=[]), 60, tmp_path)
    assert o.build_rc == 1 and not o.works and mut.unscored(o.to_dict()) == ""
    missing = harness.Outcome("x", 1, log="/usr/bin/ld: cannot find -lcuda: No such file or directory").to_dict()
    assert mut.unscored(missing).startswith("link failed")


# ---- scoring ---------------------------------------------------------------------------------------------
def _outcome(build_rc=0, run_rc=0, steps=("Success", "Success", "Success"), numerics_ok=True, log="") -> dict:
    calls = [{"function": n, "call": n, "status": s} for n, s in zip(("can_implement", "initialize", "run"), steps)]
    o = harness.Outcome("x", build_rc, run_rc if build_rc == 0 else None, calls=calls if build_rc == 0 else [],
                        numerics=[{"ok": numerics_ok, "max_abs_err": 0.0 if numerics_ok else 212.0}]
                        if build_rc == 0 and len(steps) == 3 else [],
                        cuda_errors=["cudaSuccess"] if build_rc == 0 else [], log=log)
    return o.to_dict()


def _small_manifest() -> dict:
    def e(i: int, style: str, generation: str, field: str) -> dict:
        return {"file": f"m{i:04d}_{style}.cu", "base": "b", "generation": generation, "style": style,
                "problem_form": "literal", "mutations": [{"field": field, "old": 1, "new": 2}]}
    return {"programs": [e(0, "plain", "3.x", "tile_m"), e(1, "config", "3.x", "stages"),
                         e(2, "wrapper", "3.x", "tile_m"), e(3, "plain", "2.x", "stages"),
                         e(4, "config", "3.x", "cluster"), e(5, "wrapper", "2.x", "arch"),
                         e(6, "plain", "3.x", "k"), e(7, "config", "3.x", "tile_m")]}


def _small_truth() -> dict:
    return {"machine": {}, "programs": {
        "/tmp/mutc/m0000_plain.cu": _outcome(build_rc=2, log='error: static assertion failed with "Tile_M must be"'),
        "/tmp/mutc/m0001_config.cu": _outcome(steps=("Success", "ErrorInternal")),
        "/tmp/mutc/m0002_wrapper.cu": _outcome(numerics_ok=False),
        "/tmp/mutc/m0003_plain.cu": _outcome(),
        "/tmp/mutc/m0004_config.cu": _outcome(),
        "/tmp/mutc/m0005_wrapper.cu": _outcome(build_rc=124, log=mut.NOT_BUILT),
        "/tmp/mutc/m0006_plain.cu": _outcome(steps=("ErrorInvalidProblem",)),
        # m0007 is not in the record
    }}


def _small_findings() -> list[dict]:
    return [{"path": "/x/m0000_plain.cu", "severity": "error", "code": "FL308", "line": 3, "message": "tile"},
            {"path": "/x/m0001_config.cu", "severity": "error", "code": "FL305", "line": 3, "message": "stages"},
            {"path": "/x/m0002_wrapper.cu", "severity": "warning", "code": "FL399", "line": 3, "message": "w"},
            {"path": "/x/m0004_config.cu", "severity": "error", "code": "FL316", "line": 3, "message": "cluster"},
            {"path": "/x/m0005_wrapper.cu", "severity": "error", "code": "FL323", "line": 3, "message": "arch"}]


def test_evaluate_arithmetic():
    s = mut.evaluate(_small_manifest(), mut.merge_truth([_small_truth()]), _small_findings())
    assert (s["programs"], s["scored"], s["working"], s["failing"], s["caught"]) == (8, 6, 2, 4, 2)
    assert s["recall"] == 0.5 and s["false_error_rate"] == 0.5
    assert s["not_run"] == ["m0007_config.cu"]
    assert s["not_scored"] == [{"file": "m0005_wrapper.cu", "why": "not built (time limit)"}]
    assert [m["file"] for m in s["misses"]] == ["m0002_wrapper.cu", "m0006_plain.cu"]
    assert [f["file"] for f in s["false_errors"]] == ["m0004_config.cu"]
    assert s["misses"][0]["outcome"].startswith("all calls SUCCESS but D is wrong")
    assert s["misses"][1]["outcome"] == "can_implement -> ErrorInvalidProblem"
    assert s["failure_kinds"] == {"compile error": 1, "status": 2, "numerics": 1}
    assert s["per_field"]["3.x tile_m"] == {"programs": 2, "failing": 2, "caught": 1, "missed": 1}
    assert s["per_field"]["3.x cluster"] == {"programs": 1, "working": 1, "false_errors": 1}
    assert s["per_style"]["plain"] == {"programs": 3, "failing": 2, "caught": 1, "missed": 1, "working": 1,
                                       "false_errors": 0}
    assert s["per_generation"]["2.x"] == {"programs": 1, "working": 1, "false_errors": 0}
    assert s["per_rule"] == {"FL305": {"failing": 1}, "FL308": {"failing": 1}, "FL316": {"working": 1}}
    assert s["non_error_findings"] == 1
    md = mut.markdown(s)
    for name in ("m0002_wrapper.cu", "m0006_plain.cu", "m0004_config.cu", "**recall**: 50.0%"):
        assert name in md
    assert "miss m0006_plain.cu" in mut.summary_text(s)


def test_truth_slices_merge_and_the_cli_writes_the_report(tmp_path):
    first = _small_truth()
    second = {"machine": {}, "programs": {"/other/m0005_wrapper.cu": _outcome(build_rc=1, log="error: x"),
                                          "/other/m0007_config.cu": _outcome()}}
    merged = mut.merge_truth([first, second])
    assert merged["m0005_wrapper.cu"]["build_rc"] == 1 and "m0007_config.cu" in merged
    assert mut.merge_truth([second, first])["m0005_wrapper.cu"]["build_rc"] == 1  # a result beats "not built"
    paths = {}
    for name, data in (("manifest", _small_manifest()), ("t1", first), ("t2", second), ("f", _small_findings())):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(data))
    rc = mut.main(["evaluate", "--manifest", str(paths["manifest"]), "--truth", str(paths["t1"]), str(paths["t2"]),
                   "--findings", str(paths["f"]), "--markdown", str(tmp_path / "r.md"),
                   "--json", str(tmp_path / "r.json")])
    assert rc == 0
    s = json.loads((tmp_path / "r.json").read_text())
    assert (s["scored"], s["failing"], s["caught"], s["not_run"]) == (8, 5, 3, [])
    assert "m0005_wrapper.cu" not in {m["file"] for m in s["misses"]}  # built in the second slice: caught (FL323)
    assert "# CUTLASS random-mutation evaluation" in (tmp_path / "r.md").read_text()
