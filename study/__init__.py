"""The study around nsrl: what renders the numbers of README.md and docs/ from committed results.

Never installed and never imported by the package (an import-linter contract and
tests/docs/test_study_apart.py say so); run from the repository's root, e.g.
``python -m study.numbers --check``.
"""
