"""Real tools on real output: kubectl kustomize, promtool, kubernetes-validate, upstream CRD schemas."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import POLICIES, ROOT, SHARED_CRDS, edit, tree

CRD_SCHEMAS = {
    "ServiceMonitor": "servicemonitor-monitoring-v1-strict.json",
    "PrometheusRule": "prometheusrule-monitoring-v1-strict.json",
    "Application": "application-argoproj-v1alpha1-strict.json",
    "Kustomization": "kustomization-kustomize-v1-strict.json",
    "PodGroup": "podgroup-scheduling-v1alpha1-strict.json",
}


def _gen(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        check=False,
    )


@pytest.fixture(scope="module")
def deploy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("e2e") / "deploy"
    result = _gen("render", POLICIES, "--out", out)
    assert result.returncode == 0, result.stderr
    return out


def _objects(directory: Path) -> list[dict]:
    return [
        yaml.safe_load(p.read_text())
        for p in sorted(directory.rglob("*.yaml"))
        if "integrations" not in p.parts and p.name != "kustomization.yaml"
    ]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_kubectl_kustomize_builds_every_directory(deploy: Path) -> None:
    for kustomization in deploy.rglob("kustomization.yaml"):
        directory = kustomization.parent
        built = subprocess.run(["kubectl", "kustomize", str(directory)], capture_output=True, text=True, check=False)
        assert built.returncode == 0, built.stderr
        docs = [d for d in yaml.safe_load_all(built.stdout) if d]
        assert len(docs) == len(yaml.safe_load(kustomization.read_text())["resources"]) == len(_objects(directory))


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_promtool_accepts_alert_rules(deploy: Path, tmp_path: Path) -> None:
    rules = [o for o in _objects(deploy) if o["kind"] == "PrometheusRule"]
    assert rules
    for rule in rules:
        path = tmp_path / f"{rule['metadata']['name']}.yaml"
        path.write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
        checked = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True, text=True, check=False)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_core_objects_pass_kubernetes_validate_strict(deploy: Path) -> None:
    import kubernetes_validate

    core = [o for o in _objects(deploy / "lab") if o["kind"] not in CRD_SCHEMAS]
    assert {o["kind"] for o in core} >= {
        "Deployment",
        "Pod",
        "HorizontalPodAutoscaler",
        "ConfigMap",
        "Service",
        "Namespace",
    }
    for obj in core:
        kubernetes_validate.validate(obj, "1.35", strict=True)


BUNDLED_CRDS = ROOT / "schemas" / "crds"


@pytest.mark.skipif(not SHARED_CRDS.is_dir(), reason="shared reference CRDs not present")
def test_bundled_crd_schemas_are_the_official_ones() -> None:
    """Copies of the reference set; the PodGroup schema is converted here (tests/test_bundled_crds.py)."""
    for path in sorted(BUNDLED_CRDS.glob("*.json")):
        if path.name != "podgroup-scheduling-v1alpha1-strict.json":
            assert path.read_bytes() == (SHARED_CRDS / path.name).read_bytes(), path.name


def test_custom_resources_pass_official_strict_crd_schemas(deploy: Path) -> None:
    """Checked with the official strict schemas (bundled copies, identical to the reference set)."""
    from jsonschema import Draft202012Validator

    seen = set()
    for obj in _objects(deploy):
        name = CRD_SCHEMAS.get(obj["kind"])
        if name is None or obj["apiVersion"].startswith("kustomize.config"):
            continue
        schema = json.loads((BUNDLED_CRDS / name).read_text())
        errors = list(Draft202012Validator(schema).iter_errors(obj))
        assert not errors, [e.message for e in errors]
        seen.add(obj["kind"])
    assert seen >= {"ServiceMonitor", "PrometheusRule", "Application", "PodGroup"}


def test_render_is_byte_identical_across_hash_seeds_and_file_layout(deploy: Path, tmp_path: Path) -> None:
    shuffled = tmp_path / "shuffled"
    shuffled.mkdir()
    # Rename and regroup the files: documents merged into one file in reverse order, plus subfolders.
    docs = [p.read_text() for p in sorted(POLICIES.glob("*.yaml"))]
    (shuffled / "all-in-one.yaml").write_text("\n---\n".join(reversed(docs[:4])))
    (shuffled / "nested").mkdir()
    for i, text in enumerate(docs[4:]):
        (shuffled / "nested" / f"z{i}-renamed.yml").write_text(text)
    other = tmp_path / "deploy"
    result = _gen("render", shuffled, "--out", other, env={"PYTHONHASHSEED": "12345", "LC_ALL": "C"})
    assert result.returncode == 0, result.stderr
    assert tree(other) == tree(deploy)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
def test_two_targets_with_versions_selectors_and_flux(tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    policies = tmp_path / "policies"
    shutil.copytree(POLICIES, policies)
    (policies / "staging.yaml").write_text(
        "apiVersion: gen/v1alpha1\nkind: Target\nmetadata:\n  name: staging\nspec:\n  kubernetesVersion: '1.29'\n"
        "  selector:\n    matchLabels: {env: staging}\n  gitops:\n    path: deploy/staging\n    flux:\n      sourceRef: {name: platform}\n"
    )
    cache = policies / "cache-app.yaml"
    edit(cache, "  name: cache-app\n", "  name: cache-app\n  labels: {env: staging}\n")
    out = tmp_path / "deploy"
    result = _gen("render", policies, "--out", out)
    assert result.returncode == 0, result.stderr
    staging = {p.relative_to(out / "staging").as_posix() for p in (out / "staging").rglob("*.yaml")}
    assert staging == {
        "kustomization.yaml",
        "_cluster/namespace-deletion-cost-lab.yaml",
        "deletion-cost-lab/deployment-cache-app.yaml",
        "deletion-cost-lab/horizontalpodautoscaler-cache-app.yaml",
    }
    for directory in (out / "lab", out / "staging", out / "_gitops" / "staging"):
        built = subprocess.run(["kubectl", "kustomize", str(directory)], capture_output=True, text=True, check=False)
        assert built.returncode == 0, built.stderr
    flux = yaml.safe_load((out / "_gitops/staging/kustomization-staging.yaml").read_text())
    assert flux["spec"]["path"] == "./deploy/staging"
    schema = json.loads((BUNDLED_CRDS / CRD_SCHEMAS["Kustomization"]).read_text())
    assert not list(Draft202012Validator(schema).iter_errors(flux))


def test_the_console_entry_exits_with_the_commands_code_and_its_output(tmp_path: Path) -> None:
    """`gen` ends without tearing the interpreter down: codes and buffered output must survive that."""
    version = _gen("--version")
    assert (version.returncode, version.stdout.startswith("gen ")) == (0, True)
    buffered = {"PYTHONUNBUFFERED": ""}  # stdout to a pipe is then block-buffered, as for most users
    missing = _gen("lint", tmp_path / "missing.yaml", "--format", "json", env=buffered)
    assert missing.returncode == 1 and json.loads(missing.stdout)[0]["rule"] == "file-missing"
    usage = _gen("render", "--no-such-flag")
    assert usage.returncode == 2 and "no-such-flag" in usage.stderr
