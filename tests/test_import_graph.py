"""The package's import graph has no circle, lazy imports (inside functions) included.

import-linter checks the layers from the top-level imports; this test reads every import
statement of every module of nsrl/ and envs/ (those inside functions and under
``TYPE_CHECKING`` too), resolves ``from package import name`` to the submodule when ``name``
is one, and asks for the strongly connected components of the graph: each must be one module.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"nsrl": ROOT / "nsrl", "nsrl.envs": ROOT / "envs"}


def modules() -> dict[str, Path]:
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def is_package(name: str, known: dict[str, Path]) -> bool:
    return name in known and known[name].name == "__init__.py"


def edges(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The nsrl modules ``name`` imports (resolved to the deepest known module)."""
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package
                package = name if is_package(name, known) else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circle():
    known = modules()
    graph = {name: edges(name, path, known) for name, path in known.items()}
    assert cycles(graph) == []


def test_the_check_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("lazy", [True, False])
def test_lazy_imports_count(tmp_path, lazy):
    body = "def f():\n    import nsrl.b\n" if lazy else "import nsrl.b\n"
    (tmp_path / "a.py").write_text(body)
    known = {"nsrl.a": tmp_path / "a.py", "nsrl.b": tmp_path / "b.py"}
    assert edges("nsrl.a", known["nsrl.a"], known) == {"nsrl.b"}
