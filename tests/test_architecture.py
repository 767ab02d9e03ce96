"""The shape of the code: no import cycle, no private name imported from another module,
no private module imported from outside its package, no private member of another module's
object read or written, and the layers of ``[tool.importlinter]`` in ``pyproject.toml``
(checked by ``lint-imports``).

The import graph is built from the source with :mod:`ast` (every ``import`` statement,
at module level or inside a function, relative imports resolved), so it sees the
imports a module makes lazily too, which ``sys.modules`` would miss.
"""

from __future__ import annotations

import ast
import functools
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


@functools.cache
def _tree(path: Path) -> ast.Module:
    """The syntax tree of a file (parsed once per test session)."""
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imports(module: str) -> Iterator[tuple[str, list[str], int]]:
    """``(imported module, names taken from it, line)`` for every import statement."""
    for node in ast.walk(_tree(MODULES[module])):
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


@functools.cache
def _graph() -> dict[str, set[str]]:
    """The project's import graph: module -> the project modules it imports. Made when a
    test first asks (once per worker), not when the module is collected: every worker
    collects every module, and parsing all of the project's files took seconds of each
    worker's collection."""
    return {m: _edges(m) for m in MODULES}


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
    assert "ireval_core.intervals" in _graph()["ireval_core.evaluate"]
    assert "ireval_core.options" in _graph()["ireval_core.labels.trend"]
    assert "ireval_core.intervals" in _graph()["ireval_core.stats.base"]
    assert "ireval_core.stats" not in _graph()["ireval_core.evaluate"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}, {"a", "b", "c"}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}, {"a", "b"}) is None


def test_no_import_cycle_in_the_core() -> None:
    cycle = _cycle(_graph(), _in("ireval_core"))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_import_cycle_in_the_app() -> None:
    cycle = _cycle(_graph(), _in("ireval_core") | _in("ireval_app"))
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


# ----------------------------------------------------------------------------- private modules
#
# A private module (``_arrow``, or any module under a ``_name`` part of the path) belongs to
# the package that holds it: only modules of that package (its subpackages included)
# import it. What another package needs from it has a public module.

PAGE_FILES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]


def _owner(module: str) -> str | None:
    """The package a private module belongs to (the path before its first ``_name``
    part), or None for a public module."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            return ".".join(parts[:i])
    return None


def _named_modules(target: str, names: list[str]) -> set[str]:
    """The project modules an import statement names (the module, or the submodules
    ``from`` takes)."""
    out = {target} if target in MODULES else set()
    out |= {f"{target}.{name}" for name in names if f"{target}.{name}" in MODULES}
    return out


def _private_module_imports(module: str | None, imports: Iterator[tuple[str, list[str], int]],
                            where: Path) -> list[str]:
    """``file:line: imports private module m`` for each import of a private module whose
    package ``module`` is not in (``module`` None: a page, in no package)."""
    found = []
    for target, names, line in imports:
        for named in sorted(_named_modules(target, names)):
            owner = _owner(named)
            inside = module is not None and (module == owner or
                                             module.startswith(f"{owner}."))
            if owner is not None and not inside:
                found.append(f"{where.relative_to(ROOT)}:{line}: imports private module "
                             f"{named}, which only {owner} may import")
    return found


def test_private_module_detection() -> None:
    assert _owner("ireval_core._arrow") == "ireval_core"
    assert _owner("ireval_core.stats._x.y") == "ireval_core.stats"
    assert _owner("ireval_core.stats.base") is None
    fake = [("ireval_core", ["_arrow"], 3), ("ireval_core._arrow", ["f"], 4)]
    here = ROOT / "ireval_core" / "measures" / "gain.py"
    assert _private_module_imports("ireval_core.measures.gain", iter(fake), here) == []
    assert len(_private_module_imports("ireval_app.state", iter(fake), here)) == 2
    assert len(_private_module_imports(None, iter(fake), here)) == 2


def _page_imports(path: Path) -> Iterator[tuple[str, list[str], int]]:
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom) and not node.level:
            yield node.module or "", [a.name for a in node.names], node.lineno


def test_no_private_module_imported_from_outside_its_package() -> None:
    bad = [b for m in sorted(MODULES)
           for b in _private_module_imports(m, _imports(m), MODULES[m])]
    bad += [b for path in PAGE_FILES
            for b in _private_module_imports(None, _page_imports(path), path)]
    assert not bad, "\n".join(bad)


# ----------------------------------------------------------------------------- private members
#
# ``obj._name`` (read, written or through ``getattr``/``setattr``/``hasattr``/``delattr``
# with a literal name) is allowed on ``self`` and ``cls``, and on any object when the module
# itself defines ``_name`` (a function, class, module or class attribute, ``self._name``,
# a ``__slots__`` entry): without types, "the module that defines the member" is the
# module that binds the name. Another module's private member gets a public name or a
# public method instead.

ALLOWED_MEMBERS: dict[str, str] = {
    # name: the one-line reason it may be used on another module's object
    "_meta": "a Dask DataFrame's empty pandas frame of its columns and dtypes: Dask's own "
             "name for it (the meta= of its API), with no public accessor",
}


def _bound_names(body: list[ast.stmt]) -> set[str]:
    """The names bound by module- or class-level statements of ``body`` (into classes
    and compound statements, not into functions' bodies)."""
    out: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(node.name)
            continue
        if isinstance(node, ast.ClassDef):
            out |= {node.name} | _bound_names(node.body)
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            out |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
            if (isinstance(node, ast.Assign) and isinstance(target, ast.Name)
                    and target.id == "__slots__"):
                out |= {c.value for c in ast.walk(node.value)
                        if isinstance(c, ast.Constant) and isinstance(c.value, str)}
        for block in ("body", "orelse", "finalbody"):  # if, for, while, with, try
            out |= _bound_names(getattr(node, block, []))
        for handler in getattr(node, "handlers", []):
            out |= _bound_names(handler.body)
    return out


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in {"self", "cls"}


def _member_uses(tree: ast.Module) -> Iterator[tuple[ast.expr, str, int]]:
    """``(object, member, line)`` for every private member used on an object, in file
    order."""
    nodes = sorted((n for n in ast.walk(tree) if isinstance(n, (ast.Attribute, ast.Call))),
                   key=lambda n: (n.lineno, n.col_offset))
    for node in nodes:
        if isinstance(node, ast.Attribute) and _private(node.attr):
            yield node.value, node.attr, node.lineno
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in {"getattr", "setattr", "hasattr", "delattr"}
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and _private(node.args[1].value)):
            yield node.args[0], node.args[1].value, node.lineno


def _private_members(tree: ast.Module, where: str) -> list[str]:
    """``where:line: obj._name`` for every private member of another module's object."""
    own = _bound_names(tree.body) | {
        n.attr for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and _is_self(n.value)}
    return [f"{where}:{line}: {ast.unparse(obj)}.{name}"
            for obj, name, line in _member_uses(tree)
            if not _is_self(obj) and name not in own and name not in ALLOWED_MEMBERS]


def test_private_member_detection() -> None:
    source = """
class A:
    _kept = 1
    def __init__(self):
        self._mine = 0
    def f(self, other):
        return other._mine + other._kept + self._theirs + other.__class__.__name__
def g(j):
    j._cache[1] = 2
    return j._round_code("r"), getattr(j, "_hidden"), type(j).__dict__
"""
    assert _private_members(ast.parse(source), "m.py") == [
        "m.py:9: j._cache", "m.py:10: j._round_code", "m.py:10: j._hidden"]
    # a name bound at module level inside try/except or if is the module's own
    nested = "try:\n    _fast = 1\nexcept ImportError:\n    _slow = 2\nx = m._fast + m._slow"
    assert _private_members(ast.parse(nested), "n.py") == []


def test_no_private_member_of_another_module_is_used() -> None:
    bad = []
    for path in [*MODULES.values(), *PAGE_FILES]:
        bad += _private_members(_tree(path), str(path.relative_to(ROOT)))
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


DASK_MODULES = {"ireval_core.distributed", "ireval_core.io.dask", "ireval_core.io.dask_rows"}
"""The Dask engine and its readers: the only modules that import Dask."""


def test_only_the_dask_engine_and_its_readers_import_dask() -> None:
    """Dask is read in io/dask.py and io/dask_rows.py and run in distributed.py, nowhere
    else; and the in-memory path never imports them (only the CLI's and the app's Dask
    engine do), so it stays free of Dask."""
    importing = {m for m in MODULES for target, _, _ in _imports(m)
                 if target.split(".")[0] in ("dask", "distributed")}
    assert importing == DASK_MODULES
    users = {m for m in MODULES if _graph()[m] & DASK_MODULES} - DASK_MODULES
    assert all(u in ("ireval_core.cli", "ireval_core.__main__") or u.startswith("ireval_app")
               for u in users), sorted(users)


# ----------------------------------------------------------------------------- pages on top


def test_pages_are_the_top_layer() -> None:
    """pages → ireval_app → ireval_core, never back: no package module imports a page
    script or ``app``, and a page takes no private name from the packages."""
    back = [f"{m} imports {target}" for m in MODULES for target, _, _ in _imports(m)
            if target.split(".")[0] in {"pages", "app"}]
    assert not back, "\n".join(back)
    private = []
    for path in PAGE_FILES:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom):
                private += [f"{path.relative_to(ROOT)}:{node.lineno}: {a.name}"
                            for a in node.names if _private(a.name)]
    assert not private, "\n".join(private)
    assert len(PAGE_FILES) >= 15  # the Data page and every page of the menu


# ----------------------------------------------------------------------------- pages only lay out
#
# A page reads and writes what a session keeps through ``ireval_app.state`` (and the glue's
# own accessors), never ``st.session_state`` itself: the keys and what they hold stay in one
# place. A page's body (its module-level code) and every function of the app are short
# enough to read whole, and no module of the app grows past what one reader holds.

PAGE_BODY_MAX = FUNCTION_MAX = 120
MODULE_MAX = 1000


def _session_state_uses(tree: ast.Module, where: str) -> list[str]:
    """``where:line`` of every mention of ``session_state`` in ``tree``: an attribute
    (``st.session_state``), a name, an imported name, or the string (``getattr``)."""
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr == "session_state"
                or isinstance(node, ast.Name) and node.id == "session_state"
                or isinstance(node, ast.alias) and node.name == "session_state"
                or isinstance(node, ast.Constant) and node.value == "session_state"):
            found.append(f"{where}:{getattr(node, 'lineno', '?')}")
    return found


def test_session_state_detection() -> None:
    src = """
import streamlit as st
from streamlit import session_state
st.session_state["k"] = 1
getattr(st, "session_state")
x = st.query_params
"""
    assert sorted(_session_state_uses(ast.parse(src), "p")) == ["p:3", "p:4", "p:5"]
    assert _session_state_uses(ast.parse("import streamlit as st\nst.title('x')"), "p") == []


def test_pages_never_touch_session_state() -> None:
    """app.py and pages/ go through ireval_app.state (the module saying so)."""
    uses = [u for path in PAGE_FILES
            for u in _session_state_uses(_tree(path), str(path.relative_to(ROOT)))]
    assert not uses, "st.session_state in a page (use ireval_app.state):\n" + "\n".join(uses)


def _page_body_lines(tree: ast.Module) -> int:
    """Lines of a page's module-level code: every statement but functions, classes,
    imports and the docstring."""
    return sum(s.end_lineno - s.lineno + 1 for s in tree.body  # type: ignore[operator]
               if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                                 | ast.Import | ast.ImportFrom)
               and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)))


def test_no_string_left_bare_in_a_page_body() -> None:
    """A string standing alone in a page's module-level code (a docstring under a constant,
    say) is drawn on the page by Streamlit's magic: only the module's own docstring may."""
    bare = []
    for path in PAGE_FILES:
        body = _tree(path).body
        stmts = [*body[1:], *(s for w in body if isinstance(w, ast.With) for s in w.body)]
        bare += [f"{path.relative_to(ROOT)}:{s.lineno}" for s in stmts
                 if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                 and isinstance(s.value.value, str)]
    assert not bare, "\n".join(bare)
# --- room sizes: no module over 1,000 lines, no function over 120 -------------------------
# A page's module-level code counts as one function (its body). An exception is allowed only
# when ARCHITECTURE.md's section "Kept whole" names it (a bullet starting with the path, or
# path:function) with a sentence saying why it is better whole.

SIZED = [p for root in ("ireval_core", "ireval_app") for p in sorted((ROOT / root).rglob("*.py"))]


def _kept_whole() -> set[str]:
    """The rooms ARCHITECTURE.md's "Kept whole" section names, each with a reason."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    if "## Kept whole" not in text:
        return set()
    section = text.split("## Kept whole", 1)[1].split("\n## ", 1)[0]
    kept = set()
    for line in section.splitlines():
        if line.startswith("- `"):
            name, _, why = line[3:].partition("`")
            assert len(why.strip(" :")) > 20, f"ARCHITECTURE.md: {name} kept whole, no reason"
            kept.add(name)
    return kept


def _oversized() -> list[str]:
    found = []
    for path in [*SIZED, *PAGE_FILES]:
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MODULE_MAX:
            found.append(rel)
        tree = _tree(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if (node.end_lineno or node.lineno) - node.lineno + 1 > FUNCTION_MAX:
                    found.append(f"{rel}:{node.name}")
        if path in PAGE_FILES and _page_body_lines(tree) > PAGE_BODY_MAX:
            found.append(f"{rel}:<page body>")
    return found


def test_page_body_measure() -> None:
    tree = ast.parse('"""doc"""\nimport x\n\ndef f():\n    pass\n\n'
                     'a = 1\nb = (2,\n     3)\n\nc = 4\n')
    assert _page_body_lines(tree) == 4  # statements' lines: not the docstring, imports, defs


def test_no_room_too_big_to_read_unless_kept_whole_for_a_reason() -> None:
    kept = _kept_whole()
    oversized = _oversized()
    over = [f for f in oversized if f not in kept]
    assert not over, ("over 1,000 lines (module) or 120 lines (function, page body), and "
                      "not in ARCHITECTURE.md's 'Kept whole' with a reason: " + ", ".join(over))
    stale = kept - set(oversized)
    assert not stale, "ARCHITECTURE.md keeps whole what is no longer too big: " + ", ".join(stale)
