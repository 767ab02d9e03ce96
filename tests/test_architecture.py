"""The shape of the code: no import cycle, no private name imported from another module,
and the layers of ``[tool.importlinter]`` in ``pyproject.toml`` (checked by ``lint-imports``).

The import graph is built from the source with :mod:`ast` (every ``import`` statement,
at module level or inside a function, relative imports resolved), so it sees the
imports a module makes lazily too, which ``sys.modules`` would miss.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent



# ----------------------------------------------------------------------------- the graph


def _modules(package: str) -> dict[str, Path]:
    """Every module of ``package`` (a folder under ROOT): dotted name -> file."""
    out: dict[str, Path] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = {**_modules("ireval_core"), **_modules("ireval_app")}


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _base(module: str, level: int) -> str:
    """The package a relative import of ``level`` dots in ``module`` starts from."""
    parts = module.split(".")
    if not _is_package(module):
        parts.pop()
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts)


def _imports(module: str) -> Iterator[tuple[str, list[str], int]]:
    """``(imported module, names taken from it, line)`` for every import statement."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"), str(MODULES[module]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _base(module, node.level)
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            yield target, [a.name for a in node.names], node.lineno


def _edges(module: str) -> set[str]:
    """The project modules ``module`` imports (a name that is a submodule counts as it)."""
    out: set[str] = set()
    for target, names, _ in _imports(module):
        if not names:  # import a.b.c
            if target in MODULES:
                out.add(target)
            continue
        for name in names:  # from a.b import c: the submodule a.b.c, else a.b's attribute
            if f"{target}.{name}" in MODULES:
                out.add(f"{target}.{name}")
            elif target in MODULES:
                out.add(target)
    out.discard(module)
    return out


GRAPH = {m: _edges(m) for m in MODULES}


def _cycle(graph: dict[str, set[str]], nodes: set[str]) -> list[str] | None:
    """One import cycle among ``nodes`` (as a path that returns to its start), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node] & nodes):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(nodes) + 100))
    for start in sorted(nodes):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def _in(package: str) -> set[str]:
    return {m for m in MODULES if m == package or m.startswith(package + ".")}


def test_the_graph_sees_lazy_and_relative_imports() -> None:
    # a function-level import (Evaluation.intervals), relative imports one and two dots up
    assert "ireval_core.intervals" in GRAPH["ireval_core.evaluate"]
    assert "ireval_core.options" in GRAPH["ireval_core.labels.trend"]
    assert "ireval_core.intervals" in GRAPH["ireval_core.stats._base"]
    assert "ireval_core.stats" not in GRAPH["ireval_core.evaluate"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}, {"a", "b", "c"}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}, {"a", "b"}) is None


def test_no_import_cycle_in_the_core() -> None:
    cycle = _cycle(GRAPH, _in("ireval_core"))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_import_cycle_in_the_app() -> None:
    cycle = _cycle(GRAPH, _in("ireval_core") | _in("ireval_app"))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# ----------------------------------------------------------------------------- private names


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_imports(modules: set[str]) -> list[str]:
    """``file:line: module imports _name from other`` for every private name imported."""
    found = []
    for module in sorted(modules):
        for target, names, line in _imports(module):
            if target == "__future__":
                continue
            for name in names:
                if _private(name):
                    where = MODULES[module].relative_to(ROOT)
                    found.append(f"{where}:{line}: imports {name} from {target}")
    return found


def test_private_name_detection() -> None:
    assert _private("_check") and _private("_x")
    assert not _private("__version__") and not _private("check") and not _private("__all__")


def test_no_private_name_imported_across_modules_in_the_core() -> None:
    bad = _private_imports(_in("ireval_core"))
    assert not bad, "\n".join(bad)


def test_no_private_name_imported_across_modules_in_the_app() -> None:
    bad = _private_imports(_in("ireval_app"))
    assert not bad, "\n".join(bad)


# ----------------------------------------------------------------------------- import-linter


def test_import_contracts() -> None:
    """The contracts of ``[tool.importlinter]`` hold (``lint-imports``, as ``make lint``)."""
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    if not Path(exe).exists():
        pytest.skip("import-linter is not installed (pip install -r requirements-dev.txt)")
    done = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


# ----------------------------------------------------------------------------- pages on top

PAGE_FILES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]


def test_pages_are_the_top_layer() -> None:
    """pages → ireval_app → ireval_core, never back: no package module imports a page
    script or ``app``, and a page takes no private name from the packages."""
    back = [f"{m} imports {target}" for m in MODULES for target, _, _ in _imports(m)
            if target.split(".")[0] in {"pages", "app"}]
    assert not back, "\n".join(back)
    private = []
    for path in PAGE_FILES:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                private += [f"{path.relative_to(ROOT)}:{node.lineno}: {a.name}"
                            for a in node.names if _private(a.name)]
    assert not private, "\n".join(private)
    assert len(PAGE_FILES) >= 15  # the Data page and every page of the menu
