"""The cost writer's ValidatingAdmissionPolicy, evaluated with a CEL interpreter on concrete Pod updates.

RBAC's `patch pods` reaches every Pod of the namespace and every field; the policy must narrow
it to the deletion-cost annotation. These tests run the rendered CEL, not a restatement of it.
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import celpy
import pytest
import yaml

from generator.problems import has_errors
from tests.conftest import POLICIES

WRITER = "system:serviceaccount:deletion-cost-lab:cost-writer"
COST = "controller.kubernetes.io/pod-deletion-cost"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from generator import pipeline
    from generator.render import write

    policies = tmp_path_factory.mktemp("in") / "policies"
    shutil.copytree(POLICIES, policies)
    app = policies / "cache-app.yaml"
    app.write_text(app.read_text() + "  costWriter:\n    serviceAccount: cost-writer\n")
    out = tmp_path_factory.mktemp("out") / "deploy"
    result = pipeline.render(pipeline.RenderOptions(policies, out))
    assert not has_errors(result.problems), result.problems
    write.write_all(out, result.plans)
    return out / "lab"


@pytest.fixture(scope="module")
def policy(rendered: Path) -> dict[str, Any]:
    path = rendered / "_cluster/validatingadmissionpolicy-deletion-cost-lab-cache-app-deletion-cost-writer.yaml"
    return yaml.safe_load(path.read_text())


def _run(expression: str, activation: dict[str, Any]) -> bool:
    env = celpy.Environment()
    program = env.program(env.compile(expression))
    return bool(program.evaluate({k: celpy.json_to_cel(v) for k, v in activation.items()}))


def admitted(
    policy: dict[str, Any], old: dict[str, Any], new: dict[str, Any], user: str = WRITER, sub: str = ""
) -> bool:
    """What the API server decides: not matched -> allowed; matched -> every validation must hold."""
    request = {"userInfo": {"username": user}, "subResource": sub, "operation": "UPDATE"}
    activation = {"object": new, "oldObject": old, "request": request}
    spec = policy["spec"]
    if not all(_run(c["expression"], activation) for c in spec["matchConditions"]):
        return True
    return all(_run(v["expression"], activation) for v in spec["validations"])


POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "cache-app-7d9f-abcde",
        "namespace": "deletion-cost-lab",
        "uid": "0f6b9c1e",
        "labels": {"app": "cache-app", "pod-template-hash": "7d9f"},
        "annotations": {COST: "0", "kubectl.kubernetes.io/restartedAt": "2026-12-01T00:00:00Z"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "cache-app-7d9f", "uid": "r1"}],
    },
    "spec": {"containers": [{"name": "cache-app", "image": "registry.example.com/cache-app"}]},
}


def changed(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    pod = copy.deepcopy(POD)
    node = pod
    for key in path[:-1]:
        node = node.setdefault(key, {})
    if value is None:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    return pod


def test_the_writer_may_set_the_cost(policy: dict[str, Any]) -> None:
    assert admitted(policy, POD, changed(("metadata", "annotations", COST), "500"))


def test_the_writer_may_add_the_cost_to_a_pod_without_annotations(policy: dict[str, Any]) -> None:
    bare = changed(("metadata", "annotations"), None)
    assert admitted(policy, bare, changed(("metadata", "annotations"), {COST: "100"}))


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("metadata", "annotations", "kubectl.kubernetes.io/restartedAt"), "2026-12-02T00:00:00Z"),
        (("metadata", "annotations", "kubectl.kubernetes.io/restartedAt"), None),
        (("metadata", "annotations", "example.com/new"), "x"),
        (("metadata", "labels", "app"), "other"),
        (("metadata", "labels"), None),
        (("metadata", "ownerReferences"), []),
        (("metadata", "finalizers"), ["example.com/hold"]),
        (("spec", "activeDeadlineSeconds"), 1),
        (("spec", "containers"), [{"name": "cache-app", "image": "attacker/image"}]),
    ],
)
def test_the_writer_may_change_nothing_else(policy: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    assert not admitted(policy, POD, changed(path, value))
    assert admitted(policy, POD, changed(path, value), user="system:serviceaccount:deletion-cost-lab:deployer")


def test_the_writer_may_not_touch_subresources(policy: dict[str, Any]) -> None:
    assert not admitted(policy, POD, POD, sub="ephemeralcontainers")
    assert not admitted(policy, POD, POD, sub="status")


def test_the_policy_is_bound_and_scoped(policy: dict[str, Any], rendered: Path) -> None:
    binding = yaml.safe_load(
        (
            rendered / "_cluster/validatingadmissionpolicybinding-deletion-cost-lab-cache-app-deletion-cost-writer.yaml"
        ).read_text()
    )
    assert binding["spec"] == {"policyName": policy["metadata"]["name"], "validationActions": ["Deny"]}
    constraints = policy["spec"]["matchConstraints"]
    assert constraints["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": "deletion-cost-lab"}}
    assert policy["spec"]["failurePolicy"] == "Fail"
    role = yaml.safe_load((rendered / "deletion-cost-lab/role-cache-app-deletion-cost-writer.yaml").read_text())
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "patch"]}]


def test_cost_writer_objects_pass_strict_validation_and_semantic_checks(rendered: Path) -> None:
    import kubernetes_validate

    from generator.kube.validate import ManifestValidator

    validator = ManifestValidator(("1.35",), [])
    paths = sorted(rendered.rglob("*deletion-cost-writer*.yaml")) + sorted(
        rendered.rglob("serviceaccount-cost-writer.yaml")
    )
    kinds = set()
    for path in paths:
        obj = yaml.safe_load(path.read_text())
        kinds.add(obj["kind"])
        kubernetes_validate.validate(obj, "1.35", strict=True)
        assert [f for f in validator.validate(obj) if f.severity > 0] == []
    assert kinds == {
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    }
