"""``python -m study.numbers [--check] [--root DIR]``: render or check the generated blocks."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import study.numbers  # noqa: F401  (registers every renderer)
from study.numbers.render import check_pages, render_pages


def default_root() -> Path:
    """The repository holding this package when it has README.md and docs/, else the cwd."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / "README.md").is_file() and (here / "docs").is_dir() else Path.cwd()


def main(argv: list[str] | None = None) -> int:
    """Render every generated block (or, with ``--check``, report the stale ones)."""
    parser = argparse.ArgumentParser(prog="python -m study.numbers", description=__doc__)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 naming every stale or broken block")
    parser.add_argument("--root", type=Path, default=None,
                        help="the repository's root (default: the one holding nsrl)")
    args = parser.parse_args(argv)
    root = args.root or default_root()
    if not (root / "README.md").is_file():
        parser.error(f"--root {root} has no README.md; pass the repository's root folder")
    findings = check_pages(root) if args.check else render_pages(root)
    for finding in findings:
        print(finding, file=sys.stderr)
    if findings:
        what = "stale or broken blocks" if args.check else "broken blocks"
        print(f"{len(findings)} finding(s): {what}, or numbers typed in prose"
              + ("; run `python -m study.numbers` to regenerate" if args.check else ""),
              file=sys.stderr)
        return 1
    print("generated blocks: all current" if args.check else "generated blocks: rendered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
