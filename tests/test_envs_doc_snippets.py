"""The structured-domain example of docs/envs.md, run as written."""

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "envs.md"


def test_the_structured_domain_example_runs_as_written(capsys):
    text = DOC.read_text()
    section = text[text.index("### Structured domains"):text.index("### Tests")]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "docs/envs.md's structured-domain section has one python block"
    exec(compile(blocks[0], str(DOC), "exec"), {})
    assert float(capsys.readouterr().out) >= -110  # the optimal policy solves Gymnasium's task
