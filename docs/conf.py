"""Sphinx configuration of nsrl's documentation site.

Build (warnings are errors), from the repository root::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The pages are Markdown (MyST); the API reference is generated from the docstrings (autodoc,
autosummary, napoleon for the Google style).
"""

from __future__ import annotations

import re
import shutil
from importlib import import_module
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import inspect as sphinx_inspect
from sphinx.util import logging
from sphinx.util.typing import stringify_annotation

import nsrl

DOCS = Path(__file__).resolve().parent

project = "nsrl"
author = "the nsrl developers"
copyright = "2026, the nsrl developers, MIT license"  # noqa: A001 (Sphinx's name)
release = nsrl.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path: list[str] = []

# MyST: anchors for the `page.md#a-heading` links the pages use, `$...$` math.
myst_heading_anchors = 4
myst_enable_extensions = ["dollarmath", "colon_fence"]

# autodoc / autosummary / napoleon (Google docstrings).
# One page per public name, written to api/generated/ (ignored by git). The pages that hold an
# autosummary are named: autosummary looks for its directive only in the files it is given.
autosummary_generate = sorted(str(p.relative_to(DOCS)) for p in (DOCS / "api").glob("*.md"))
autosummary_imported_members = False
# The registry entries' nbytes and constraint fields default to plain functions, which autodoc
# would list as methods beside their entry under Attributes: documented there only.
autodoc_default_options = {"members": True, "show-inheritance": True,
                           "exclude-members": "nbytes, constraint"}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_preserve_defaults = True
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

# Type aliases: a parameter's type names the alias (linked to its entry) instead of the union or
# callable it stands for. Each alias of nsrl in a public signature is listed here, and has an
# entry `.. py:type:: NAME` with `:module: MODULE` on a page of api/, whose `:canonical:` line
# (what it stands for) `_alias_values` writes from the code; an alias listed here without an
# entry, or an entry naming no object, is a warning (an error under -W).
TYPE_ALIASES = {
    "AnyPolicy": "nsrl.policies.AnyPolicy",
    "Cells": "nsrl.model.gridworld.Cells",
    "Estimator": "nsrl.greedy.base.Estimator",
    "FeatureMap": "nsrl.policies.linear.FeatureMap",
    "OnSweep": "nsrl.experiments.execution.OnSweep",
    "Rho": "nsrl.greedy.base.Rho",
}
autodoc_type_aliases = {name: f"~{path}" for name, path in TYPE_ALIASES.items()}
# NumPy's: its name rather than the dozen private protocols it expands to (not linked: no
# NumPy inventory, see intersphinx below).
autodoc_type_aliases["npt.ArrayLike"] = "numpy.typing.ArrayLike"

# Sphinx 9.0 writes an alias inside a union (`AnyPolicy | None`) as
# "TypeAliasForwardRef('...') | None": its stringifier falls back on the repr. Patched only
# while that is so.
if stringify_annotation(sphinx_inspect.TypeAliasForwardRef("X") | None) != "X | None":
    sphinx_inspect.TypeAliasForwardRef.__repr__ = lambda self: self.name

# intersphinx, offline: the links go to the public sites, but each inventory is read from a file
# committed under _inventories/, never fetched (the build machines and CI reach no documentation
# site). Each file is the objects.inv of a Debian (bookworm) documentation package:
#   python.inv   python3.11-doc 3.11.2-6+deb12u8 (the dependency of python3-doc 3.11.2-1),
#                usr/share/doc/python3.11/html/objects.inv
#   scipy.inv    python-scipy-doc 1.10.1-2, usr/share/doc/python-scipy-doc/html/objects.inv
#   sklearn.inv  python-sklearn-doc 1.2.1+dfsg-1, usr/share/doc/python-sklearn-doc/html/objects.inv
# NumPy has none: Debian no longer packages NumPy's documentation (no python-numpy-doc in
# bookworm), so names of numpy stay unlinked. To refresh a file:
#   apt-get download python3.11-doc   # or python-scipy-doc, python-sklearn-doc
#   dpkg-deb -x python3.11-doc_*.deb x && cp x/usr/share/doc/python3.11/html/objects.inv \
#       docs/_inventories/python.inv
# then rebuild the site with -W and update the package versions above.
intersphinx_mapping = {
    "python": ("https://docs.python.org/3/", "_inventories/python.inv"),
    "scipy": ("https://docs.scipy.org/doc/scipy/", "_inventories/scipy.inv"),
    "sklearn": ("https://scikit-learn.org/stable/", "_inventories/sklearn.inv"),
}
intersphinx_timeout = 1  # a file path is never fetched; should one become a URL, fail fast

html_theme = "furo"
html_title = f"nsrl {release}"
html_static_path: list[str] = []

# Two pages of the study record (envs.md, pipelines.md) start at a level-2 heading, which MyST
# reports as a style warning; their headings are left as they are.
suppress_warnings = ["myst.header"]

# Links of the pages to repository files outside docs/ (`../benchmarks/results/x.txt`,
# `../nsrl/engine.py`): MyST makes a link to an existing file a download (the file is copied into
# the site, so a reader can open it); a link to a folder or to a path that is not there would be
# a missing cross-reference (an error under -W), so `OutsideLinks` shows it as the repository
# path in a code span instead.


class OutsideLinks(SphinxPostTransform):
    """Show a MyST link that leaves docs/ and names no file as the repository path, in code."""

    default_priority = 5  # before MyST's resolver (priority 9), which would warn

    def run(self, **kwargs) -> None:
        """Replace each such pending cross-reference by a literal naming the path."""
        src = Path(self.env.srcdir).resolve()
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get("reftype") != "myst" or node.get("refdomain"):
                continue
            target = node["reftarget"].split("#")[0]
            here = (src / node.get("refdoc", self.env.docname)).parent
            where = (here / target).resolve()
            if not target or where.is_relative_to(src):
                continue
            path = where.relative_to(src.parent).as_posix() if where.is_relative_to(src.parent) \
                else target
            node.replace_self(nodes.literal(path, path))


def _fresh_stubs(app) -> None:
    """Remove the stubs of an earlier build, so that a name no longer public leaves no page."""
    shutil.rmtree(DOCS / "api" / "generated", ignore_errors=True)


def _ungrouped() -> list[str]:
    """Names of ``nsrl.__all__`` that no page of api/ lists (tests/test_doc_code_blocks.py)."""
    listed = set()
    for page in (DOCS / "api").glob("*.md"):
        listed |= {line.strip() for line in page.read_text(encoding="utf-8").splitlines()}
    return sorted(set(nsrl.__all__) - listed)


def _list_ungrouped(app, docname, source) -> None:
    """Append the public names that no api/ page groups yet to the API index, so none is lost."""
    if docname != "api/index" or not _ungrouped():
        return
    kinds = {True: "autoclass", False: "autofunction"}
    lines = [f".. {kinds[isinstance(getattr(nsrl, n), type)]}:: {n}" for n in _ungrouped()]
    source[0] += ("\n## Other names\n\n```{eval-rst}\n.. currentmodule:: nsrl\n\n"
                  + "\n\n".join(lines) + "\n```\n")


def _cli_page(app, docname, source) -> None:
    """Write api/cli.md's sections: ``nsrl --help`` and each subcommand's, from the parser."""
    if docname != "api/cli":
        return
    import argparse

    from nsrl.cli import build_parser

    parser = build_parser()
    parser.prog = "nsrl"
    parts = ["\n## nsrl\n\n```text\n" + parser.format_help() + "```\n"]
    for action in parser._actions:  # argparse keeps its subcommands in this private list only
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                parts.append(f"\n## nsrl {name}\n\n```text\n{sub.format_help()}```\n")
    source[0] += "".join(parts)


_ALIAS_ENTRY = re.compile(r"^( *)\.\. py:type:: (\w+)\n\1   :module: ([\w.]+)\n", re.MULTILINE)


def _public_name(match: re.Match) -> str:
    """``~nsrl.policies.sequences.NonStationary`` as ``~nsrl.NonStationary`` when nsrl has it."""
    module, name = match.group(1).rsplit(".", 1)
    try:
        same = getattr(nsrl, name, None) is getattr(import_module(module), name)
    except ImportError:
        same = False
    return f"~nsrl.{name}" if same else match.group(0)


def _alias_values(app, docname, source) -> None:
    """Write each alias entry's ``:canonical:`` (what it stands for) from the live object."""
    if not docname.startswith("api/"):
        return

    def canonical(entry: re.Match) -> str:
        indent, name, module = entry.groups()
        try:
            value = getattr(import_module(module), name)
        except (ImportError, AttributeError):
            logging.getLogger(__name__).warning(
                f"{docname}: the type alias {module}.{name} is not in the code",
                location=docname)
            return entry.group(0)
        text = re.sub(r"\bnp\.", "~numpy.", stringify_annotation(value, "smart"))
        text = re.sub(r"~(nsrl(?:\.\w+)+)", _public_name, text)
        return f"{entry.group(0)}{indent}   :canonical: {text}\n"

    source[0] = _ALIAS_ENTRY.sub(canonical, source[0])


def _check_alias_entries(app) -> None:
    """Warn about an alias of TYPE_ALIASES that no page of api/ has an entry for."""
    entries = {f"{m}.{n}" for page in (DOCS / "api").glob("*.md")
               for _, n, m in _ALIAS_ENTRY.findall(page.read_text(encoding="utf-8"))}
    for path in sorted(set(TYPE_ALIASES.values()) - entries):
        logging.getLogger(__name__).warning(
            f"the type alias {path} (TYPE_ALIASES of docs/conf.py) has no `.. py:type::` "
            f"entry on a page of docs/api/")


def _skip_inherited_from_sklearn(app, what, name, obj, skip, options):
    """Leave out what an estimator inherits from scikit-learn (documented there, in its terms)."""
    module = getattr(obj, "__module__", None) or ""
    return True if module.startswith("sklearn") else None


def setup(app):
    """Register the handling of links to files outside docs/ and the removal of old stubs."""
    app.connect("builder-inited", _fresh_stubs, priority=100)  # before autosummary writes them
    app.add_post_transform(OutsideLinks)
    app.connect("source-read", _list_ungrouped)
    app.connect("source-read", _cli_page)
    app.connect("source-read", _alias_values)
    app.connect("builder-inited", _check_alias_entries)
    app.connect("autodoc-skip-member", _skip_inherited_from_sklearn)
    app.connect("env-get-outdated", lambda *args: ["api/index"])  # it depends on every api/ page
