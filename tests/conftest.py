"""Shared helpers: parse each fixture once per header mode and reuse the facts."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

from fusionlint.model.cublaslt_facts import Configuration, FileFacts
from fusionlint.frontend.clang.parse import ParseOptions
from fusionlint.facts.extract import extract_file

# Never the user's ~/.cache/fusionlint: a cache of this session's own (each test also gets a fresh one below).
_SESSION_CACHE = tempfile.mkdtemp(prefix="fusionlint-test-cache-")
os.environ["FUSIONLINT_CACHE_DIR"] = _SESSION_CACHE
atexit.register(shutil.rmtree, _SESSION_CACHE, True)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"


@lru_cache(maxsize=None)
def facts_of(path: str, system_headers: bool = True) -> FileFacts:
    return extract_file(Path(path), ParseOptions(use_system_headers=system_headers))


def params(cfg: Configuration, part: str) -> dict:
    """``{field: enum name | int | None(unknown) | 'runtime'}`` of one part of a configuration."""
    from fusionlint.model.values import Known, Unknown

    out = {}
    for name, f in cfg.effective[part].items():
        if isinstance(f.value, Known):
            out[name] = f.name or f.value.value
        elif isinstance(f.value, Unknown):
            out[name] = None
        else:
            out[name] = "runtime"
    return out


@pytest.fixture(params=[True, False], ids=["system-headers", "stand-ins-only"])
def system_headers(request) -> bool:
    """Run a test with the machine's CUDA headers (if any) and with fusionlint's stand-ins only."""
    return request.param


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch, tmp_path_factory):
    """Each test gets an empty fusionlint cache of its own (never ~/.cache/fusionlint): a result
    cached by one test cannot answer for another that, e.g., patches the pipeline."""
    monkeypatch.setenv("FUSIONLINT_CACHE_DIR", str(tmp_path_factory.mktemp("fusionlint-cache")))


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch):
    """Tests see the default output format and colours wherever they run (GitHub Actions sets
    GITHUB_ACTIONS, which switches the default format to annotations)."""
    for name in ("GITHUB_ACTIONS", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)


# End-to-end tests that take long (whole-program parses, many subprocesses, the fuzzers):
# `python -m pytest -m "not slow"` leaves them out for a quick run; the full suite runs them.
SLOW_MODULES = {"test_metamorphic.py", "test_fuzz.py", "test_parallel_isolation.py", "test_pch.py", "test_probegen.py",
                "test_precommit.py"}
SLOW_TESTS = {"test_rule_fixtures.py": ("test_reference_kernel_lints_clean_and_ran", "test_test_rules_command"),
              "test_first_use.py": ("test_progress_on_a_terminal", "test_test_rules_progress_on_a_terminal",
                                    "test_test_rules_has_workers_and_shares_the_cache_with_check")}


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        module = item.path.name
        names = SLOW_TESTS.get(module, ())
        if module in SLOW_MODULES or (names and getattr(item, "originalname", item.name).startswith(names)):
            item.add_marker(pytest.mark.slow)
