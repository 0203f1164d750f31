"""gen validate in place of a schema validator: no false error on the files upstream projects
ship, and every refusal a schema validator misses, at its line. One failing and one passing
case each, through the real entry point."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(gen, *args: object):
    return gen("validate", *args)


SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: argocd-redis-ha-haproxy, namespace: argocd}
spec:
  selector: {app: redis-ha-haproxy}
  ports:
  - {name: haproxy-metrics-port, port: 9101, targetPort: haproxy-metrics}
  - {name: "6379", port: 6379}
"""


def test_service_port_names_are_dns_labels_not_iana_names(gen, tmp_path: Path) -> None:
    """Argo CD's HA install names Service ports with more than 15 characters, and one by digits."""
    ok = run(gen, write(tmp_path / "ha.yaml", SERVICE))
    assert ok.code == 0 and ok.out == "", ok.out
    bad = run(gen, write(tmp_path / "bad.yaml", SERVICE.replace("haproxy-metrics-port", "Haproxy_Metrics")))
    assert bad.code == 1 and "bad.yaml:7:12: error k8s-service" in bad.out
    # a container port and a named targetPort keep the IANA service-name rule
    long_target = run(
        gen,
        write(
            tmp_path / "t.yaml", SERVICE.replace("targetPort: haproxy-metrics}", "targetPort: haproxy-metrics-port}")
        ),
    )
    assert long_target.code == 1 and "no more than 15 characters" in long_target.out


def test_node_port_on_a_cluster_ip_service(gen, tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  type: ClusterIP\n  ports:\n  - {port: 80, nodePort: 30080}\n"
    bad = run(gen, write(tmp_path / "s.yaml", text))
    assert (
        bad.code == 1
        and "s.yaml:7:26: error k8s-service Forbidden: may not be used when `type` is 'ClusterIP'" in bad.out
    )
    assert run(gen, write(tmp_path / "s.yaml", text.replace("type: ClusterIP", "type: NodePort"))).code == 0


LIST = """\
apiVersion: v1
kind: List
metadata:
  resourceVersion: ""
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a, namespace: default}
  data: {k: v}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: b, namespace: default}
  data: {k: v}
"""


def test_a_list_is_validated_item_by_item(gen, tmp_path: Path) -> None:
    """What `kubectl get -o yaml` writes: the List needs no name, its items are checked."""
    assert run(gen, write(tmp_path / "list.yaml", LIST)).code == 0
    bad = run(gen, write(tmp_path / "list.yaml", LIST.replace("name: b,", "name: B_b,")))
    assert bad.code == 1 and "list.yaml:12:20: error k8s-name name 'B_b'" in bad.out
    assert "ConfigMap default/B_b" in run(gen, "--format", "json", tmp_path / "list.yaml").out


def test_a_typed_list_of_a_known_kind_is_validated_item_by_item(gen, tmp_path: Path) -> None:
    """kube-prometheus ships its dashboards as a ConfigMapList."""
    typed = LIST.replace("kind: List", "kind: ConfigMapList")
    assert run(gen, write(tmp_path / "dashboards.yaml", typed)).code == 0
    bad = run(gen, write(tmp_path / "dashboards.yaml", typed.replace("data: {k: v}\n-", "data: {k: 1}\n-")))
    assert bad.code == 1 and "dashboards.yaml:9:" in bad.out
    unknown = run(
        gen,
        write(
            tmp_path / "w.yaml",
            typed.replace("apiVersion: v1\nkind: ConfigMapList", "apiVersion: example.com/v1\nkind: WidgetList"),
        ),
    )
    assert " k8s-unknown-kind " in unknown.out  # not a list gen knows: said, not guessed


def test_an_object_without_metadata_or_name(gen, tmp_path: Path) -> None:
    bad = run(gen, write(tmp_path / "cm.yaml", "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n"))
    assert bad.code == 1 and "cm.yaml:1:1: error k8s-name metadata: Required value" in bad.out
    assert (
        run(gen, write(tmp_path / "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: cm-}\n")).code
        == 0
    )
    config = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nleaderElection: {leaderElect: false}\n"
    assert run(gen, write(tmp_path / "config.yaml", config)).code == 0  # a component's configuration, no API object


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: app
    image: registry.example.com/app:1.0
    env:
    - {name: LOG_LEVEL, value: info}
"""


@pytest.mark.parametrize("image", ["", '""'])
def test_a_container_needs_an_image(gen, tmp_path: Path, image: str) -> None:
    bad = run(
        gen, write(tmp_path / "p.yaml", POD.replace("image: registry.example.com/app:1.0", f"image: {image}".rstrip()))
    )
    assert bad.code == 1 and "error k8s-image Required value: a container needs an image" in bad.out
    assert "image-tag" not in bad.out
    assert run(gen, write(tmp_path / "p.yaml", POD)).code == 0


def test_an_ephemeral_container_needs_an_image_too(gen, tmp_path: Path) -> None:
    """ValidatePodCreate refuses any ephemeral container in a Pod's manifest (kubectl debug adds
    them to a running Pod), and validateContainerCommon one without an image besides."""
    debug = POD + "  ephemeralContainers:\n  - name: debug\n"
    bad = run(gen, write(tmp_path / "p.yaml", debug))
    assert bad.code == 1 and " k8s-image " in bad.out and "cannot be set on create" in bad.out
    imaged = run(gen, write(tmp_path / "p.yaml", debug + "    image: busybox:1.37\n"))
    assert imaged.code == 1 and " k8s-image " not in imaged.out and "cannot be set on create" in imaged.out


@pytest.mark.parametrize(
    ("name", "at_131", "at_135"),
    [
        ("A=B", 1, 1),  # '=' never
        ("my.var-1", 0, 0),
        ("1ST", 1, 0),  # relaxed names (1.32+) may start with a digit
        ("HAS SPACE", 1, 0),
    ],
)
def test_environment_variable_names_per_version(gen, tmp_path: Path, name: str, at_131: int, at_135: int) -> None:
    path = write(tmp_path / "p.yaml", POD.replace("name: LOG_LEVEL", f'name: "{name}"'))
    old, new = run(gen, "-k", "1.31", path), run(gen, "-k", "1.35", path)
    assert (old.code, new.code) == (at_131, at_135), (old.out, new.out)
    if at_131:
        assert "p.yaml:9:14: error k8s-env" in old.out


@pytest.mark.parametrize(
    ("group", "policy", "at_134", "at_135"),
    [
        ("containers", "OnFailure", 1, 0),  # ContainerRestartRules (1.35) lets a regular container set it
        ("containers", "Sometimes", 1, 1),
        ("initContainers", "Always", 0, 0),  # a sidecar, in every version
        ("initContainers", "Never", 1, 0),
    ],
)
def test_container_restart_policy_per_version(
    gen, tmp_path: Path, group: str, policy: str, at_134: int, at_135: int
) -> None:
    """validateContainers / validateInitContainers: restartPolicy on a regular container, and an
    init container's other than Always, only once ContainerRestartRules is on (beta in 1.35)."""
    init = "  initContainers:\n  - name: init\n    image: registry.example.com/init:1.0\n"
    if group == "containers":
        text = POD.replace("    env:\n", f"    restartPolicy: {policy}\n    env:\n") + init
    else:
        text = POD + init + f"    restartPolicy: {policy}\n"
    path = write(tmp_path / "p.yaml", text)
    old, new = run(gen, "-k", "1.34", path), run(gen, "-k", "1.35", path)
    assert (old.code, new.code) == (at_134, at_135), (old.out, new.out)
    for refused, out in ((at_134, old.out), (at_135, new.out)):
        assert ("error k8s-container" in out) == bool(refused), out


SECRET = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  password: VALUE\n"


def test_secret_data_must_be_base64(gen, tmp_path: Path) -> None:
    bad = run(gen, write(tmp_path / "s.yaml", SECRET.replace("VALUE", "hunter2!")))
    assert bad.code == 1 and "s.yaml:5:13: error k8s-secret illegal base64 data at input byte 7" in bad.out
    unpadded = run(gen, write(tmp_path / "s.yaml", SECRET.replace("VALUE", "aHVudGVyMg")))
    assert unpadded.code == 1 and "padding" in unpadded.out
    ok = run(gen, write(tmp_path / "s.yaml", SECRET.replace("VALUE", "aHVudGVyMg==")))
    assert ok.code == 0 and " secret-material " in ok.out  # valid; an opinion about Git, a warning


def test_sys_admin_without_the_cap_prefix_is_what_kube_apiserver_accepts(gen, tmp_path: Path) -> None:
    """ValidateSecurityContext compares the literal CAP_SYS_ADMIN."""
    ctx = "    securityContext: {allowPrivilegeEscalation: false, capabilities: {add: [%s]}}\n"
    assert " k8s-security-context " not in run(gen, write(tmp_path / "p.yaml", POD + ctx % "SYS_ADMIN")).out
    bad = run(gen, write(tmp_path / "p.yaml", POD + ctx % "CAP_SYS_ADMIN"))
    assert bad.code == 1 and " k8s-security-context " in bad.out


SCHEDULER = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
- schedulerName: gpu
  plugins:
    multiPoint:
      enabled: [{name: GPUPacking}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: nvidia.com/gpu, weight: 1}]
  - name: GPUPacking
    args: {threshold: 10}
"""


def test_scheduler_config_is_decoded_strictly(gen, tmp_path: Path) -> None:
    """kube-scheduler refuses to start on an unknown field in a plugin's args: every GPU Pod
    would stay Pending."""
    good = run(gen, "--plugin", "GPUPacking", write(tmp_path / "c.yaml", SCHEDULER))
    assert good.code == 0 and "info scheduler-plugin-args the args of plugin GPUPacking were not checked" in good.out
    typo = run(
        gen,
        "--plugin",
        "GPUPacking",
        write(tmp_path / "c.yaml", SCHEDULER.replace("scoringStrategy:", "scoringStrategyy:")),
    )
    assert (
        typo.code == 1
        and "c.yaml:12:7: error scheduler-plugin-args unknown field \"scoringStrategyy\" (hint: did you mean 'scoringStrategy'?)"
        in typo.out
    )
    inner = run(gen, "--plugin", "GPUPacking", write(tmp_path / "c.yaml", SCHEDULER.replace("weight: 1", "wieght: 1")))
    assert inner.code == 1 and "did you mean 'weight'?" in inner.out


def test_coscheduling_args_are_decoded_strictly(gen, tmp_path: Path) -> None:
    config = (
        SCHEDULER.replace("GPUPacking", "Coscheduling")
        .replace("{threshold: 10}", "{permitWaitingTimeSeconds: 60}")
        .replace(
            "    multiPoint:\n",
            "    queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: '*'}]}\n    multiPoint:\n",
        )
    )
    assert run(gen, "--plugin", "Coscheduling", write(tmp_path / "c.yaml", config)).code == 0
    typo = run(
        gen,
        "--plugin",
        "Coscheduling",
        write(tmp_path / "c.yaml", config.replace("permitWaitingTimeSeconds", "permitWaitTimeSeconds")),
    )
    assert typo.code == 1 and "did you mean 'permitWaitingTimeSeconds'?" in typo.out


def test_a_scheduler_policy_with_unknown_args_is_an_error_at_its_line(gen, tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", policies)
    scheduler = policies / "scheduler.yaml"
    text = scheduler.read_text()
    assert "pluginConfig" not in text
    scheduler.write_text(
        text.replace(
            "    plugins:\n",
            "    pluginConfig:\n    - name: NodeResourcesFit\n      args: {scoringStrategyy: {type: MostAllocated}}\n    plugins:\n",
            1,
        )
    )
    lint = gen("lint", policies)
    assert lint.code == 1 and "scheduler.yaml:" in lint.out and 'unknown field "scoringStrategyy"' in lint.out


# -- which files are manifests


def _tool_files(root: Path) -> list[Path]:
    write(
        root / "overlays/prod/web.yaml",  # what the patch patches: the kustomization builds
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec: {containers: [{name: web, image: 'registry.example.com/web:1.0'}]}\n",
    )
    return [
        write(root / ".gen.yaml", "kubernetesVersions: ['1.35']\n"),
        write(root / ".pre-commit-config.yaml", "repos: []\n"),
        write(root / ".github/workflows/ci.yaml", "on: push\njobs: {}\n"),
        write(root / ".gitlab-ci.yml", "stages: [test]\n"),
        write(root / ".yamllint.yaml", "extends: default\n"),
        write(root / "charts/web/Chart.yaml", "apiVersion: v2\nname: web\nversion: 1.0.0\n"),
        write(root / "charts/web/values.yaml", "replicaCount: 2\n"),
        write(root / "envs/values-prod.yaml", "replicaCount: 3\n"),
        write(root / "overlays/prod/kustomization.yaml", "resources: [web.yaml]\npatches:\n- path: replicas.yaml\n"),
        write(
            root / "overlays/prod/replicas.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n",
        ),
        write(root / "dashboards/package.json", json.dumps({"name": "dashboards", "version": "1.0.0"})),
    ]


def test_files_no_kubernetes_tool_applies_are_skipped_whether_walked_or_named(gen, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    named = _tool_files(tmp_path)
    real = write(
        tmp_path / "base/cm.json",
        json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": 1}}),
    )
    walked = run(gen, ".")
    assert walked.code == 1 and walked.out.startswith("base/cm.json:1:") and walked.out.count("\n") == 1, walked.out
    assert "2 files validated" in walked.err and "skipped" in walked.err
    by_name = run(gen, *[p.relative_to(tmp_path) for p in named])
    assert by_name.code == 0 and by_name.out == "" and "0 files validated" in by_name.err, by_name.out
    real.write_text(
        json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "1"}})
    )
    assert run(gen, ".").code == 0


def test_the_pre_commit_hook_reports_only_real_manifests(tmp_path: Path) -> None:
    """A real `pre-commit run` with the gen-validate hook as .pre-commit-hooks.yaml defines it
    (run from this checkout instead of installed from a tag)."""
    hook = next(h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()) if h["id"] == "gen-validate")
    repo = tmp_path / "repo"
    repo.mkdir()
    _tool_files(repo)
    write(repo / "base/web.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {mode: fast}\n")
    local = {**hook, "language": "system", "entry": f"{sys.executable} -m generator validate"}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]}))
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True, env=env)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True, env=env)
    pre_commit = shutil.which("pre-commit", path=os.path.dirname(sys.executable)) or shutil.which("pre-commit")
    assert pre_commit, "pre-commit is a test dependency"
    clean = subprocess.run([pre_commit, "run", "--all-files"], cwd=repo, env=env, capture_output=True, text=True)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    write(repo / "base/web.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Web}\ndata: {mode: fast}\n")
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True, env=env)
    broken = subprocess.run([pre_commit, "run", "--all-files"], cwd=repo, env=env, capture_output=True, text=True)
    assert broken.returncode == 1 and "base/web.yaml:3:" in broken.stdout
    assert ".github" not in broken.stdout and "values" not in broken.stdout and "replicas.yaml" not in broken.stdout


# -- reports


def test_sarif_uris_are_relative_to_the_repository_root(gen, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / ".git").mkdir()
    write(tmp_path / "apps/web/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Web}\n")
    monkeypatch.chdir(tmp_path / "apps")
    sarif = json.loads(run(gen, "--format", "sarif", "web").out)
    (result,) = sarif["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "apps/web/cm.yaml",
        "uriBaseId": "%SRCROOT%",
    }


def test_junit_failures_never_exceed_tests(gen, tmp_path: Path) -> None:
    from junitparser import JUnitXml

    write(tmp_path / "two.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: A, namespace: B}\n")
    report = tmp_path / "junit.xml"
    assert run(gen, "--format", "junit", "--output", report, tmp_path / "two.yaml").code == 1
    suite = next(iter(JUnitXml.fromfile(str(report))))
    assert (suite.tests, suite.failures) == (2, 2), "a failed case per error"


# -- gen render takes CRDs too


def test_render_judges_custom_resources_by_crds_from_the_command_line_and_gen_yaml(
    gen, tmp_path: Path, monkeypatch
) -> None:
    from tests.test_crds import KUEUE

    monkeypatch.chdir(tmp_path)
    write(
        tmp_path / "policies/queues.yaml",
        "apiVersion: gen/v1alpha1\nkind: Manifests\nmetadata: {name: queues}\nspec:\n  files: [../queues/]\n",
    )
    write(
        tmp_path / "queues/flavor.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: a100}\nspec:\n  nodeLabelz: {gpu: a100}\n",
    )
    shutil.copytree(KUEUE, tmp_path / "vendor/kueue")
    unknown = gen("render", "policies", "--out", "deploy")
    assert unknown.code == 0 and " k8s-unknown-kind " in unknown.err
    judged = gen("render", "policies", "--out", "deploy", "--crds", "vendor/kueue")
    assert judged.code == 1 and "queues/flavor.yaml:5:3: error crd-schema " in judged.err
    assert 'unknown field "nodeLabelz"' in judged.err
    write(tmp_path / ".gen.yaml", "crds: [vendor/kueue]\n")
    assert gen("render", "policies", "--out", "deploy").code == 1


def test_grafana_dashboards_with_template_variables_are_no_false_error(gen, tmp_path: Path) -> None:
    """kube-prometheus's dashboards (a ConfigMapList) query `rate(x[$__rate_interval])`: Grafana
    substitutes the variable before Prometheus parses anything."""
    panel = {"title": "p", "targets": [{"expr": 'sum(rate(http_requests_total{job="$job"}[$__rate_interval]))'}]}
    dashboard = json.dumps({"panels": [panel, {"title": "q", "targets": [{"expr": "topk($n, up)"}]}]})
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}, "data": {"http.json": dashboard}}
    listed = {"apiVersion": "v1", "kind": "ConfigMapList", "items": [cm]}
    assert run(gen, write(tmp_path / "d.yaml", yaml.safe_dump(listed))).code == 0
    panel["targets"][0]["expr"] = "sum(rate(http_requests_total[$__rate_interval])"  # a parenthesis short
    cm["data"]["http.json"] = json.dumps({"panels": [panel]})
    bad = run(gen, write(tmp_path / "d.yaml", yaml.safe_dump(listed)))
    assert bad.code == 1 and " promql-parse panel 'p'" in bad.out


def test_positions_of_a_many_document_file_are_worked_out_once(tmp_path: Path, monkeypatch) -> None:
    """Every document of a large file with a finding used to read the file again from its start."""
    from generator.yamlio import load

    calls = []
    real = load._documents

    def counting(*args, **kwargs):
        calls.append(kwargs.get("track"))
        return real(*args, **kwargs)

    monkeypatch.setattr(load, "_documents", counting)
    doc = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d, labels: {bad: '-x-'}}\n"
    docs, _ = load.load_text("---\n".join(doc % i for i in range(50)), "many.yaml", kube=True)
    assert [d.source.locate(("metadata", "labels", "bad")).line for d in docs[:3]] == [3, 7, 11]
    assert len([d.source for d in docs]) == 50 and calls.count(True) <= 1
