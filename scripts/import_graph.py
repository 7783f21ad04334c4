"""memlens's own import graph, read with ``ast`` (nothing is imported): the module-level import
cycles and the function-local imports of memlens modules.

    python scripts/import_graph.py            # counts, cycles, local imports grouped by reason
    python scripts/import_graph.py --list     # ... and every local import with its file:line
    python scripts/import_graph.py --src /tmp/old/src/memlens   # another checkout

Module level means executed when the module is imported: top-level statements, class bodies and
``try`` / ``if`` blocks, except ``if TYPE_CHECKING:`` blocks. A local import is one inside a
function; it counts as explained when its statement, the line just above it or the line just
above its block of consecutive imports carries a ``# lazy: <reason>`` comment.
tests/test_architecture.py uses these functions.
"""

import argparse
import ast
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "memlens"
LAZY_MARK = "# lazy:"


@dataclass(frozen=True)
class LocalImport:
    """One function-local import of a memlens module."""

    path: Path
    line: int
    targets: tuple[str, ...]
    reason: str | None
    """The text after ``# lazy:``, or None when the import carries no such comment."""


def module_name(path: Path, src: Path) -> str:
    """``memlens.audit.drift`` for src/memlens/audit/drift.py, ``memlens.audit`` for its __init__."""
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules(src: Path) -> dict[str, Path]:
    """Every memlens module name and its file."""
    return {module_name(path, src): path for path in sorted(src.rglob("*.py"))}


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The absolute module a (possibly relative) ``from`` import names."""
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    base = base[:len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def lazy_face(init: ast.Module, package: str) -> dict[str, str]:
    """Name -> defining module of a lazy package face (``memlens.lazy.lazy_exports``): its
    ``_EXPORTS`` (name -> submodule) and ``_DEPRECATED`` (name -> (module, replacement))."""
    found: dict[str, str] = {}
    for node in init.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                and any(isinstance(t, ast.Name) and t.id in ("_EXPORTS", "_DEPRECATED")
                        for t in node.targets)):
            continue
        for key, value in zip(node.value.keys, node.value.values, strict=True):
            if isinstance(value, ast.Tuple) and value.elts:
                value = value.elts[0]
            if isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
                where = str(value.value)
                found[str(key.value)] = where if where.startswith("memlens.") else (
                    f"{package}.{where}")
    return found


def _named(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool,
           modules: set[str], faces: dict[str, dict[str, str]]) -> list[str]:
    """The modules an import statement names: ``from package import name`` names the submodule
    ``name``, else the module a lazy face resolves ``name`` from (and the face), else the
    package."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    package = _absolute(node, importer, is_package)
    named = []
    for alias in node.names:
        if f"{package}.{alias.name}" in modules:
            named.append(f"{package}.{alias.name}")
        else:
            named.append(package)
            if alias.name in faces.get(package, {}):
                named.append(faces[package][alias.name])
    return named


def import_targets(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool,
                   modules: set[str], faces: dict[str, dict[str, str]] | None = None
                   ) -> list[str]:
    """The memlens modules whose code runs (or must have finished) for this import statement:
    the named module, a submodule named in ``from package import submodule``, the module a lazy
    face (``faces``: :func:`lazy_face` per package) loads for a name, and the package faces
    (``__init__``) on the way that the importer does not sit inside."""
    named = _named(node, importer, is_package, modules, faces or {})
    importer_package = importer if is_package else importer.rpartition(".")[0]
    targets = []
    for name in named:
        if name.split(".")[0] != "memlens":
            continue
        parts = name.split(".")
        for end in range(1, len(parts)):  # parent package faces run first
            parent = ".".join(parts[:end])
            inside = importer_package == parent or importer_package.startswith(parent + ".")
            if not inside and parent in modules:
                targets.append(parent)
        if name in modules and name != importer:
            targets.append(name)
    return list(dict.fromkeys(targets))


def _is_type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.Module):
    """Yield (import node, inside a function, first import of its run of consecutive import
    statements) for every import outside ``if TYPE_CHECKING:``."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, in_function = stack.pop()
        first = None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                stack.extend((grandchild, in_function) for grandchild in child.orelse)
                continue
            is_import = isinstance(child, (ast.Import, ast.ImportFrom))
            first = (first or child) if is_import else None
            if is_import:
                yield child, in_function, first
            local = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                      ast.Lambda))
            stack.append((child, local))


def _lazy_reason(node: ast.stmt, run_start: ast.stmt, lines: list[str]) -> str | None:
    """The ``# lazy:`` reason on the import's own lines, on the line above it, or on the line
    above the run of consecutive imports it belongs to (one comment for a block)."""
    first, last = node.lineno, node.end_lineno or node.lineno
    for number in [*range(first, last + 1), first - 1, run_start.lineno - 1]:
        text = lines[number - 1] if 0 < number <= len(lines) else ""
        if LAZY_MARK in text and (number >= first or text.lstrip().startswith(LAZY_MARK)):
            return text.split(LAZY_MARK, 1)[1].strip() or None
    return None


def scan(src: Path = SRC) -> tuple[dict[str, set[str]], list[LocalImport]]:
    """The module-level import graph (module -> memlens modules it needs at import time) and
    every function-local import of a memlens module."""
    modules = all_modules(src)
    names = set(modules)
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules.items()}
    faces = {name: lazy_face(trees[name], name) for name, path in modules.items()
             if _is_package(path)}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    local: list[LocalImport] = []
    for name, path in modules.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for node, in_function, run_start in _imports(trees[name]):
            targets = import_targets(node, name, _is_package(path), names, faces)
            if not targets:
                continue
            if in_function:
                local.append(LocalImport(path, node.lineno, tuple(targets),
                                         _lazy_reason(node, run_start, lines)))
            else:
                graph[name].update(targets)
    return graph, sorted(local, key=lambda item: (item.path, item.line))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted;
    a module importing itself counts too."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(start: str) -> None:  # iterative Tarjan: no recursion limit on deep graphs
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="print every local import")
    parser.add_argument("--src", type=Path, default=SRC, help="the memlens package folder")
    args = parser.parse_args()
    graph, local = scan(args.src)
    hoisted = {name: set(targets) for name, targets in graph.items()}
    for item in local:
        hoisted[module_name(item.path, args.src)].update(item.targets)
    print(f"modules: {len(graph)}  module-level edges: {sum(map(len, graph.values()))}")
    for title, circles in [("import cycles", cycles(graph)),
                           ("cycles if every local import were hoisted", cycles(hoisted))]:
        print(f"{title}: {len(circles)}")
        for circle in circles:
            print("  " + " <-> ".join(circle))
    print(f"function-local imports of memlens modules: {len(local)}"
          f"  (with '{LAZY_MARK}': {sum(item.reason is not None for item in local)})")
    reasons = Counter(item.reason or "(no reason)" for item in local)
    for reason, count in reasons.most_common():
        print(f"  {count:4d}  {reason}")
    if args.list:
        for item in local:
            print(f"{item.path.relative_to(args.src.parent)}:{item.line}: {', '.join(item.targets)}"
                  f"  [{item.reason or '-'}]")


if __name__ == "__main__":
    main()
