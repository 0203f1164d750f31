"""Security contexts and Pod Security admission (SPEC §12): gen's restricted defaults yield to what
a policy asks, combinations Kubernetes refuses are errors, and a namespace that enforces a level
refuses Pods below it, in `gen render` and `gen validate` alike."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from generator.kube import pod_security

AGENT = """\
apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata:
  name: node-agent
spec:
  namespace: agents
  image: ghcr.io/example/agent:1.0.0
"""
OWN_NAMESPACE = """\
apiVersion: gen/v1alpha1
kind: Target
metadata:
  name: ops
spec:
  createNamespaces: false
---
apiVersion: gen/v1alpha1
kind: Manifests
metadata:
  name: namespaces
spec:
  objects:
  - apiVersion: v1
    kind: Namespace
    metadata:
      name: agents
      labels: {pod-security.kubernetes.io/enforce: privileged}
"""


def _render(gen, tmp_path: Path, monkeypatch, **files: str):
    (tmp_path / "p").mkdir(exist_ok=True)
    for name, text in files.items():
        (tmp_path / "p" / f"{name}.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    return gen("render", "p", "--out", "out")


def _pod(tmp_path: Path, target: str = "ops") -> dict:
    return yaml.safe_load((tmp_path / "out" / target / "agents" / "deployment-node-agent.yaml").read_text())["spec"][
        "template"
    ]["spec"]


def test_a_privileged_container_gets_no_contradicting_default(gen, tmp_path: Path, monkeypatch) -> None:
    run = _render(gen, tmp_path, monkeypatch, agent=AGENT + "  securityContext: {privileged: true}\n", ns=OWN_NAMESPACE)
    assert run.code == 0, run.err
    ctx = _pod(tmp_path)["containers"][0]["securityContext"]
    assert ctx["privileged"] is True and "allowPrivilegeEscalation" not in ctx
    assert ctx["readOnlyRootFilesystem"] is True  # the other defaults stay
    assert " warning pod-security " in run.err  # accepted where the namespace allows it, still an opinion


def test_running_as_root_gets_no_run_as_non_root_anywhere(gen, tmp_path: Path, monkeypatch) -> None:
    policy = AGENT + "  pod:\n    securityContext: {runAsUser: 0}\n"
    run = _render(gen, tmp_path, monkeypatch, agent=policy, ns=OWN_NAMESPACE)
    assert run.code == 0, run.err
    pod = _pod(tmp_path)
    assert pod["securityContext"]["runAsUser"] == 0 and "runAsNonRoot" not in pod["securityContext"]
    assert "runAsNonRoot" not in pod["containers"][0]["securityContext"]
    container_root = AGENT + "  securityContext: {runAsUser: 0}\n"
    run = _render(gen, tmp_path, monkeypatch, agent=container_root, ns=OWN_NAMESPACE)
    assert run.code == 0, run.err
    pod = _pod(tmp_path)
    assert (
        "runAsNonRoot" not in pod["securityContext"] and "runAsNonRoot" not in pod["containers"][0]["securityContext"]
    )


@pytest.mark.parametrize(
    ("asked", "line"),
    [
        ("  securityContext: {privileged: true, allowPrivilegeEscalation: false}\n", 8),
        ("  securityContext: {capabilities: {add: [CAP_SYS_ADMIN]}, allowPrivilegeEscalation: false}\n", 8),
        ("  securityContext: {runAsUser: 0, runAsNonRoot: true}\n", 8),
    ],
    ids=["privileged", "sys-admin", "root-and-non-root"],
)
def test_a_combination_kubernetes_refuses_is_an_error_at_the_policy_line(
    gen, tmp_path: Path, monkeypatch, asked: str, line: int
) -> None:
    run = _render(gen, tmp_path, monkeypatch, agent=AGENT + asked, ns=OWN_NAMESPACE)
    assert run.code == 1
    assert f"p/agent.yaml:{line}:" in run.err and " error k8s-security-context " in run.err, run.err
    assert not (tmp_path / "out").exists()


def test_gens_restricted_namespace_refuses_a_privileged_workload(gen, tmp_path: Path, monkeypatch) -> None:
    run = _render(gen, tmp_path, monkeypatch, agent=AGENT + "  securityContext: {privileged: true}\n")
    assert run.code == 1
    assert "p/agent.yaml:8:" in run.err  # the securityContext line that asked for it
    assert 'namespace agents enforces Pod Security "restricted", which refuses these Pods (check privileged)' in run.err
    assert "set namespaces: {agents: {podSecurity: privileged}} on the Target" in run.err  # the one line to add
    assert _render(gen, tmp_path, monkeypatch, agent=AGENT).code == 0  # gen's defaults pass restricted


# ---- gen validate: the Namespace among the inputs decides ---------------------------------

NAMESPACE = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": "web", "labels": {"pod-security.kubernetes.io/enforce": "baseline"}},
}


def _deployment(**pod: object) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}], **pod},
            },
        },
    }


def _validate(gen, tmp_path: Path, *objects: dict):
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    return gen("validate", path)


def test_validate_refuses_pods_below_the_level_of_a_namespace_it_reads(gen, tmp_path: Path) -> None:
    run = _validate(gen, tmp_path, NAMESPACE, _deployment(hostNetwork=True))
    assert run.code == 1 and 'error pod-security namespace web enforces Pod Security "baseline"' in run.out
    assert "(check hostNamespaces): hostNetwork=true" in run.out
    # baseline does not ask for restricted's settings: a plain Deployment passes
    assert _validate(gen, tmp_path, NAMESPACE, _deployment()).code == 0


def test_without_the_namespace_host_access_stays_a_warning(gen, tmp_path: Path) -> None:
    run = _validate(gen, tmp_path, _deployment(hostNetwork=True))
    assert run.code == 0 and "warning pod-security Pod Security baseline check hostNamespaces" in run.out


def test_the_kubelets_root_refusal_is_an_error_in_validate_too(gen, tmp_path: Path) -> None:
    pod = {"securityContext": {"runAsNonRoot": True}}
    bad = _deployment(**pod)
    bad["spec"]["template"]["spec"]["containers"][0]["securityContext"] = {"runAsUser": 0}
    run = _validate(gen, tmp_path, bad)
    assert run.code == 1 and " k8s-security-context " in run.out
    bad["spec"]["template"]["spec"]["containers"][0]["securityContext"] = {"runAsUser": 1000}
    assert _validate(gen, tmp_path, bad).code == 0


# ---- the checks themselves, one by one -------------------------------------------------------

RESTRICTED_OK = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [
        {
            "name": "c",
            "image": "a:1",
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        }
    ],
}


def _with(path: tuple, value: object) -> dict:
    import copy

    spec = copy.deepcopy(RESTRICTED_OK)
    node: dict = spec
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return spec


CHECKS = [
    ("hostNamespaces", "baseline", ("hostPID",), True),
    ("privileged", "baseline", ("containers", 0, "securityContext", "privileged"), True),
    ("capabilities_baseline", "baseline", ("containers", 0, "securityContext", "capabilities", "add"), ["SYS_ADMIN"]),
    ("hostPathVolumes", "baseline", ("volumes",), [{"name": "h", "hostPath": {"path": "/"}}]),
    ("hostPorts", "baseline", ("containers", 0, "ports"), [{"containerPort": 80, "hostPort": 80}]),
    ("sysctls", "baseline", ("securityContext", "sysctls"), [{"name": "kernel.msgmax", "value": "1"}]),
    ("seLinuxOptions", "baseline", ("securityContext", "seLinuxOptions"), {"type": "spc_t"}),
    ("procMount", "baseline", ("containers", 0, "securityContext", "procMount"), "Unmasked"),
    ("seccompProfile_baseline", "baseline", ("securityContext", "seccompProfile"), {"type": "Unconfined"}),
    ("restrictedVolumes", "restricted", ("volumes",), [{"name": "n", "nfs": {"server": "s", "path": "/"}}]),
    ("allowPrivilegeEscalation", "restricted", ("containers", 0, "securityContext", "allowPrivilegeEscalation"), True),
    ("runAsNonRoot", "restricted", ("securityContext", "runAsNonRoot"), False),
    ("runAsUser", "restricted", ("securityContext", "runAsUser"), 0),
    ("capabilities_restricted", "restricted", ("containers", 0, "securityContext", "capabilities", "add"), ["CHOWN"]),
]


@pytest.mark.parametrize(("check", "level", "path", "value"), CHECKS, ids=[c[0] for c in CHECKS])
def test_each_check_fails_and_passes(check: str, level: str, path: tuple, value: object) -> None:
    assert pod_security.pod_violations(RESTRICTED_OK, {}, ()) == []
    found = pod_security.pod_violations(_with(path, value), {}, ())
    assert (check, level) in {(v.check, v.level) for v in found}, found
