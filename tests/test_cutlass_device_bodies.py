"""Instantiated mode reaches what nvcc instantiates for sm_90a (device-side instantiation): with the CUTLASS
and CUDA toolkit headers, the prelude turns on the kernels' and collectives' device bodies, so
their static_asserts and hard errors are the GEMM's diagnostics, mapped to the user's line that
asked for the instantiation (also a *use* of the GEMM, ``gemm.run()``); a known-good kernel gets
none. Without the headers the prelude changes nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES
from fusionlint.frontend.cutlass.reader import _device_bodies, extract_cutlass
from fusionlint.frontend.clang.parse import ParseOptions, parse_file
from test_extract_cutlass import cutlass_include_dirs, needs_cutlass

RULES = FIXTURES / "cutlass" / "rules"
KERNELS = Path(__file__).resolve().parents[1] / "kernels_ref" / "cutlass"


def instantiated(path: Path):
    unit = parse_file(path, ParseOptions(include_dirs=cutlass_include_dirs() + [str(path.parent)]))
    return unit, extract_cutlass(unit)


def line_of(path: Path, snippet: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if snippet in line)


def test_without_the_headers_no_device_bodies(tmp_path):
    path = tmp_path / "t.cu"
    path.write_text('#include "cutlass/cutlass.h"\nint x;\n')  # found nowhere: an empty stand-in
    unit = parse_file(path, ParseOptions(use_system_headers=False))
    assert not _device_bodies(unit)


@needs_cutlass
def test_device_member_static_assert_is_reported_at_the_users_use():
    # a cooperative mainloop with the TmaWarpSpecialized epilogue: the assertion is in the
    # epilogue's __device__ store(), which host-only parsing never instantiated
    path = RULES / "FL329_coop_ws_epi.cu"
    unit, (g,) = instantiated(path)
    assert _device_bodies(unit)
    asserts = [d for d in g.diagnostics if d.kind == "static_assert"]
    assert [d.message for d in asserts] == ["MMA_TILE_M must divide EPI_TILE_M"]
    assert asserts[0].at.path == str(path)
    assert asserts[0].header_loc.path.endswith("sm90_epilogue_tma_warpspecialized.hpp")


@needs_cutlass
def test_a_missing_2x_specialization_is_an_error_diagnostic():
    path = RULES / "FL335_2x_sm70_tag.cu"
    _, (g,) = instantiated(path)
    errors = [d for d in g.diagnostics if d.kind == "error"]
    assert errors and "DefaultGemm" in errors[0].message and errors[0].at.path == str(path)


@needs_cutlass
@pytest.mark.parametrize("name", ["bf16_coop_1x1.cu", "fp16_sm80_2x.cu"])
def test_known_good_kernels_instantiate_without_diagnostics(name):
    unit, gemms = instantiated(KERNELS / name)
    assert _device_bodies(unit)
    assert gemms and all(not g.diagnostics for g in gemms)


@needs_cutlass
def test_the_pch_of_a_cutlass_file_keeps_the_bodies_device_checks_need(tmp_path):
    # The PCH of a CUTLASS file's include block used to skip the headers' function bodies, which
    # dropped every static_assert inside a (device) function body, such as the epilogue's store():
    # with the device bodies on, the PCH keeps them and a file that uses it reports the same.
    from fusionlint.frontend.clang import parse as parse_mod

    path = RULES / "FL329_coop_ws_epi.cu"
    text = path.read_text()
    args, _ = parse_mod.build_args(path, ParseOptions(include_dirs=cutlass_include_dirs() + [str(path.parent)]))
    assert not parse_mod._may_skip_bodies(text, args)
    assert parse_mod._may_skip_bodies(text, args + ["-DFUSIONLINT_NO_DEVICE_BODIES"])
    options = ParseOptions(include_dirs=cutlass_include_dirs() + [str(path.parent)], pch_dir=str(tmp_path))
    units = [parse_file(path, options, text=text) for _ in range(2)]  # the first notes it, the second builds it
    assert units[1].pch == "used"
    (g,) = extract_cutlass(units[1])
    assert _device_bodies(units[1])
    assert [d.message for d in g.diagnostics if d.kind == "static_assert"] == ["MMA_TILE_M must divide EPI_TILE_M"]


def test_errors_in_cutlass_utilities_or_outside_the_include_trees_are_not_the_gemms():
    """FL300's "any error inside a CUTLASS header" covers CUTLASS's include trees only: not the
    utilities (cutlass/util: cuRAND fills libclang reads differently from nvcc, seen in CUTLASS's
    examples 52, 53, 55), not a project's own headers below a folder named cutlass, not the main file."""
    from types import SimpleNamespace

    from fusionlint.frontend.cutlass.reader import _kept_error

    def at(name: str):
        return SimpleNamespace(file=SimpleNamespace(name=name))

    msg = "constructor for 'X' must explicitly initialize the member 'rng_state'"
    assert _kept_error(msg, at("/w/.cutlass/include/cutlass/gemm/collective/sm90_mma.hpp"), True, "/w/a.cu")
    assert not _kept_error(msg, at("/w/.cutlass/tools/util/include/cutlass/util/reference/device/tensor_fill.h"),
                           True, "/w/a.cu")
    assert not _kept_error(msg, at("/w/NVIDIA/cutlass/examples/55/mixed_dtype_utils.hpp"), True, "/w/a.cu")
    assert not _kept_error(msg, at("/w/cutlass/include/cutlass/x.cu"), True, "/w/cutlass/include/cutlass/x.cu")
    assert not _kept_error(msg, at("/w/.cutlass/include/cutlass/gemm/x.hpp"), False, "/w/a.cu")


# ------------------------------------------------------------------------------------------------
# check instantiates the device bodies only when asked (--device-bodies, `device-bodies = true`)

def test_the_device_bodies_switch_reaches_the_parse_arguments(tmp_path):
    """Off by default (the prelude's FUSIONLINT_NO_DEVICE_BODIES is defined); the command line wins
    over the config, the config over the default."""
    from fusionlint.run.compile_db import CompileFlags
    from fusionlint.run.config import FileConfig
    from fusionlint.run.options import CheckOptions, file_options, parse_options

    off = "FUSIONLINT_NO_DEVICE_BODIES"
    cfg_on = FileConfig(path=tmp_path / "pyproject.toml", device_bodies=True)
    cases = [(None, None, True), (None, cfg_on, False), (False, cfg_on, True), (True, None, False)]
    for flag, cfg, macro in cases:
        options, _, _ = file_options(CheckOptions(device_bodies=flag), cfg, CompileFlags())
        assert (off in options.defines) is macro, (flag, cfg)
    assert off in parse_options().defines and off not in parse_options(device_bodies=True).defines


def _check(*argv: str) -> tuple[str, str]:
    """check's text report (stdout) and its -v notes and summary (stderr)."""
    import contextlib
    import io

    from fusionlint.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        main(["check", "--no-cache", "-v", *argv])
    return out.getvalue(), err.getvalue()


@needs_cutlass
def test_check_runs_the_device_side_only_when_asked(tmp_path):
    """By default check instantiates the GEMM's host side: the rule that mirrors the epilogue's
    device-side assertion (FL329) reports it and the finding's note says the device bodies were
    not instantiated; on a GEMM no rule flags, -v lists FL300 as undecided. With --device-bodies
    (or the config key) the device bodies are instantiated and nothing is left undecided."""
    bad, ok = RULES / "FL329_coop_ws_epi.cu", RULES / "FL329_auto_schedule_coop_epi_ok.cu"
    for argv, device in (([], False), (["--device-bodies"], True)):
        out, err = _check(*argv, str(bad), str(ok))
        errors = [line for line in out.splitlines() if ": error: " in line]
        assert len(errors) == 1 and errors[0].startswith(f"{bad}:") and errors[0].endswith("[FL329]")
        mode = [line for line in out.splitlines() if "note: GEMM `Gemm`" in line]
        assert len(mode) == 1 and ("device bodies included" in mode[0]) is device \
            and ("host side" in mode[0]) is not device
        undecided = [line for line in err.splitlines() if "undecided: FL300" in line]
        if device:
            assert undecided == [] and "2 files checked, 1 finding\n" in err
        else:
            assert len(undecided) == 1 and undecided[0].startswith(f"fusionlint: {ok}:")
            assert "--device-bodies instantiates them" in undecided[0] and "1 check undecided" in err
    # the config key, in the file's nearest pyproject.toml
    local = tmp_path / ok.name
    local.write_text(ok.read_text().replace('#include "../cutlass_probe.h"',
                                            f'#include "{ok.parent.parent / "cutlass_probe.h"}"'))
    (tmp_path / "pyproject.toml").write_text("[tool.fusionlint]\ndevice-bodies = true\n")
    out, err = _check(str(local))
    assert "undecided: FL300" not in err and "1 file checked, 0 findings\n" in err
