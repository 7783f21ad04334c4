"""The dependency rules of docs/architecture.md, checked on every module's imports (module-level
and inside functions), parsed with ``ast`` — nothing is imported."""

import ast
import importlib.util
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "memlens"
_SPEC = importlib.util.spec_from_file_location(
    "import_graph", Path(__file__).resolve().parents[1] / "scripts" / "import_graph.py")
import_graph = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(import_graph)
"""scripts/import_graph.py: memlens's module-level import graph and its function-local imports."""

BASE = {"errors", "jsonl", "fileio", "numfmt", "textsafe", "rowkeys", "envscope", "pydantic_config",
        "lazy", "targets", "__init__"}
"""Utilities every package may import; they import only each other."""
PURE = {"metrics", "stats"}
"""Pure computation: may import only BASE."""
LAYERS = [
    {"models"},
    {"store", "runmanifest"},
    {"engine"},
    {"questions", "stimuli", "steps", "ontology", "jsonreply"},  # content
    {"audit", "tooldrift", "mitigation"},                        # pipelines
    {"report", "gate", "inspect_ext"},                           # read pipeline results
    {"cli"},
]
"""Lowest first. A package may import BASE, PURE, anything in a lower layer and, in the content
layer only, its neighbours; the pipelines are independent of each other."""
SAME_LAYER_OK = {"questions", "stimuli", "steps", "ontology", "jsonreply"}

ALLOWED_EXCEPTIONS: set[tuple[str, str]] = set()
"""Known violations (importer, imported) the lead has to see; each says why it is still here."""


def package_of(path: Path) -> str:
    """``audit`` for src/memlens/audit/x.py, ``errors`` for src/memlens/errors.py."""
    parts = path.relative_to(SRC).parts
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def imported_packages(path: Path) -> set[tuple[str, int]]:
    """The memlens packages ``path`` imports (absolute and relative, anywhere in the file)."""
    module = path.relative_to(SRC.parent).with_suffix("").parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(module[:len(module) - node.level])
                names = [".".join(base + ([node.module] if node.module else []))]
            else:
                names = [node.module or ""]
            if names == ["memlens"]:  # ``from memlens import report`` or ``… import __version__``
                names = [f"memlens.{alias.name}" if (SRC / alias.name).is_dir() or
                         (SRC / f"{alias.name}.py").is_file() else "memlens.__init__"
                         for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "memlens" and len(parts) > 1:
                found.add((parts[1], node.lineno))
    return found


def rank(package: str) -> int | None:
    return next((i for i, layer in enumerate(LAYERS) if package in layer), None)


def allowed(importer: str, imported: str) -> bool:
    if importer == imported or imported in BASE:
        return True
    if importer in BASE:
        return False
    if imported in PURE:
        return True
    if importer in PURE:
        return False
    low, high = rank(imported), rank(importer)
    if low is None or high is None:
        return False
    return low < high or (low == high and importer in SAME_LAYER_OK)


def violations() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        importer = package_of(path)
        for imported, line in sorted(imported_packages(path), key=lambda item: item[1]):
            if not allowed(importer, imported) and (importer, imported) not in ALLOWED_EXCEPTIONS:
                found.append(f"{path.relative_to(SRC.parent)}:{line}: {importer} -> {imported}")
    return found


def test_every_package_is_placed_in_a_layer():
    packages = {package_of(path) for path in SRC.rglob("*.py")}
    placed = BASE | PURE | set().union(*LAYERS)
    assert packages - placed == set(), "add the new package to a layer in this test and the docs"


def test_imports_follow_the_dependency_rules():
    assert violations() == []


def test_the_allow_list_has_no_stale_entries():
    edges = {(package_of(path), imported) for path in SRC.rglob("*.py")
             for imported, _ in imported_packages(path)}
    assert ALLOWED_EXCEPTIONS <= edges, "remove fixed violations from ALLOWED_EXCEPTIONS"


def test_the_checker_sees_function_level_and_relative_imports(tmp_path):
    package = tmp_path / "memlens" / "metrics"
    package.mkdir(parents=True)
    (tmp_path / "memlens" / "report").mkdir()
    (package / "x.py").write_text("def f():\n    from memlens.audit import design\n"
                                  "from ..store import RunStore\nfrom memlens import report\n")
    global SRC
    saved, SRC = SRC, tmp_path / "memlens"
    try:
        assert violations() == ["memlens/metrics/x.py:2: metrics -> audit",
                                "memlens/metrics/x.py:3: metrics -> store",
                                "memlens/metrics/x.py:4: metrics -> report"]
    finally:
        SRC = saved


def silent_local_imports(local) -> list[str]:
    """Function-local memlens imports without a ``# lazy: <reason>`` comment."""
    return [f"{item.path.relative_to(SRC.parent)}:{item.line}" for item in local
            if item.reason is None]


def test_no_import_cycles_among_memlens_modules():
    graph, _ = import_graph.scan(SRC)
    assert import_graph.cycles(graph) == []


def test_no_cycle_hides_behind_a_lazy_import():
    graph, local = import_graph.scan(SRC)
    for item in local:  # as if every lazy import ran at import time
        graph[import_graph.module_name(item.path, SRC)].update(item.targets)
    assert import_graph.cycles(graph) == []


def test_every_function_local_memlens_import_says_why_it_is_lazy():
    """Imports of memlens's own modules sit at the top of the module; one stays inside a
    function only when it pulls a heavy optional dependency or would slow ``memlens --help``,
    and says so: ``from memlens.x import y  # lazy: pulls scipy``."""
    _, local = import_graph.scan(SRC)
    assert silent_local_imports(local) == []


def test_the_import_checker_sees_cycles_and_silent_local_imports(tmp_path):
    package = tmp_path / "memlens"
    (package / "face").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "from memlens import b\n",                          # a -> b
        "b.py": "import memlens.a\n",                               # b -> a: a circle
        "c.py": ("def f():\n    from memlens.a import z  # lazy: pulls scipy\n\n\n"
                 "def g():\n    if True:\n        from . import b\n"),
        "d.py": ("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                 "    from memlens.c import f\n"),                   # not at run time
        "face/__init__.py": '_EXPORTS = {"thing": "impl"}\n',        # a lazy package face
        "face/impl.py": "from memlens.e import other\n",
        "e.py": "from memlens.face import thing\n",                  # e -> face.impl -> e
    }
    for name, text in files.items():
        (package / name).write_text(text)
    graph, local = import_graph.scan(package)
    assert import_graph.cycles(graph) == [["memlens.a", "memlens.b"],
                                          ["memlens.e", "memlens.face.impl"]]
    assert graph["memlens.d"] == set()
    assert [(item.line, item.reason) for item in local] == [(2, "pulls scipy"), (7, None)]
    global SRC
    saved, SRC = SRC, package
    try:
        assert silent_local_imports(local) == ["memlens/c.py:7"]
    finally:
        SRC = saved
