"""The installed package stands apart from the study: nsrl/ and envs/ never import study/ or
benchmarks/, and the doc-number renderers live outside the package.

import-linter's contract "the package never imports the study" covers ``study`` (a package);
benchmarks/ is a folder of scripts, not a package, so this test reads every module of the
package for an import of either, by statement or by name (``importlib.import_module``).
"""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STUDY = ("study", "benchmarks")


def _package_modules():
    return sorted([*(REPO / "nsrl").rglob("*.py"), *(REPO / "envs").rglob("*.py")])


def _imports(tree: ast.AST):
    """(line, name) of every module that ``tree`` imports or names to importlib."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and getattr(
                    node.func, "attr", getattr(node.func, "id", "")) in (
                    "import_module", "__import__"):
            yield node.lineno, node.args[0].value


def _study_imports(source: str, name: str = "<source>") -> list[str]:
    found = []
    for line, module in _imports(ast.parse(source, name)):
        if module.split(".")[0] in STUDY:
            found.append(f"{name}:{line}: imports {module}")
    return found


def test_no_module_of_the_package_imports_the_study_or_the_benchmarks():
    modules = _package_modules()
    assert len(modules) > 50  # the package's modules were found
    found = [f for p in modules for f in _study_imports(p.read_text(encoding="utf-8"),
                                                          str(p.relative_to(REPO)))]
    assert found == [], "\n".join(found)


def test_the_check_sees_every_form_of_import():
    source = ("import study.numbers\nfrom benchmarks import bench_sweep\n"
              "import importlib\nimportlib.import_module('study.sensitivity')\n"
              "__import__('benchmarks.study_rollouts')\nfrom nsrl.docs import x\n"
              "from .study import y\n")
    assert [f.split(": ")[1] for f in _study_imports(source)] == [
        "imports study.numbers", "imports benchmarks", "imports study.sensitivity",
        "imports benchmarks.study_rollouts"]


def test_the_renderers_are_outside_the_package():
    assert not (REPO / "nsrl" / "docs").exists()
    assert (REPO / "study" / "numbers" / "__main__.py").is_file()
