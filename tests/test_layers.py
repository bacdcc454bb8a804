"""The package's layering: the import-linter contracts in pyproject.toml hold, and no
import cycle exists anywhere in the package — function-level (lazy) imports included, which
import-linter's contracts and Python itself would let pass."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "fusionlint"


def _modules() -> dict[str, Path]:
    mods = {}
    for p in PACKAGE.rglob("*.py"):
        name = ".".join(p.relative_to(ROOT).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = p
    return mods


def import_graph() -> nx.DiGraph:
    """Module -> the fusionlint modules it imports anywhere in its text (a package's ``__init__``
    stands for the package)."""
    mods = _modules()

    def resolve(name: str) -> str:
        while name and name not in mods:
            name = name.rsplit(".", 1)[0] if "." in name else ""
        return name

    g = nx.DiGraph()
    for m, p in mods.items():
        g.add_node(m)
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("fusionlint"):
                targets = [resolve(f"{node.module}.{a.name}") for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [resolve(a.name) for a in node.names if a.name.startswith("fusionlint")]
            else:
                continue
            g.add_edges_from((m, t) for t in targets if t and t != m and t != "fusionlint")
    return g


def test_no_import_cycle_in_the_package() -> None:
    g = import_graph()
    assert len(g) > 60 and g.has_edge("fusionlint.run.check", "fusionlint.run.cache")  # the graph is real
    cycles = [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]
    assert cycles == []


def test_the_import_contracts_hold() -> None:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert exe, "lint-imports not found: import-linter is in the `test` extra (pip install -e '.[test]')"
    r = subprocess.run([exe], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_no_module_is_over_1200_lines() -> None:
    """The size bound: a module past it is split (as the interpreter's lambdas, objects and explicit
    instantiations were) rather than grown."""
    long = {name: n for name, p in _modules().items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > 1200}
    assert long == {}


def test_the_front_end_is_packages_only() -> None:
    """frontend/ holds its four packages (clang, interp, cublaslt, cutlass) and nothing beside them
    but ``__init__``: a new module goes into the package of its stage, under that package's contract."""
    front = PACKAGE / "frontend"
    loose = sorted(p.name for p in front.glob("*.py") if p.name != "__init__.py")
    packages = sorted(p.name for p in front.iterdir() if (p / "__init__.py").is_file())
    assert loose == [] and packages == ["clang", "cublaslt", "cutlass", "interp"]
    assert sorted(p.name for p in (front / "cutlass").iterdir() if (p / "__init__.py").is_file()) == \
        ["instantiated", "source"]
    contracts = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"fusionlint.frontend.cublaslt | fusionlint.frontend.cutlass",' in contracts
    assert '"fusionlint.frontend.cutlass.instantiated",' in contracts
