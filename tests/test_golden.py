"""Golden output: the bundled policies render exactly the reviewed tree in tests/golden/seed.

Regenerate after an intended change with `UPDATE_GOLDEN=1 pytest tests/test_golden.py` and
review the diff like any other change.
"""

from __future__ import annotations

import difflib
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import POLICIES, ROOT, tree

GOLDEN = ROOT / "tests" / "golden"
# (policy directory, golden tree): the bundled policies (the seed's scenario and real workloads), and
# the whole-stack example, whose output is committed beside it
CASES = [
    (POLICIES, GOLDEN / "seed"),
    (ROOT / "examples" / "whole-stack" / "policies", ROOT / "examples" / "whole-stack" / "deploy"),
]


@pytest.mark.parametrize(("policies", "golden"), CASES, ids=[golden.name for _, golden in CASES])
def test_rendered_tree_matches_golden(gen, tmp_path: Path, policies: Path, golden: Path) -> None:
    out = tmp_path / "deploy"
    run = gen("render", policies, "--out", out)
    assert run.code == 0, run.err
    if os.environ.get("UPDATE_GOLDEN"):
        shutil.rmtree(golden, ignore_errors=True)
        shutil.copytree(out, golden)
    actual, expected = tree(out), tree(golden)
    missing, extra = sorted(expected.keys() - actual.keys()), sorted(actual.keys() - expected.keys())
    diffs = [
        "".join(
            difflib.unified_diff(
                expected[k].decode().splitlines(True),
                actual[k].decode().splitlines(True),
                f"golden/{k}",
                f"rendered/{k}",
            )
        )
        for k in sorted(expected.keys() & actual.keys())
        if expected[k] != actual[k]
    ]
    assert not (missing or extra or diffs), f"missing: {missing}\nextra: {extra}\n" + "\n".join(diffs)


def test_optional_templates_name_a_field_of_their_kind() -> None:
    """A misspelt guard would silently drop an object from every render."""
    import json

    from generator import schemas
    from generator.render import templates as render

    for kind, templates in render.TEMPLATES.items():
        spec = json.loads((ROOT / "schemas" / schemas.policy_schema_file(kind)).read_text())["properties"]["spec"]
        for template in templates:
            field = render.WHEN_SPEC_HAS.get(template)
            assert field is None or field in spec["properties"], (template, field)
    assert set(render.WHEN_SPEC_HAS) <= {t for templates in render.TEMPLATES.values() for t in templates}
