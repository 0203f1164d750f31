"""gen validate judges what Flux, kustomize and SOPS hand to the cluster, not only the bytes in
Git: a clean source is clean, and a planted mistake in it is still caught at its source line.
Through the real entry point."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.kube import kustomize, sources


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def findings(out: str) -> list[tuple[str, str]]:
    """(file:line, rule) of each finding line."""
    return [(":".join(line.split(":")[:2]), line.split()[2]) for line in out.splitlines() if line.count(":") >= 3]


def test_a_file_named_twice_is_judged_once(gen, repo: Path) -> None:
    """`gen validate apps/cm.yaml ./apps/cm.yaml apps`: one file, one finding, counted once."""
    write(repo / "apps/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Web}\n")
    run = gen("validate", "apps/cm.yaml", "./apps/cm.yaml", "apps")
    assert findings(run.out) == [("apps/cm.yaml:3", "k8s-name")], run.out
    assert "1 file validated" in run.err, run.err


# -- not manifests


def test_yaml_without_apiversion_and_kind_is_skipped_like_json(gen, repo: Path) -> None:
    write(repo / "ansible/site.yml", "- hosts: all\n  tasks: []\n")
    write(repo / "talos/node.yaml", "machine:\n  type: controlplane\n")
    write(repo / "app/config.json", '{"port": 8080}\n')
    write(repo / "apps/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n")
    run = gen("validate", ".")
    assert run.code == 0 and run.out == "", run.out
    assert "1 file validated" in run.err and "3 skipped" in run.err


TALOS_VOLUMES = """apiVersion: v1alpha1
kind: VolumeConfig
name: EPHEMERAL
provisioning:
  maxSize: 100GiB
---
apiVersion: v1alpha1
kind: RawVolumeConfig
name: local-hostpath
provisioning:
  diskSelector:
    match: disk.transport == "nvme"
"""


def test_another_tools_api_is_skipped_but_a_kubernetes_kind_at_no_kubernetes_version_is_not(gen, repo: Path) -> None:
    """Talos' documents name an apiVersion no Kubernetes serves and kinds Kubernetes has not:
    another tool's, never sent to a cluster. A ConfigMap at such a version is a mistake."""
    write(repo / "talos/all/62-volumes.yaml", TALOS_VOLUMES)
    write(repo / "apps/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n")
    run = gen("validate", ".")
    assert run.code == 0 and run.out == "", run.out
    assert "1 file validated" in run.err and "1 skipped" in run.err and "other tools' APIs" in run.err
    write(repo / "apps/cm.yaml", "apiVersion: v1beta1\nkind: ConfigMap\nmetadata: {name: web}\n")
    refused = gen("validate", ".")
    assert refused.code == 1 and findings(refused.out) == [("apps/cm.yaml:1", "k8s-api-version")], refused.out
    write(repo / "apps/cm.yaml", "apiVersion: ''\nkind: Widget\nmetadata: {name: web}\n")  # no version at all
    assert gen("validate", ".").code == 1


def test_a_document_with_only_one_of_apiversion_and_kind_is_an_error(gen, repo: Path) -> None:
    write(repo / "apps/cm.yaml", "kind: ConfigMap\nmetadata: {name: web}\n")
    run = gen("validate", ".")
    assert run.code == 1 and findings(run.out) == [("apps/cm.yaml:1", "k8s-object")], run.out


def test_dotfiles_are_configuration_whether_walked_or_named(gen, repo: Path) -> None:
    write(repo / ".sops.yaml", "creation_rules:\n- path_regex: .*\n  age: age1xyz\n")
    write(repo / ".yamlfmt.yaml", "formatter: {type: basic}\n")
    write(repo / ".config/tool.yaml", "kind: Settings\n")
    named = gen("validate", ".sops.yaml", ".yamlfmt.yaml", ".config/tool.yaml")
    assert named.code == 0 and named.out == "" and "3 skipped" in named.err, named.out + named.err
    assert gen("validate", ".").code == 0


def test_files_a_generator_reads_are_data(gen, repo: Path) -> None:
    write(repo / "app/kustomization.yaml", "configMapGenerator:\n- name: cfg\n  files: [settings=conf/settings.yaml]\n")
    write(repo / "app/conf/settings.yaml", "kind: Settings\nlevel: debug\n")  # one of the two: a manifest's error
    run = gen("validate", ".")
    assert run.code == 0 and run.out == "", run.out


# -- SOPS

SOPS_SECRET = """\
apiVersion: v1
kind: Secret
metadata:
  name: cloudflare
  namespace: network
type: Opaque
stringData:
  token: ENC[AES256_GCM,data:8R9wGqk=,iv:Ys0=,tag:2w==,type:str]
data:
  key: ENC[AES256_GCM,data:c2VjcmV0,iv:Ys0=,tag:2w==,type:str]
sops:
  age:
  - recipient: age1qqqq
    enc: |
      -----BEGIN AGE ENCRYPTED FILE-----
  lastmodified: "2024-01-01T00:00:00Z"
  mac: ENC[AES256_GCM,data:abc=,iv:Ys0=,tag:2w==,type:str]
  encrypted_regex: ^(data|stringData)$
  version: 3.8.1
"""


def test_a_sops_document_is_judged_decrypted(gen, repo: Path) -> None:
    write(repo / "network/secret.sops.yaml", SOPS_SECRET)
    run = gen("validate", ".")
    assert run.code == 0 and run.out == "", run.out  # no `unknown field "sops"`, no base64 error, no secret-material


def test_a_typo_beside_encrypted_values_is_still_caught(gen, repo: Path) -> None:
    write(repo / "network/secret.sops.yaml", SOPS_SECRET.replace("stringData:", "strinData:"))
    run = gen("validate", ".")
    assert run.code == 1 and findings(run.out) == [("network/secret.sops.yaml:7", "k8s-schema")], run.out
    assert "stringData" in run.out


def test_an_encrypted_value_is_opaque_a_plain_one_is_not() -> None:
    body, opaque = sources.decrypted(
        {"kind": "Secret", "data": {"a": "ENC[AES256_GCM,data:x,type:str]", "b": "!"}, "sops": {}}
    )
    assert "sops" not in body and opaque == {("data", "a")}


# -- cluster settings


HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: plex, namespace: default}
spec:
  minReplicas: 0
  maxReplicas: 1
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: plex}
  metrics:
  - type: External
    external:
      metric: {name: probe_success}
      target: {type: Value, value: "1"}
"""


def test_hpa_scale_to_zero_is_valid_where_the_clusters_enable_the_gate(gen, repo: Path) -> None:
    write(repo / "hpa.yaml", HPA)
    off = gen("validate", ".")
    assert off.code == 1 and findings(off.out) == [("hpa.yaml:5", "k8s-hpa")], off.out
    write(repo / ".gen.yaml", "featureGates:\n  HPAScaleToZero: true\n")
    assert gen("validate", ".").code == 0
    cpu = "  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}\n"
    write(repo / "hpa.yaml", HPA[: HPA.index("  - type: External")] + cpu)
    resource = gen("validate", ".")
    assert findings(resource.out) == [("hpa.yaml:8", "k8s-hpa")] and "Object or External" in resource.out


PRIVILEGED = """apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: node-agent}}
  template:
    metadata: {labels: {app: node-agent}}
    spec:
      containers:
      - name: agent
        image: registry.example.com/agent:1.0
        securityContext:
          privileged: true
"""


def test_privileged_containers_are_refused_only_where_the_clusters_disallow_them(gen, repo: Path) -> None:
    """kube-apiserver's --allow-privileged: kubeadm and managed clusters run it true, so gen's
    default accepts; `allowPrivileged: false` refuses at the field, as such an API server does."""
    write(repo / "agent.yaml", PRIVILEGED)
    assert gen("validate", ".").code == 0
    write(repo / ".gen.yaml", "allowPrivileged: false\n")
    refused = gen("validate", ".")
    errors = [f for f, line in zip(findings(refused.out), refused.out.splitlines(), strict=True) if " error " in line]
    assert refused.code == 1 and errors == [("agent.yaml:13", "k8s-security-context")], refused.out
    assert "disallowed by cluster policy" in refused.out and "--allow-privileged=false" in refused.out


def test_an_unknown_feature_gate_is_a_config_error_with_a_suggestion(gen, repo: Path) -> None:
    write(repo / ".gen.yaml", "featureGates:\n  HPAScaleToZer: true\n")
    write(repo / "hpa.yaml", HPA)
    run = gen("validate", ".")
    assert run.code == 1 and ".gen.yaml:2:3" in run.out and "HPAScaleToZero" in run.out


# -- Flux postBuild substitution

FLUX_KS = """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: atuin
  namespace: flux-system
spec:
  interval: 1h
  path: ./apps/atuin
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
  targetNamespace: default
  postBuild:
    substitute:
      APP: atuin
    substituteFrom:
    - kind: ConfigMap
      name: cluster-settings
"""
SETTINGS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-settings, namespace: flux-system}
data:
  STORAGE_CLASS: ceph-block
  REPLICAS: "2"
"""
PVC = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ${APP}
spec:
  accessModes: ["${ACCESSMODES:=ReadWriteOnce}"]
  storageClassName: ${STORAGE_CLASS}
  resources:
    requests:
      storage: 5Gi
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${APP}
  annotations:
    example.com/literal: $${NOT_A_VARIABLE}
spec:
  replicas: ${REPLICAS}
  selector:
    matchLabels: {app: "${APP}"}
  template:
    metadata:
      labels: {app: "${APP}"}
    spec:
      containers:
      - name: app
        image: ghcr.io/atuinsh/atuin:v18.4.0
"""


def _flux_repo(repo: Path) -> None:
    write(repo / "clusters/main/atuin.yaml", FLUX_KS)
    write(repo / "clusters/main/settings.yaml", SETTINGS)
    write(repo / "apps/atuin/pvc.yaml", PVC)
    write(repo / "apps/atuin/deployment.yaml", DEPLOYMENT)


def test_files_under_a_flux_path_are_judged_substituted(gen, repo: Path) -> None:
    _flux_repo(repo)
    run = gen("validate", ".")
    assert run.code == 0 and " error " not in run.out, run.out


def test_a_mistake_in_a_substituted_file_is_caught_at_its_line(gen, repo: Path) -> None:
    _flux_repo(repo)
    write(repo / "apps/atuin/pvc.yaml", PVC.replace("${ACCESSMODES:=ReadWriteOnce}", "${ACCESSMODES:=ReadWriteOnly}"))
    write(
        repo / "apps/atuin/deployment.yaml",
        DEPLOYMENT.replace("name: ${APP}\n  annotations", "name: ${APP}_x\n  annotations"),
    )
    run = gen("validate", ".")
    assert ("apps/atuin/pvc.yaml:6", "k8s-pvc") in findings(run.out), run.out
    assert ("apps/atuin/deployment.yaml:4", "k8s-name") in findings(run.out), run.out
    assert "atuin_x" in run.out  # the value the cluster would receive


def test_an_unknown_variable_leaves_its_value_opaque_with_an_info(gen, repo: Path) -> None:
    _flux_repo(repo)
    write(repo / "apps/atuin/pvc.yaml", PVC.replace("${STORAGE_CLASS}", "${STORAGECLASS_UNSET}"))
    run = gen("validate", ".")
    assert run.code == 0 and findings(run.out) == [("apps/atuin/pvc.yaml:7", "flux-substitution")], run.out
    assert "STORAGECLASS_UNSET (not set)" in run.out and "Kustomization flux-system/atuin" in run.out


def test_the_target_namespace_places_the_objects() -> None:
    placed = sources.in_namespace({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}, "default")
    assert placed["metadata"]["namespace"] == "default"
    renamed = sources.in_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "_"}}, "default")
    assert renamed["metadata"]["name"] == "default"
    kept = sources.in_namespace({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "a"}}, "x")
    assert "namespace" not in kept["metadata"]


@pytest.mark.parametrize(
    ("text", "variables", "expanded"),
    [
        ("${A}", {"A": "x"}, "x"),
        ("${A:=d}", {}, "d"),
        ("${A:=d}", {"A": ""}, "d"),
        ("${A=d}", {"A": ""}, ""),
        ("${A:-d}-${B}", {"B": "b"}, "d-b"),
        ("$${A}", {"A": "x"}, "${A}"),
        ("a.${DOMAIN}", {"DOMAIN": "example.com"}, "a.example.com"),
    ],
)
def test_variables_expand_as_flux_envsubst_does(text: str, variables: dict[str, str], expanded: str) -> None:
    assert sources.expand(text, dict(variables)) == expanded


def test_a_variable_gen_cannot_know_is_opaque() -> None:
    with pytest.raises(sources._Opaque):
        sources.expand("${SECRET_DOMAIN}", {"SECRET_DOMAIN": None})
    with pytest.raises(sources._Opaque):
        sources.expand("${A^^}", {"A": "x"})  # a bash function gen does not evaluate


# -- kustomize's namespace


def test_a_namespace_the_kustomization_renames_is_judged_renamed(gen, repo: Path) -> None:
    write(repo / "apps/network/kustomization.yaml", "namespace: network\nresources: [namespace.yaml]\n")
    write(repo / "apps/network/namespace.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: _\n")
    assert gen("validate", ".").code == 0
    named = gen("validate", "apps/network/namespace.yaml")  # as pre-commit names it
    assert named.code == 0, named.out
    write(
        repo / "apps/network/namespace.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: _\n  labels: {a: -b}\n",
    )
    broken = gen("validate", ".")
    assert broken.code == 1 and [f[0] for f in findings(broken.out)] == ["apps/network/namespace.yaml:5"], broken.out


# -- one namespace, several definitions

ISTIO_NS = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: istio-system\n  labels:\n    pod-security.kubernetes.io/enforce: {level}\n"
PRIVILEGED_POD = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: istio-cni, namespace: istio-system}
spec:
  selector: {matchLabels: {app: cni}}
  template:
    metadata: {labels: {app: cni}}
    spec:
      containers:
      - name: cni
        image: docker.io/istio/install-cni:1.24.0
        securityContext: {privileged: true}
"""


def _alternative_overlays(repo: Path) -> None:
    write(repo / "overlays/restricted/kustomization.yaml", "resources: [namespace.yaml, ../../base]\n")
    write(repo / "overlays/restricted/namespace.yaml", ISTIO_NS.format(level="restricted"))
    write(repo / "overlays/privileged/kustomization.yaml", "resources: [namespace.yaml, ../../base]\n")
    write(repo / "overlays/privileged/namespace.yaml", ISTIO_NS.format(level="privileged"))
    write(repo / "base/kustomization.yaml", "resources: [cni.yaml]\n")
    write(repo / "base/cni.yaml", PRIVILEGED_POD)


def test_alternative_namespace_definitions_are_named_not_picked(gen, repo: Path) -> None:
    _alternative_overlays(repo)
    run = gen("validate", ".")
    assert run.code == 0, run.out  # judged by privileged: the privileged container stays a warning
    assert findings(run.out) == [("base/cni.yaml:12", "namespace-definitions"), ("base/cni.yaml:12", "pod-security")]
    assert 'overlays/privileged/namespace.yaml ("privileged")' in run.out
    assert 'overlays/restricted/namespace.yaml ("restricted")' in run.out


def test_the_definition_in_the_same_kustomization_wins(gen, repo: Path) -> None:
    _alternative_overlays(repo)
    write(repo / "overlays/restricted/cni.yaml", PRIVILEGED_POD)
    write(repo / "overlays/restricted/kustomization.yaml", "resources: [namespace.yaml, cni.yaml]\n")
    run = gen("validate", "overlays")
    assert run.code == 1 and ("overlays/restricted/cni.yaml:12", "pod-security") in findings(run.out), run.out
    assert 'error pod-security namespace istio-system enforces Pod Security "restricted"' in run.out
    assert "namespace-definitions" not in run.out


# -- kustomize: judged as built

BASE_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: registry.example.com/web:1.0
        ports:
        - containerPort: 8080
"""


def _overlay(repo: Path) -> None:
    write(repo / "base/kustomization.yaml", "resources: [deployment.yaml]\n")
    write(repo / "base/deployment.yaml", BASE_DEPLOYMENT)  # no selector, no labels: the overlay adds them
    write(
        repo / "overlays/prod/kustomization.yaml",
        "namespace: shop\nnamePrefix: prod-\nlabels:\n- pairs: {app: web}\n  includeSelectors: true\n"
        "  includeTemplates: true\nresources: [../../base]\n",
    )
    write(repo / "scaffold/kustomization.yaml", "resources: []\n")
    write(repo / "scaffold/unused.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: Not_Used}\n")


@pytest.mark.skipif(kustomize.engine() is None, reason="neither kustomize nor kubectl on PATH")
def test_a_base_is_judged_as_its_overlay_builds_it(gen, repo: Path) -> None:
    _overlay(repo)
    run = gen("validate", ".")
    assert run.code == 0 and " error " not in run.out, run.out  # the selector the labels transformer adds
    assert "1 kustomization built with" in run.err and "1 file no kustomization uses" in run.err


@pytest.mark.skipif(kustomize.engine() is None, reason="neither kustomize nor kubectl on PATH")
def test_a_mistake_in_a_base_is_caught_at_its_source_line(gen, repo: Path) -> None:
    _overlay(repo)
    write(repo / "base/deployment.yaml", BASE_DEPLOYMENT.replace("containerPort: 8080", "containerPort: 80800"))
    run = gen("validate", ".")
    assert run.code == 1 and findings(run.out) == [("base/deployment.yaml:12", "k8s-port")], run.out


@pytest.mark.skipif(kustomize.engine() is None, reason="neither kustomize nor kubectl on PATH")
def test_a_remote_base_is_never_fetched(gen, repo: Path) -> None:
    write(repo / "app/kustomization.yaml", "resources:\n- https://github.com/example/app//base?ref=v1\n- cm.yaml\n")
    write(repo / "app/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n")
    run = gen("validate", ".")
    assert run.code == 0 and findings(run.out) == [("app/kustomization.yaml:1", "kustomize-remote")], run.out
    assert "1 not built (remote base or Helm chart)" in run.err


@pytest.mark.skipif(kustomize.engine() is None, reason="neither kustomize nor kubectl on PATH")
def test_a_kustomization_the_engine_refuses_is_an_error(gen, repo: Path) -> None:
    write(repo / "app/kustomization.yaml", "resources: [missing.yaml]\n")
    run = gen("validate", ".")
    assert run.code == 1 and findings(run.out) == [("app/kustomization.yaml:1", "kustomize-build")], run.out


def test_without_an_engine_files_are_judged_one_by_one(gen, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    _overlay(repo)
    run = gen("validate", ".")
    assert "judged file by file (neither kustomize nor kubectl on PATH)" in run.err


# -- real repositories, as they are

HOME_OPS = Path(__file__).parent / "realworld" / "sources" / "home-ops"


@pytest.fixture
def home_ops(repo: Path) -> Path:
    """The excerpt as a repository of its own, with the clusters' feature gates in .gen.yaml."""
    shutil.copytree(HOME_OPS, repo, dirs_exist_ok=True)
    write(repo / ".gen.yaml", "featureGates:\n  HPAScaleToZero: true\n")
    return repo


def test_a_real_flux_repository_has_no_false_error(gen, home_ops: Path) -> None:
    run = gen("validate", ".")
    assert run.code == 0 and " error " not in run.out, run.out


def test_planted_mistakes_in_a_real_flux_repository_are_caught_at_their_lines(gen, home_ops: Path) -> None:
    pvc = home_ops / "kubernetes/components/kopiur/backup/pvc.yaml"
    pvc.write_text(pvc.read_text().replace(":=ReadWriteOnce}", ":=ReadWriteOnly}"))
    namespace = home_ops / "kubernetes/apps/default/namespace.yaml"
    namespace.write_text(namespace.read_text().replace('admin-access: "true"', 'admin-access: "-true"'))
    run = gen("validate", ".")
    assert run.code == 1, run.out
    assert [f for f in findings(run.out) if f[1] != "k8s-unknown-kind"] == [
        ("kubernetes/apps/default/namespace.yaml:9", "k8s-label"),
        ("kubernetes/components/kopiur/backup/pvc.yaml:8", "k8s-pvc"),
    ], run.out


def test_kustomize_vars_of_a_kustomization_not_built_are_opaque(gen, repo: Path) -> None:
    write(
        repo / "env/kustomization.yaml",
        "resources:\n- https://github.com/example/crds?ref=v1\n- ../base\nvars:\n- name: app-name\n"
        "  objref: {apiVersion: v1, kind: ConfigMap, name: install-config}\n  fieldref: {fieldPath: data.appName}\n",
    )
    write(repo / "base/kustomization.yaml", "resources: [application.yaml, config.yaml]\n")
    write(
        repo / "base/config.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: install-config}\ndata: {appName: p}\n",
    )
    write(
        repo / "base/application.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: $(app-name)\nspec:\n  ports: [{port: 80}]\n",
    )
    run = gen("validate", ".")
    assert run.code == 0 and " error " not in run.out, run.out
    write(
        repo / "base/application.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: $(app-nam)\nspec:\n  ports: [{port: 80}]\n",
    )
    typo = gen("validate", ".")  # a name no var declares stays what kustomize leaves it: the literal text
    assert typo.code == 1 and ("base/application.yaml:4", "k8s-name") in findings(typo.out), typo.out


def test_a_flux_path_without_a_kustomization_gives_only_what_its_kustomizations_include(gen, repo: Path) -> None:
    """cluster-apps (path ./apps, no kustomization there, no postBuild) applies the apps'
    Flux Kustomizations, not their app/ directories: those are substituted by the app's own."""
    write(
        repo / "cluster/apps.yaml",
        FLUX_KS.replace("name: atuin", "name: cluster-apps")
        .replace("./apps/atuin", "./apps")
        .split("  targetNamespace")[0],
    )
    write(repo / "apps/network/kustomization.yaml", "namespace: network\nresources: [web/ks.yaml]\n")
    write(repo / "apps/network/web/ks.yaml", FLUX_KS.replace("./apps/atuin", "./apps/network/web/app"))
    write(repo / "apps/network/web/app/kustomization.yaml", "resources: [pvc.yaml]\n")
    write(repo / "apps/network/web/app/pvc.yaml", PVC.replace("name: ${APP}", "name: ${DOMAIN/./-}"))
    write(repo / "cluster/settings.yaml", SETTINGS)
    run = gen("validate", ".")
    assert run.code == 0 and " error " not in run.out, run.out
    assert ("apps/network/web/app/pvc.yaml:4", "flux-substitution") in findings(run.out)


@pytest.mark.skipif(kustomize.engine() is None, reason="neither kustomize nor kubectl on PATH")
def test_a_base_only_a_remote_overlay_includes_is_built_with_its_namespace(gen, repo: Path) -> None:
    write(
        repo / "overlay/kustomization.yaml",
        "namespace: trainer\nresources:\n- ../rbac\n- https://example.com/jobset.yaml\n",
    )
    write(repo / "rbac/kustomization.yaml", "resources: [binding.yaml, account.yaml]\n")
    write(repo / "rbac/account.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: manager}\n")
    write(
        repo / "rbac/binding.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: manager}\n"
        "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: manager}\n"
        "subjects:\n- kind: ServiceAccount\n  name: manager\n",
    )
    run = gen("validate", ".")  # the subject's namespace is the overlay's, as kustomize sets it
    assert run.code == 0 and " error " not in run.out, run.out


def test_a_namespace_without_an_enforce_label_is_an_alternative_too(gen, repo: Path) -> None:
    _alternative_overlays(repo)
    write(
        repo / "overlays/privileged/namespace.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n"
    )
    run = gen("validate", ".")
    assert run.code == 0 and ("base/cni.yaml:12", "namespace-definitions") in findings(run.out), run.out


DIAOUL = Path(__file__).parent / "realworld" / "sources" / "diaoul-home-ops"


@pytest.fixture
def diaoul(repo: Path) -> Path:
    shutil.copytree(DIAOUL, repo, dirs_exist_ok=True)
    return repo


def test_a_real_sops_repository_has_no_false_error(gen, diaoul: Path) -> None:
    run = gen("validate", ".")
    assert run.code == 0 and " error " not in run.out, run.out
    certificate = "kubernetes/apps/network/envoy-gateway/app/certificate.yaml:6"
    assert (certificate, "flux-substitution") in findings(run.out) and "DOMAIN (encrypted)" in run.out
    named = gen("validate", ".sops.yaml", ".yamlfmt.yaml", "ansible/inventory/hosts.yml")  # as pre-commit names them
    assert named.code == 0 and "3 skipped" in named.err, named.out + named.err


def test_a_planted_mistake_in_a_real_sops_secret_is_caught_at_its_line(gen, diaoul: Path) -> None:
    secret = diaoul / "kubernetes/apps/ai/context7-mcp/app/secret.sops.yaml"
    secret.write_text(secret.read_text().replace("stringData:\n", "strinData:\n", 1))
    run = gen("validate", ".")
    errors = [f for f in findings(run.out) if " error " in run.out and f[1] == "k8s-schema"]
    assert run.code == 1 and errors == [("kubernetes/apps/ai/context7-mcp/app/secret.sops.yaml:6", "k8s-schema")], (
        run.out
    )


def test_an_istioctl_profile_needs_no_metadata_a_kubectl_object_does(gen, repo: Path) -> None:
    write(
        repo / "istio/profile.yaml",
        "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  profile: minimal\n",
    )
    write(repo / "apps/cm.yaml", "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n")
    run = gen("validate", ".")
    assert findings(run.out) == [("apps/cm.yaml:1", "k8s-name"), ("istio/profile.yaml:2", "k8s-unknown-kind")], run.out


@pytest.mark.skipif(kustomize.engine() is None, reason="neither kustomize nor kubectl on PATH")
def test_a_kustomization_that_inflates_a_helm_chart_is_not_built(gen, repo: Path) -> None:
    write(
        repo / "app/kustomization.yaml",
        "helmCharts:\n- name: redis\n  repo: https://charts.example.com\n  version: 1.0.0\n",
    )
    run = gen("validate", ".")
    assert run.code == 0 and findings(run.out) == [("app/kustomization.yaml:1", "kustomize-remote")], run.out
    assert "would run helm" in run.out


@pytest.mark.skipif(kustomize.engine() is None, reason="neither kustomize nor kubectl on PATH")
def test_what_a_generator_makes_is_judged_at_its_kustomization(gen, repo: Path) -> None:
    write(repo / "app/kustomization.yaml", "configMapGenerator:\n- name: settings\n  literals: [mode=fast]\n")
    assert gen("validate", ".").code == 0
    write(repo / "app/kustomization.yaml", "configMapGenerator:\n- name: settings\n  literals: [Bad Key=fast]\n")
    run = gen("validate", ".")
    assert run.code == 1 and [f[0] for f in findings(run.out)] == ["app/kustomization.yaml:1"], run.out


@pytest.mark.skipif(kustomize.engine() is None, reason="neither kustomize nor kubectl on PATH")
def test_a_base_named_alone_is_judged_as_its_overlays_build_it(gen, repo: Path) -> None:
    """pre-commit names the changed file, not the overlay: the verdict is CI's."""
    _overlay(repo)
    named = gen("validate", "base/deployment.yaml")
    assert named.code == 0 and " error " not in named.out, named.out
    write(repo / "base/deployment.yaml", BASE_DEPLOYMENT.replace("containerPort: 8080", "containerPort: 80800"))
    broken = gen("validate", "base/deployment.yaml")
    assert broken.code == 1 and findings(broken.out) == [("base/deployment.yaml:12", "k8s-port")], broken.out


def test_a_substituted_file_named_alone_is_judged_as_flux_applies_it(gen, repo: Path) -> None:
    """pre-commit names the changed file, not the Flux Kustomization that substitutes it."""
    _flux_repo(repo)
    named = gen("validate", "apps/atuin/pvc.yaml")
    assert named.code == 0 and " error " not in named.out, named.out
    write(repo / "apps/atuin/pvc.yaml", PVC.replace("${ACCESSMODES:=ReadWriteOnce}", "${ACCESSMODES:=ReadWriteOnly}"))
    broken = gen("validate", "apps/atuin/pvc.yaml")
    assert broken.code == 1 and ("apps/atuin/pvc.yaml:6", "k8s-pvc") in findings(broken.out), broken.out
