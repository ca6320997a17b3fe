"""Numbers typed in a results page's prose: derived numbers belong inside generated markers.

A results page (:data:`RESULTS_PAGES`) quotes what the committed result files hold; a figure
typed by hand between the markers goes stale without anyone noticing. So the check reads the
page's prose (what is left once fenced code, inline code, link targets, HTML comments and every
generated block and inline value are blanked out) and flags each *measured-looking* number:
one with a decimal point (``19.44``) or a unit of measure (``80 MB``, ``14 min``, ``86%``,
``5x``), unless it is

* a definition on :data:`DEFINITIONS`: a setting, a threshold or a parameter that the page
  states rather than measures (``gamma = 0.99``, ``API(0.1)``, ``noise 10%``), each with why;
* or a reading the page itself says was not kept, pinned phrase by phrase in :data:`UNKEPT`
  (no result file holds it, so it cannot be generated; an edit to it no longer matches its
  phrase and is flagged like any other number).

Whole numbers without a unit (counts of instances, MDPs, runs, section and equation numbers,
years) are definitions far more often than results and are not flagged.

Example:
    >>> [f.number for f in prose_numbers("It took 14 min; gamma = 0.99, <!-- gen: x -->1.5"
    ...                                  "<!-- /gen --> s.")]
    ['14 min']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The pages that report results read from committed files (README.md, the user guides and the
# design notes state settings and examples, and are not checked).
RESULTS_PAGES = ("docs/reproduce.md", "docs/performance.md", "docs/sampled.md",
                 "docs/sampling.md", "docs/rollout_study.md", "docs/sb3.md", "docs/benchmarks.md",
                 "docs/bounds.md")

# Each entry: a pattern of text that defines rather than measures, and why.
DEFINITIONS: tuple[tuple[str, str], ...] = (
    (r"\bgamma = \d\.\d+", "the discount factor of a setting"),
    (r"\b(?:API|CPI|NSPI|PSDP|CPI\+)\(\d+(?:\.\d+)?\)", "a scheme's name with its parameter"),
    (r"\b(?:epsilon|alpha|rho|iota|eta|p|tol|H|m|k) (?:=|<=|>=|<|>) \d+(?:\.\d+)?(?: ?%)?",
     "a parameter or a threshold set to a value"),
    (r"\b(?:noise|within|at|close|tolerance of) \d+(?:\.\d+)?%",
     "a criterion or a noise level that the protocol defines"),
    (r"\(\d\.\d+\) for rho|\bexplore \d\.\d+", "the exploration of a sampling distribution"),
    (r"\b\d+% noise\b|\bnoise \d+\.\d+\b", "the noise level of an operator"),
    (r"\bgamma in \{\d\.\d+(?:, \d\.\d+)*\}", "the discount factors a test or a sweep runs"),
    (r"\bat most \d+%", "a bound a decision sets"),
    (r"\bexploration over the first\s+\d+%", "a learner's hyperparameter"),
    (r"\bbelow \d+(?:\.\d+)?\b", "a threshold that a result is compared with"),
    (r"\btarget (?:<=|of) \d+(?:\.\d+)? ?s\b", "a speed target set before measuring"),
    (r"\bevery \d+ s\b|\bwithin \d+ s\b", "a period or a timeout of the runner"),
)

# Readings quoted where they were taken and never kept in a file, as (page, exact phrase).
UNKEPT: tuple[tuple[str, str], ...] = ()

_BLANKED = [
    re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL),  # fenced code
    re.compile(r"<!-- BEGIN generated: ([\w.-]+) -->\n.*?<!-- END generated: \1 -->",
               re.DOTALL),
    re.compile(r"<!-- gen: [\w.-]+ -->[^\n]*?<!-- /gen -->"),
    re.compile(r"<!--.*?-->", re.DOTALL),  # other comments
    re.compile(r"(`+)[^`]*?\1"),  # inline code
    re.compile(r"\]\([^)]*\)"),  # link targets
]
_UNIT = r"(?: ?(?:%|ms|s|min|h|[KMGT]i?B|M|k)\b|x\b|%)"
NUMBER_RE = re.compile(
    r"(?<![\w.^/])(?<![A-Za-z_^]-)"  # not inside a word, a path or an exponent
    r"(?P<n>\d+(?:\.\d+)?(?: \d{3})*)(?P<u>" + _UNIT + r")?"
    r"(?![\w.]?\d|e-?\d|\^)")  # not in scientific notation, not a power's base


@dataclass(frozen=True)
class ProseNumber:
    """A number found in a page's prose: its line and the text flagged."""

    line: int
    number: str


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match[0])


def prose(text: str, definitions: bool = True) -> str:
    """``text`` with every part that is not prose (and, by default, every definition) blanked.

    Blanking keeps every character's line and column, so a finding names its line.
    """
    for pattern in _BLANKED:
        text = pattern.sub(_blank, text)
    if definitions:
        for pattern, _ in DEFINITIONS:
            text = re.sub(pattern, _blank, text)
    return text


def prose_numbers(text: str, page: str = "") -> list[ProseNumber]:
    """Every measured-looking number of ``text``'s prose that no entry allows."""
    text = prose(text)
    for where, phrase in UNKEPT:
        if where == page:
            text = text.replace(phrase, re.sub(r"\S", " ", phrase))
    found = []
    for match in NUMBER_RE.finditer(text):
        if "." in match["n"] or match["u"]:
            found.append(ProseNumber(text.count("\n", 0, match.start()) + 1, match[0].strip()))
    return found
