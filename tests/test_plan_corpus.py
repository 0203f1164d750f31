"""`gen plan` against what Kubernetes does: a corpus of commits and their outcomes.

Each case in tests/plan-corpus/*.yaml starts from a base repository (bases/<name>/: policies
and the team's manifests, as a user writes them), optionally adjusted (`files`, `setup`),
renders and "commits" it, makes one commit (`commit`), and expects `gen plan --format json`
to give one object the line Kubernetes' own code gives it (`expect`). `source` names that
code (function, file, Kubernetes version) or the documentation that states it; `rule` ties
the case to a row of docs/rules.md's table of what `gen plan` models, and every row has a case
in each direction (`bites`): one where the change hurts (refused, Pods stop or restart, GPUs
needed) and one where the same rule lets it through.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "plan-corpus"
CASES: list[dict[str, Any]] = [
    case for path in sorted(CORPUS.glob("*.yaml")) for case in yaml.safe_load(path.read_text(encoding="utf-8"))
]
BITES = frozenset({"refused", "stop", "recreate"})


def _edit(root: Path, edit: dict[str, Any]) -> None:
    """One change to a file of the repository: `write` its whole text, or `replace` text that
    must be there (a replacement that matches nothing would make the case vacuous)."""
    path = root / edit["file"]
    if "write" in edit:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(edit["write"], encoding="utf-8")
        return
    text = path.read_text(encoding="utf-8")
    assert edit["replace"] in text, f"{edit['replace']!r} not in {edit['file']}"
    path.write_text(text.replace(edit["replace"], edit["with"]), encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_plan_corpus(gen, tmp_path: Path, case: dict[str, Any]) -> None:
    root = tmp_path / "repo"
    shutil.copytree(CORPUS / "bases" / case["base"], root)
    for rel, text in (case.get("files") or {}).items():
        _edit(root, {"file": rel, "write": text})
    for edit in case.get("setup") or []:
        _edit(root, edit)
    rendered = gen("render", root / "policies", "--out", root / "deploy")
    assert rendered.code == 0, rendered.err
    for edit in case["commit"]:
        _edit(root, edit)
    run = gen("plan", root / "policies", "--out", root / "deploy", "--format", "json")
    assert "Traceback" not in run.err
    changes = json.loads(run.out)
    assert run.code == (1 if any(c["action"] == "refused" for c in changes) else 0)
    expect = case["expect"]
    kind, _, where = expect["object"].partition(" ")
    namespace, _, name = where.rpartition("/")
    found = [c for c in changes if (c["kind"], c["namespace"] or "", c["name"]) == (kind, namespace, name)]
    if expect["action"] == "none":  # kube-apiserver stores the same object: no line
        assert found == []
        return
    (change,) = found
    assert change["action"] == expect["action"], change["reason"]
    for text in expect.get("reason") or []:
        assert text in change["reason"], change["reason"]
    for text in expect.get("not_reason") or []:
        assert text not in change["reason"], change["reason"]
    for key in ("pods", "gpus"):
        if key in expect:
            assert change[key] == expect[key], change


def _rules_table() -> dict[str, int]:
    """The rule IDs of docs/rules.md's table of plan verdicts, with their layer."""
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    section = text.split("### What `gen plan` models, layer by layer", 1)[1].split("\n#", 1)[0]
    return {rule: int(layer) for layer, rule in re.findall(r"^\| (\d) \| `([a-z0-9-]+)` \|", section, re.M)}


def test_every_rule_has_a_case_each_way_and_every_case_a_source() -> None:
    rules = _rules_table()
    assert len(CASES) >= 60 and len({case["id"] for case in CASES}) == len(CASES)
    assert {case["layer"] for case in CASES} == {1, 2, 3, 4}
    for case in CASES:
        assert case["rule"] in rules, f"{case['id']}: rule {case['rule']} is not in docs/rules.md"
        assert rules[case["rule"]] == case["layer"], case["id"]
        # the upstream code at its version, or the documentation that states the behaviour
        assert re.search(r"\.go\b.*\b1\.\d\d\b|docs", case.get("source", "")), f"{case['id']} cites no source"
        assert case["bites"] or case["expect"]["action"] not in BITES, case["id"]
    for rule in rules:
        bites = {case["bites"] for case in CASES if case["rule"] == rule}
        assert bites == {True, False}, f"{rule}: needs a case that bites and one that does not"
