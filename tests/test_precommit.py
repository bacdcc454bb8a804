"""The pre-commit hook for real: `pre-commit try-repo` installs this checkout into a fresh
virtualenv (pip, as pre-commit does for language: python) and runs the hook on a temporary
git repository holding a bad and a good file."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cli_helpers import BAD, GOOD, project
from conftest import ROOT

# What `pip install .` needs from the checkout (tracked or new, not ignored files).
PACKAGE_PATHS = ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "fusionlint/", "rulesets/")
OFFLINE_HINTS = ("No matching distribution", "Could not find a version", "Failed to establish a new connection",
                 "Temporary failure in name resolution", "Network is unreachable", "Max retries exceeded")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false",
                    *args], cwd=cwd, check=True, capture_output=True)


def _hook_repo(dest: Path) -> Path:
    """A git repository with this checkout's package files as they are now (committed or not)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "--", *PACKAGE_PATHS], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout.splitlines()
    for rel in listed:
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "snapshot")
    return dest


def test_manifest() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "fusionlint" and hook["entry"] == "fusionlint" and hook["language"] == "python"
    assert hook["types_or"] == ["c++", "cuda"] and isinstance(hook["require_serial"], bool)


def _try_repo(repo: Path, work: Path, *files: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRE_COMMIT", "GITHUB_ACTIONS", "NO_COLOR"))}
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(repo), "fusionlint", "--color", "never",
                           "--files", *files], cwd=work, capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode == 3 and any(h in proc.stdout + proc.stderr for h in OFFLINE_HINTS):
        pytest.skip("pre-commit could not build the hook's environment (no package index reachable): "
                    + (proc.stdout + proc.stderr).strip().splitlines()[-1][:200])
    return proc


@pytest.mark.skipif(importlib.util.find_spec("pre_commit") is None, reason="pre-commit is not installed "
                    "(it is in the test extra: pip install -e '.[test]')")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_try_repo_fails_on_the_bad_file_and_passes_on_the_good_one(tmp_path: Path) -> None:
    repo = _hook_repo(tmp_path / "hook-repo")
    work = tmp_path / "work"
    bad, good = project(work, BAD, GOOD)
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    rel_bad, rel_good = (p.relative_to(work).as_posix() for p in (bad, good))

    proc = _try_repo(repo, work, rel_good)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fusionlint" in proc.stdout and "Passed" in proc.stdout

    proc = _try_repo(repo, work, rel_bad, "probe.h")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Failed" in proc.stdout and "exit code: 1" in proc.stdout
    assert f"{rel_bad}:19:75: error: " in proc.stdout and "[FL100]" in proc.stdout
    assert rel_good not in proc.stdout
