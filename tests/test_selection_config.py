"""--select/--ignore/--extend-select/--per-file-ignores and [tool.fusionlint] configuration,
on real runs over the rule fixtures."""
from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import BAD, FL117, GOOD, codes, guarded, project, run_cli
from fusionlint.decide.selection import PerFileIgnore, Selection, SelectionError, check_codes

BOTH = [("FL100_transa_int64_size.cpp", 19, "FL100"), ("FL117_transc_t.cpp", 24, "FL117")]


def test_longest_prefix_wins() -> None:
    s = Selection(select=("FL100",), ignore=("FL1",))
    assert s.enabled("FL100", "a.cu") and not s.enabled("FL117", "a.cu")
    s = Selection(select=("FL", "FL117"), ignore=("FL1",))
    assert s.enabled("FL117", "a.cu") and not s.enabled("FL100", "a.cu") and s.enabled("FL001", "a.cu")
    assert not Selection(select=("FL1",), ignore=("FL1",)).enabled("FL100", "a.cu")  # a tie: ignore wins
    pfi = PerFileIgnore("legacy/*", Path("/p"), ("FL1",))
    s = Selection(per_file_ignores=(pfi,))
    assert not s.enabled("FL100", "/p/legacy/x.cu") and s.enabled("FL100", "/p/new/x.cu")
    assert s.enabled("FL001", "/p/legacy/x.cu")


def test_a_code_off_by_default_is_selected_only_by_its_full_code(tmp_path: Path) -> None:
    """FL002 (a finding only on paths that inputs fusionlint does not know choose) is not selected by
    the default FL, nor by FL0; --extend-select FL002, or extend-select in the config, turns it on."""
    for select in (("FL",), ("FL0",), ("FL", "FL00")):
        assert not Selection(select=select).enabled("FL002", "a.cu")
    assert Selection(select=("FL", "FL002")).enabled("FL002", "a.cu")
    assert not Selection(select=("FL", "FL002"), ignore=("FL002",)).enabled("FL002", "a.cu")
    src = tmp_path / "entry.cpp"
    src.write_text((Path(__file__).parent.parent / "fixtures" / "interprocedural" / "entry_point_inputs.cpp")
                   .read_text(encoding="utf-8"))
    rc, out, _ = run_cli(src)
    assert (rc, out) == (0, "")
    (tmp_path / ".fusionlint.toml").write_text('extend-select = ["FL002"]\n')
    rc, out, _ = run_cli(src)
    assert rc == 1 and codes(out) == [(src.name, 20, "FL002")] and ": warning: FL127 (" in out


def test_codes_are_checked() -> None:
    known = ["FL000", "FL001", "FL100", "FL117"]
    assert check_codes(["fl1", "FL", "FL117"], known, "--select") == ("FL1", "FL", "FL117")
    for bad in ("FL999", "FL2", "E501", "FL1000", ""):
        with pytest.raises(SelectionError):
            check_codes([bad], known, "--select")


@pytest.mark.parametrize("argv, expected", [
    ([], BOTH),
    (["--select", "FL1"], BOTH),
    (["--ignore", "FL100"], BOTH[1:]),
    (["--select", "FL100", "--ignore", "FL1"], BOTH[:1]),  # the longer prefix wins
    (["--ignore", "FL1", "--extend-select", "FL117"], BOTH[1:]),
    (["--per-file-ignores", "*_transc_*.cpp:FL117"], BOTH[:1]),
])
def test_selection_on_real_findings(argv, expected) -> None:
    rc, out, err = run_cli(*argv, BAD, FL117)
    assert codes(out) == expected, err
    assert rc == 1


def test_nothing_selected_exits_zero() -> None:
    rc, out, _ = run_cli("--ignore", "FL100", BAD)
    assert (rc, out) == (0, "")


@pytest.mark.parametrize("argv", [["--select", "FL999"], ["--ignore", "XY1"], ["--extend-select", "FL9"],
                                  ["--per-file-ignores", "*.cu:FL777"], ["--per-file-ignores", "nocolon"]])
def test_unknown_code_is_a_usage_error(argv) -> None:
    rc, out, err = run_cli(*argv, GOOD)
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("fusionlint: error: ")


def test_pyproject_ignore_silences_and_command_line_overrides(tmp_path: Path) -> None:
    (bad,) = project(tmp_path, BAD)
    rc, out, _ = run_cli(bad)
    assert rc == 1 and codes(out) == [(bad.name, 19, "FL100")]
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.fusionlint]\nignore = ["FL100"]\n')
    rc, out, err = run_cli(bad)
    assert (rc, out) == (0, ""), err
    rc, out, _ = run_cli("--ignore", "FL117", bad)  # the command line's --ignore replaces the file's
    assert rc == 1 and codes(out) == [(bad.name, 19, "FL100")]


def test_nearest_config_wins_and_pyproject_without_table_is_skipped(tmp_path: Path) -> None:
    (bad,) = project(tmp_path, BAD, subdir="pkg/src")
    (tmp_path / ".fusionlint.toml").write_text('ignore = ["FL1"]\n')
    (tmp_path / "pkg" / "pyproject.toml").write_text('[project]\nname = "pkg"\n')  # no [tool.fusionlint]
    assert run_cli(bad)[0] == 0
    (tmp_path / "pkg" / "src" / "fusionlint.toml").write_text('select = ["FL100"]\n')  # nearer: ignores nothing
    rc, out, _ = run_cli(bad)
    assert rc == 1 and codes(out) == [(bad.name, 19, "FL100")]


def test_config_exclude_and_per_file_ignores(tmp_path: Path) -> None:
    (bad,) = project(tmp_path, BAD, subdir="legacy")
    (tmp_path / "fusionlint.toml").write_text('exclude = ["legacy"]\n')
    assert run_cli(bad, tmp_path) == (0, "", "")
    (tmp_path / "fusionlint.toml").write_text('[per-file-ignores]\n"legacy/*.cpp" = ["FL100"]\n')
    assert run_cli(bad)[:2] == (0, "")
    (tmp_path / "fusionlint.toml").write_text('[per-file-ignores]\n"other/*.cpp" = ["FL100"]\n')
    assert codes(run_cli(bad)[1]) == [(bad.name, 19, "FL100")]


def test_config_arch_defines_and_include_dirs(tmp_path: Path) -> None:
    (fl117,) = project(tmp_path, FL117)
    (tmp_path / "fusionlint.toml").write_text('arch = "sm_100"\n')  # FL117 is a Hopper (sm_90) rule
    assert run_cli(fl117)[:2] == (0, "")
    assert codes(run_cli("--arch", "sm_90", fl117)[1]) == [(fl117.name, 24, "FL117")]
    src = guarded(tmp_path)
    (tmp_path / "fusionlint.toml").write_text('include-dirs = ["include"]\n')
    assert run_cli(src)[:2] == (0, "")  # CHECK_TRANSA undefined: nothing to check
    (tmp_path / "fusionlint.toml").write_text('defines = ["CHECK_TRANSA=1"]\n')
    assert run_cli(src)[:2] == (0, "")  # transa_t unknown without the include dir: its size too
    (tmp_path / "fusionlint.toml").write_text('include-dirs = ["include"]\ndefines = ["CHECK_TRANSA=1"]\n')
    rc, out, err = run_cli(src)
    assert codes(out) == [("guarded.cpp", 21, "FL100")], err


@pytest.mark.parametrize("body, problem", [
    ('[tool.fusionlint]\ncolour = true\n', "colour: unknown key"),
    ('[tool.fusionlint]\nselect = "FL100"\n', "select: expected a list of strings, got a string"),
    ('[tool.fusionlint]\nselect = ["FL999"]\n', "select: unknown rule code or prefix 'FL999'"),
    ('[tool.fusionlint]\narch = 90\n', "arch: expected a string, got an integer"),
    ('[tool.fusionlint]\nstd = "c++17 -fplugin=x.so"\n', "std: invalid value 'c++17 -fplugin=x.so'"),
    ('[tool.fusionlint]\ndefines = ["1BAD"]\n', "defines: invalid macro definition '1BAD'"),
    ('[tool.fusionlint]\nper-file-ignores = ["x"]\n', "per-file-ignores: expected a table"),
    ('[tool.fusionlint]\ndevice-bodies = "yes"\n', "device-bodies: expected true or false, got a string"),
    ('[tool.fusionlint\n', "TOML syntax error"),
])
def test_bad_config_is_one_line_exit_two(tmp_path: Path, body: str, problem: str) -> None:
    (good,) = project(tmp_path, GOOD)
    (tmp_path / "pyproject.toml").write_text(body)
    rc, out, err = run_cli(good)
    assert rc == 2 and out == ""
    assert err.strip() == f"fusionlint: error: {tmp_path / 'pyproject.toml'}: {problem}" or \
        (err.startswith(f"fusionlint: error: {tmp_path / 'pyproject.toml'}: {problem}") and err.count("\n") == 1)
