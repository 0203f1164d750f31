"""`gen validate` on manifests shaped like what widely deployed projects ship: no errors on
what Kubernetes accepts (opinions stay warnings), and each invalid counterpart caught by the
rule its header names, at a line of its own document."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "realworld"
# the out-of-tree plugins the scheduler-plugins install compiles in, declared as a user would
PLUGINS = ("Coscheduling", "CapacityScheduling", "NodeResourceTopologyMatch", "NodeResourcesAllocatable")
INVALID = sorted((HERE / "invalid").glob("*.yaml"))


def _plugin_args() -> list[str]:
    return [arg for plugin in PLUGINS for arg in ("--plugin", plugin)]


@pytest.mark.parametrize("version", ["1.31", "1.35", "1.37"])
def test_real_world_manifests_have_no_errors(gen, version: str) -> None:
    run = gen("validate", "--format", "json", "-k", version, *_plugin_args(), HERE / "valid")
    findings = json.loads(run.out)
    assert run.code == 0, run.out
    assert [f for f in findings if f["severity"] == "error"] == []
    # the opinions are there, as warnings: Secret data and skipped TLS verification
    assert {f["rule"] for f in findings} == {"secret-material", "insecure-tls"}
    assert gen("validate", "--strict", *_plugin_args(), HERE / "valid").code == 1


@pytest.mark.parametrize("path", INVALID, ids=[p.stem for p in INVALID])
def test_invalid_counterparts_are_caught(gen, path: Path) -> None:
    expected = re.search(r"^# expect: ([a-z0-9-]+)", path.read_text(), re.M)
    assert expected, f"{path.name} names the rule it expects"
    run = gen("validate", "--format", "json", path)
    findings = json.loads(run.out)
    assert run.code == 1
    assert [f["rule"] for f in findings if f["severity"] == "error"] == [expected[1]], run.out
    assert all(f["line"] > 1 for f in findings)  # located inside the document, not at its top


def test_helm_charts_are_left_out_with_a_note(gen, tmp_path: Path) -> None:
    """A repository's charts hold templates and values, not manifests: validating the whole
    repository must not cry wolf on them."""
    chart = tmp_path / "charts" / "web"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: web\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("replicaCount: 1\n")
    (chart / "templates" / "deployment.yaml").write_text("kind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n")
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: 1\n")
    run = gen("validate", "--format", "json", tmp_path)
    findings = json.loads(run.out)
    assert [(Path(f["file"]).name, f["rule"], f["severity"]) for f in findings] == [
        ("Chart.yaml", "helm-chart", "info"),
        ("cm.yaml", "k8s-schema", "error"),  # the manifest beside the chart is still judged
    ]
