"""The import check of the Python package: no cycles, no private names across modules.

Every ``import``/``from ... import`` statement of every module under
src/jaxamg is read with ``ast`` (nothing is imported) and resolved to the
package's modules it names. Two rules:

  ==========================  ================================================
  rule                        why
  ==========================  ================================================
  no import cycle             a reader (and a tool) can follow the package
                              downward; a cycle hidden in a function still
                              ties two modules together, so imports inside
                              functions count too
  no private name from        a helper two modules share lives in a lower
  another module              module under a public name; importing a
                              private *module* (``from ._core import
                              checks``, ``from . import _single``) is fine,
                              importing or reaching for a ``_name`` defined
                              in another module (``from .x import _y``,
                              ``x._y``) is not
  a layer imports only the  the package reads downward: ``_core`` (what
  layers below it            every path shares) imports nothing above it,
                             ``_operators`` only ``_core``, each path
                             (``_single``, ``_dist``, ``_sharded``) what is
                             below it (never ``_solve``, the front door, nor
                             a path beside it but ``_sharded`` on ``_dist``),
                             and the public modules the paths use
                             (``config``, ``nullspace``, ``sparsity``)
                             import none of the paths; LAYERS below lists
                             them
  ==========================  ================================================

Imports under ``if TYPE_CHECKING:`` are not followed (they never run), and
the strings of ``jaxamg/__init__.py``'s lazy attribute table are not imports.

It also reports counts: modules per folder, imports of the package's own
modules inside functions (each should say why in a comment), all imports
inside functions.

Usage: ``python tools/check_imports.py [PACKAGE_DIR]`` (default: this
repository's src/jaxamg). Prints ``file:line: rule`` per violation and exits 1
if any.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Import:
    line: int
    target: str  # the package module the statement imports from
    names: list[str]  # names imported from it ("" for a plain `import x`)
    local: bool  # inside a function


@dataclass
class Module:
    name: str  # dotted, e.g. "jaxamg._core.checks"
    path: Path
    is_package: bool
    imports: list[Import] = field(default_factory=list)
    foreign_imports_in_functions: int = 0  # jax, numpy, mpi4py, ... inside functions
    private_attributes: list[tuple[int, str, str]] = field(default_factory=list)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


# The compiled modules cpp/bindings/CMakeLists.txt installs into the package's
# top folder (absent from a source tree that was not built in place): modules,
# so importing them is importing a module, not a private name.
COMPILED = ("_cpu", "_cuda", "_engine", "_mpi", "_mpi_cuda")


# What each part of the package (a folder or a top-level module, named by its
# first component under the package) may import, by first component. Parts not
# listed are not limited (the front door, the public modules above the paths).
_BELOW_PATHS = {"_core", "_operators", "config", "nullspace", "sparsity"}
LAYERS = {
    "_core": {"_core", *COMPILED},
    "_operators": {"_core", "_operators"},
    "_single": _BELOW_PATHS | {"_single"},
    "_dist": _BELOW_PATHS | {"_dist"},
    "_sharded": _BELOW_PATHS | {"_dist", "_sharded"},
    **{name: {"_core", "_operators", name} for name in _BELOW_PATHS - {"_core", "_operators"}},
}


def _part(name: str) -> str:
    """The first component under the package: "_core" of "jaxamg._core.ffi"."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def _modules(package: Path) -> dict[str, Module]:
    """Every .py file under the package, by dotted module name, and the
    compiled modules."""
    found = {
        f"{package.name}.{name}": Module(f"{package.name}.{name}", package / name, False)
        for name in COMPILED
    }
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = Module(".".join(parts), path, is_package)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _base(module: Module, level: int, name: str | None) -> str:
    """The absolute name of a (relative) import's module part."""
    if level == 0:
        return name or ""
    parts = module.name.split(".")
    package = parts if module.is_package else parts[:-1]
    package = package[: len(package) - (level - 1)]
    return ".".join(package + ([name] if name else []))


class _Reader(ast.NodeVisitor):
    """Collects one module's imports, telling top-level from function-local."""

    def __init__(self, module: Module, modules: dict[str, Module], root: str):
        self.module, self.modules, self.root = module, modules, root
        self.depth = 0  # enclosing functions
        self.aliases: dict[str, str] = {}  # local name -> package module it binds

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_If(self, node: ast.If):
        if _is_type_checking(node.test):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def _ours(self, name: str) -> bool:
        return name == self.root or name.startswith(self.root + ".")

    def visit_Import(self, node: ast.Import):
        for alias in node.names:
            if not self._ours(alias.name):
                self.module.foreign_imports_in_functions += self.depth > 0
                continue
            target = alias.name if alias.name in self.modules else alias.name.rpartition(".")[0]
            self.module.imports.append(Import(node.lineno, target, [""], self.depth > 0))
            if alias.asname and alias.name in self.modules:
                self.aliases[alias.asname] = alias.name

    def visit_ImportFrom(self, node: ast.ImportFrom):
        base = _base(self.module, node.level, node.module)
        if not self._ours(base):
            self.module.foreign_imports_in_functions += self.depth > 0
            return
        local = self.depth > 0
        names = []
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            if sub in self.modules:  # `from pkg import module`: an import of that module
                self.module.imports.append(Import(node.lineno, sub, [""], local))
                self.aliases[alias.asname or alias.name] = sub
            else:
                names.append(alias.name)
        if names or not node.names:
            self.module.imports.append(Import(node.lineno, base, names, local))

    def visit_Attribute(self, node: ast.Attribute):
        # `_solve._stats_lock` after `from . import _solve`: the same private
        # reach as importing the name.
        if (
            isinstance(node.value, ast.Name)
            and node.value.id in self.aliases
            and _private(node.attr)
            and f"{self.aliases[node.value.id]}.{node.attr}" not in self.modules
        ):
            self.module.private_attributes.append(
                (node.lineno, self.aliases[node.value.id], node.attr)
            )
        self.generic_visit(node)


def read(package: Path) -> dict[str, Module]:
    """The package's modules with their imports resolved."""
    package = package.resolve()
    modules = _modules(package)
    for module in modules.values():
        if module.path.suffix != ".py":
            continue  # compiled
        tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
        _Reader(module, modules, package.name).visit(tree)
    return modules


def _graph(modules: dict[str, Module]) -> dict[str, dict[str, int]]:
    """module -> {imported module: first line}, over all imports (local ones too)."""
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for module in modules.values():
        for imp in module.imports:
            if imp.target in modules and imp.target != module.name:
                graph[module.name].setdefault(imp.target, imp.line)
    return graph


def cycles(modules: dict[str, Module]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    graph = _graph(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _where(module: Module, line: int, package: Path) -> str:
    return f"{module.path.relative_to(package.parent.resolve())}:{line}"


def check(package: Path) -> list[str]:
    """Every violation in the package, as 'file:line: rule' lines."""
    package = package.resolve()
    modules = read(package)
    problems = []
    graph = _graph(modules)
    for component in cycles(modules):
        members = set(component)
        for name in component:
            for target, line in sorted(graph[name].items()):
                if target in members:
                    problems.append(
                        f"{_where(modules[name], line, package)}: import cycle: {name} imports "
                        f"{target}, and {target} leads back (cycle: {', '.join(component)})"
                    )
    for module in modules.values():
        for imp in module.imports:
            if imp.target not in modules or imp.target == module.name:
                continue
            part, target = _part(module.name), _part(imp.target)
            allowed = LAYERS.get(part)
            if allowed is not None and target not in allowed:
                problems.append(
                    f"{_where(module, imp.line, package)}: layer: {part} imports {target} "
                    f"({imp.target}); {part} may import only {', '.join(sorted(allowed))}"
                )
            for name in imp.names:
                if _private(name):
                    problems.append(
                        f"{_where(module, imp.line, package)}: private name {name} imported "
                        f"from {imp.target}: move it to a lower module under a public name"
                    )
        for line, target, name in module.private_attributes:
            problems.append(
                f"{_where(module, line, package)}: private name {name} of "
                f"{target} used: move it to a lower module under a public name"
            )
    return problems


def counts(package: Path) -> dict[str, object]:
    """Modules per folder and imports inside functions."""
    package = package.resolve()
    modules = read(package)
    modules = {n: m for n, m in modules.items() if m.path.suffix == ".py"}
    per_folder = Counter(str(m.path.parent.relative_to(package.parent)) for m in modules.values())
    private = sum(
        1
        for m in modules.values()
        for i in m.imports
        if i.target in modules and i.target != m.name
        for n in i.names
        if _private(n)
    )
    return {
        "modules per folder": dict(sorted(per_folder.items())),
        "modules": len(modules),
        "imports of the package's modules": sum(len(m.imports) for m in modules.values()),
        "of them inside functions": sum(i.local for m in modules.values() for i in m.imports),
        "other imports inside functions": sum(
            m.foreign_imports_in_functions for m in modules.values()
        ),
        "private names imported from another module": private,
        "private names of another module used as attributes": sum(
            len(m.private_attributes) for m in modules.values()
        ),
        "import cycles": len(cycles(modules)),
    }


def main(argv: list[str]) -> int:
    package = (
        Path(argv[1])
        if len(argv) > 1
        else Path(__file__).resolve().parent.parent / "src" / "jaxamg"
    )
    problems = check(package)
    for p in problems:
        print(p)
    for key, value in counts(package).items():
        if isinstance(value, dict):
            for folder, n in value.items():
                print(f"check_imports: {folder}/: {n} modules")
        else:
            print(f"check_imports: {key}: {value}")
    if problems:
        print(
            f"check_imports: {len(problems)} problem(s) (tools/check_imports.py lists the rules)",
            file=sys.stderr,
        )
        return 1
    print(
        "check_imports: no import cycles, no private names across modules, the layers read downward"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
