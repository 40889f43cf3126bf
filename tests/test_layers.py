"""The package's layers point one way, checked on the source (an AST walk, no import-linter):
numerics < data (``operators``: channels, readout, Pauli sums) < circuit operations < contraction and state
vectors < differentiation < simulators < algorithms < integrations
(Qiskit primitives, the PennyLane device) < the package's own ``__init__``.

Every import of a tyxonq module, at the top of a file or inside a function, must point to the
same layer or one below; and no two packages, and no two modules, may import each other in a
circle (counting every import: a lazy import is a dependency all the same)."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "tyxonq"

#: layer name -> module prefixes (the longest matching prefix decides a module's layer)
LAYERS = (
    ("numerics", ("tyxonq.numerics", "tyxonq._context")),
    ("data", ("tyxonq.operators",)),
    ("operations", ("tyxonq.circuit.operations",)),
    ("contraction and state vectors", ("tyxonq.circuit.contraction", "tyxonq.circuit.statevector")),
    ("differentiation", ("tyxonq.circuit.differentiation",)),
    ("simulators", ("tyxonq.circuit",)),
    ("algorithms", ("tyxonq.gradients", "tyxonq.geometry", "tyxonq.optimize", "tyxonq.templates",
                    "tyxonq.noise", "tyxonq.mitigation", "tyxonq.evolution", "tyxonq.examples",
                    "tyxonq.caches", "tyxonq.chem", "tyxonq.plot")),
    ("integrations", ("tyxonq.qiskit", "tyxonq.pennylane")),
    ("package", ("tyxonq",)),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in SOURCE.rglob("*.py")}


def layer(module: str) -> int:
    matches = [(len(prefix), index) for index, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes
               if module == prefix or module.startswith(prefix + ".")]
    return max(matches)[1]


def imports(module: str) -> list[tuple[str, int]]:
    """Every tyxonq module ``module`` imports (``from package import module`` names the module),
    with its line."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "tyxonq":
                found += [(f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target,
                           node.lineno) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names
                      if alias.name.split(".")[0] == "tyxonq"]
    return found


def package_of(module: str) -> str:
    return module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
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
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_has_a_layer():
    assert all(layer(module) >= 0 for module in MODULES)


def test_no_import_points_up_a_layer():
    upward = [f"{module}:{line} ({LAYERS[layer(module)][0]}) imports {target} ({LAYERS[layer(target)][0]})"
              for module in sorted(MODULES) for target, line in imports(module)
              if target in MODULES and layer(target) > layer(module)]
    assert not upward, "imports pointing up a layer:\n" + "\n".join(upward)


def test_no_two_modules_import_each_other_in_a_circle():
    edges = {module: {target for target, _ in imports(module) if target in MODULES and target != module}
             for module in MODULES}
    # a package's __init__ imports its own modules: those edges point down, not round
    found = cycles(edges)
    assert not found, f"module cycles: {found}"


def test_no_two_packages_import_each_other_in_a_circle():
    edges: dict[str, set[str]] = {}
    for module in MODULES:
        for target, _ in imports(module):
            if target in MODULES and package_of(target) != package_of(module) and \
                    not package_of(target).startswith(package_of(module) + "."):
                edges.setdefault(package_of(module), set()).add(package_of(target))
    found = cycles(edges)
    assert not found, f"package cycles: {found}"


def test_the_checks_catch_what_they_are_for():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    order = ["tyxonq.numerics.memory", "tyxonq.operators.channels", "tyxonq.circuit.operations.operation",
             "tyxonq.circuit.contraction.plan", "tyxonq.circuit.differentiation.traced",
             "tyxonq.circuit.circuit", "tyxonq.noise.model", "tyxonq.qiskit.estimator", "tyxonq"]
    assert [layer(module) for module in order] == list(range(len(LAYERS)))
