"""A Pod spec's own fields where a Pod and a pod template part ways: kube-apiserver prepares a
Pod before it validates it (its labels merged into selectors by matchLabelKeys, its AppArmor
annotations copied to fields), never a template; and a PodTemplate's template is validated as
any other. The sites themselves are tests/apiserver-sites/Pod.spec.yaml's."""

from __future__ import annotations

from pathlib import Path

import yaml

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web"}},
    "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1.0"}]},
}


def _deployment(pod: dict) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {k: v for k, v in pod["metadata"].items() if k in ("labels", "annotations")},
                "spec": pod["spec"],
            },
        },
    }


def _pod(**spec: object) -> dict:
    return POD | {"spec": POD["spec"] | spec}


def _write(tmp_path: Path, obj: dict) -> Path:
    path = tmp_path / f"{obj['kind'].lower()}.yaml"
    path.write_text(yaml.safe_dump(obj))
    return path


SPREAD = {
    "topologySpreadConstraints": [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
            "matchLabelKeys": ["app"],
        }
    ]
}


def test_a_pods_labels_merged_by_match_label_keys_name_the_key_twice(gen, tmp_path: Path) -> None:
    refused = gen("validate", _write(tmp_path, _pod(**SPREAD)))
    assert refused.code == 1 and "exists in both matchLabelKeys and labelSelector" in refused.out
    assert " k8s-topology-spread " in refused.out


def test_a_templates_selector_is_validated_as_written(gen, tmp_path: Path) -> None:
    accepted = gen("validate", _write(tmp_path, _deployment(_pod(**SPREAD))))
    assert "exists in both" not in accepted.out, accepted.out


APPARMOR = {
    "metadata": POD["metadata"]
    | {"annotations": {"container.apparmor.security.beta.kubernetes.io/app": "runtime/default"}},
}


def test_a_pods_apparmor_annotation_fills_a_container_without_a_profile(gen, tmp_path: Path) -> None:
    pod = _pod(securityContext={"appArmorProfile": {"type": "Unconfined"}}) | APPARMOR
    assert " k8s-apparmor " not in gen("validate", _write(tmp_path, pod)).out


def test_a_templates_apparmor_annotation_must_match_the_pods_profile(gen, tmp_path: Path) -> None:
    pod = _pod(securityContext={"appArmorProfile": {"type": "Unconfined"}}) | APPARMOR
    refused = gen("validate", _write(tmp_path, _deployment(pod)))
    assert refused.code == 1 and "AppArmor type in annotation and field must match" in refused.out


def test_a_pod_templates_template_is_validated(gen, tmp_path: Path) -> None:
    template = {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": "web", "namespace": "ns"},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": POD["spec"] | {"hostname": "Web_0"}},
    }
    refused = gen("validate", _write(tmp_path, template))
    assert refused.code == 1 and 'error k8s-name hostname "Web_0" must be a DNS-1123 label' in refused.out
    template["template"]["spec"]["hostname"] = "web-0"
    assert gen("validate", _write(tmp_path, template)).code == 0


def test_the_tolerations_annotation_is_read_as_go_decodes_it(gen, tmp_path: Path) -> None:
    annotated = POD | {
        "metadata": POD["metadata"]
        | {"annotations": {"scheduler.alpha.kubernetes.io/tolerations": '[{"Key": "gpu", "Operator": "Exists"}]'}}
    }
    assert gen("validate", _write(tmp_path, annotated)).code == 0
    annotated["metadata"]["annotations"]["scheduler.alpha.kubernetes.io/tolerations"] = '[{"key": 5}]'
    refused = gen("validate", _write(tmp_path, annotated))
    assert refused.code == 1 and "not a JSON list of tolerations" in refused.out
