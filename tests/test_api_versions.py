"""Which apiVersions each Kubernetes version serves: derived from kubernetes-validate's schema
folders (built-in APIs) and kube-scheduler's source (its configuration file), checked through
`gen validate -k … -k …`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from generator.kube.api_versions import removals, spell

ROOT = Path(__file__).resolve().parent.parent
REMOVALS = removals()
TABLE = ROOT / "docs" / "api-removals.md"


def _write(tmp_path: Path, obj: dict, name: str = "m.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(obj))
    return path


def _findings(run) -> list[dict]:
    return json.loads(run.out) if run.out.strip() else []


def test_the_table_holds_the_removals_everyone_upgrading_meets() -> None:
    rows = {(api, kind): (spell(last), spell(gone)) for api, kind, last, gone in REMOVALS}
    assert rows[("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema")] == ("1.31", "1.32")
    assert rows[("autoscaling/v2beta2", "HorizontalPodAutoscaler")] == ("1.25", "1.26")
    assert rows[("storage.k8s.io/v1beta1", "CSIStorageCapacity")] == ("1.26", "1.27")
    assert len(REMOVALS) > 30


@pytest.mark.parametrize(("api", "kind", "last", "gone"), REMOVALS, ids=[f"{a} {k}" for a, k, _, _ in REMOVALS])
def test_each_removed_api_is_served_until_its_removal_and_refused_after(gen, tmp_path, api, kind, last, gone) -> None:
    path = _write(tmp_path, {"apiVersion": api, "kind": kind, "metadata": {"name": "x"}})
    run = gen("validate", "--format", "json", "-k", spell(last), "-k", spell(gone), path)
    refused = [f for f in _findings(run) if f["rule"] == "k8s-api-version"]
    assert len(refused) == 1, run.out
    assert refused[0]["message"].endswith(f"Kubernetes {spell(gone)} removed it (for Kubernetes {spell(gone)})")
    assert refused[0]["line"] == 1 and run.code == 1


def test_flowschema_v1beta3_is_an_error_for_1_35_only_naming_its_replacement(gen, tmp_path) -> None:
    path = _write(
        tmp_path,
        {
            "apiVersion": "flowcontrol.apiserver.k8s.io/v1beta3",
            "kind": "FlowSchema",
            "metadata": {"name": "fs"},
            "spec": {"priorityLevelConfiguration": {"name": "workload-low"}, "matchingPrecedence": 1000},
        },
    )
    run = gen("validate", "-k", "1.31", "-k", "1.35", path)
    assert run.code == 1
    lines = run.out.strip().splitlines()
    assert len(lines) == 1, run.out
    assert "error k8s-api-version" in lines[0] and "(for Kubernetes 1.35)" in lines[0]
    assert "flowcontrol.apiserver.k8s.io/v1" in lines[0] and "1.31" not in lines[0]
    assert gen("validate", "-k", "1.31", path).code == 0


@pytest.mark.parametrize(
    ("api", "kind", "replacement"),
    [
        ("batch/v1beta1", "CronJob", "batch/v1"),
        ("policy/v1beta1", "PodDisruptionBudget", "policy/v1"),
        ("extensions/v1beta1", "Ingress", "networking.k8s.io/v1"),
        ("rbac.authorization.k8s.io/v1beta1", "ClusterRole", "rbac.authorization.k8s.io/v1"),
    ],
)
def test_apis_removed_before_the_oldest_data_are_refused_with_their_replacement(
    gen, tmp_path, api, kind, replacement
) -> None:
    run = gen("validate", _write(tmp_path, {"apiVersion": api, "kind": kind, "metadata": {"name": "x"}}))
    assert run.code == 1 and " k8s-api-version " in run.out and f"use {replacement})" in run.out, run.out


def test_an_api_newer_than_the_version_is_refused_naming_when_it_arrives(gen, tmp_path) -> None:
    path = _write(
        tmp_path, {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "g"}, "spec": {}}
    )
    run = gen("validate", "-k", "1.31", path)
    assert run.code == 1 and "Kubernetes 1.34 adds it" in run.out and "use resource.k8s.io/v1alpha3" in run.out
    assert gen("validate", "-k", "1.34", path).code == 0


def test_a_misspelt_kind_in_a_builtin_group_is_an_error_and_a_crd_a_warning(gen, tmp_path) -> None:
    typo = _write(tmp_path, {"apiVersion": "apps/v1", "kind": "Deploymnet", "metadata": {"name": "d"}}, "t.yaml")
    assert gen("validate", typo).code == 1
    crd = {"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus", "metadata": {"name": "p"}}
    run = gen("validate", _write(tmp_path, crd, "p.yaml"))
    assert run.code == 0 and "warning k8s-unknown-kind" in run.out
    # a CRD group whose first label matches a built-in group's is still a CRD, not that group's kind
    lookalike = crd | {"apiVersion": "flowcontrol.example.com/v1beta3", "kind": "FlowSchema"}
    run = gen("validate", _write(tmp_path, lookalike, "l.yaml"))
    assert run.code == 0 and "warning k8s-unknown-kind" in run.out


SCHEDULER_V1BETA3 = {
    "apiVersion": "kubescheduler.config.k8s.io/v1beta3",
    "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"resourceName": "s", "resourceNamespace": "kube-system"},
    "profiles": [{"schedulerName": "s"}],
}


def test_scheduler_config_v1beta3_is_one_error_for_1_35_standalone_and_in_a_configmap(gen, tmp_path) -> None:
    _write(tmp_path, SCHEDULER_V1BETA3, "standalone.yaml")
    embedded = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "sched", "namespace": "kube-system"},
        "data": {"config.yaml": yaml.safe_dump(SCHEDULER_V1BETA3)},
    }
    _write(tmp_path, embedded, "embedded.yaml")
    run = gen("validate", "--format", "json", "-k", "1.35", tmp_path)
    found = _findings(run)
    assert [(Path(f["file"]).name, f["rule"], f["severity"]) for f in found] == [
        ("embedded.yaml", "k8s-api-version", "error"),
        ("standalone.yaml", "k8s-api-version", "error"),
    ], run.out
    assert all("Kubernetes 1.29 removed it" in f["message"] for f in found)
    # 1.28's kube-scheduler still reads it: gen has no v1beta3 schema, and says so
    old = _findings(gen("validate", "--format", "json", "-k", "1.28", tmp_path))
    assert {f["rule"] for f in old} == {"k8s-unknown-kind"}


def test_removal_table_document_is_current() -> None:
    lines = [
        "# API removals\n",
        "Built-in apiVersions that a Kubernetes version stopped serving, derived from the schema data",
        "kubernetes-validate ships for each version (1.25 on). `gen validate` refuses each of them from",
        "the version that removed it, naming what replaces it. APIs removed before 1.25 (such as",
        "`batch/v1beta1` CronJob, `policy/v1beta1`, `extensions/v1beta1`) and kube-scheduler's",
        "configuration versions (v1beta1 until 1.22, v1beta2 until 1.27, v1beta3 until 1.28) are refused",
        "too. Regenerate with `UPDATE_DOCS=1 pytest tests/test_api_versions.py`.\n",
        "| apiVersion | kind | last served in | removed in |",
        "|---|---|---|---|",
        *(f"| {api} | {kind} | {spell(last)} | {spell(gone)} |" for api, kind, last, gone in REMOVALS),
    ]
    text = "\n".join(lines) + "\n"
    if os.environ.get("UPDATE_DOCS"):
        TABLE.write_text(text)
    assert TABLE.read_text() == text, "run UPDATE_DOCS=1 pytest tests/test_api_versions.py"


@pytest.mark.parametrize(
    ("config_version", "last", "gone"),
    [("v1beta2", "1.27", "1.28"), ("v1beta3", "1.28", "1.29"), ("v1beta1", None, "1.25")],
)
def test_scheduler_config_versions_follow_kube_scheduler(gen, tmp_path, config_version, last, gone) -> None:
    path = _write(tmp_path, SCHEDULER_V1BETA3 | {"apiVersion": f"kubescheduler.config.k8s.io/{config_version}"})
    assert " k8s-api-version " in gen("validate", "-k", gone, path).out
    if last:
        assert " k8s-api-version " not in gen("validate", "-k", last, path).out


def test_a_target_validates_its_output_for_its_upgrade_too(gen, tmp_path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    for source in (ROOT / "policies").glob("*.yaml"):
        text = source.read_text()
        if source.name == "target.yaml":
            text = text.replace('kubernetesVersion: "1.35"', 'kubernetesVersion: "1.35"\n  upgradeTo: "1.36"')
            assert "upgradeTo" in text
        (policies / source.name).write_text(text)
    assert gen("render", policies, "--out", tmp_path / "deploy").code == 0
