"""schemas/kubernetes-api/field-checks/ is what scripts/derive_kubernetes_field_checks.py derives
from the installed kubernetes-validate data and enums.json, for every version gen validates:
regenerate with `python scripts/derive_kubernetes_field_checks.py` when either changes."""

from __future__ import annotations

import importlib.util
import json

import pytest

from generator.kube import api_versions
from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "derive_kubernetes_field_checks.py"
_spec = importlib.util.spec_from_file_location("derive_kubernetes_field_checks", SCRIPT)
assert _spec is not None and _spec.loader is not None
derive = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(derive)

VERSIONS = [api_versions.spell(v) for v in api_versions.shipped()]


def test_every_shipped_version_has_its_file() -> None:
    assert sorted(p.stem for p in derive.OUT.glob("*.json")) == sorted(VERSIONS)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_vendored_checks_are_what_the_data_derives(version: str) -> None:
    vendored = (derive.OUT / f"{version}.json").read_text()
    assert vendored == derive.text(version), f"run python {SCRIPT.relative_to(ROOT)}"


def test_a_recursive_definition_is_walked_at_every_depth() -> None:
    """The least fixpoint: a field under a definition that recurs is checked however deep."""
    data = json.loads((derive.OUT / "1.35.json").read_text())
    nodes = data["nodes"]
    root = nodes[data["kinds"]["v1/Pod"]]
    spec = nodes[root["p"]["spec"]]
    container = nodes[nodes[spec["p"]["containers"]]["i"]]
    assert "resources" in container["p"] and nodes[container["p"]["imagePullPolicy"]]["e"]
