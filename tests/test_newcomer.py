"""What a newcomer meets first: no finding that only repeats another, findings at the line that
caused them (an override's too), and messages that read as English."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

TARGET = """\
apiVersion: gen/v1alpha1
kind: Target
metadata: {name: prod}
spec:
  overrides:
  - kind: ReplicatedService
    name: web
    spec:
      disruptionBudget: {maxUnavailable: 1}
"""
WEB = """\
apiVersion: gen/v1alpha1
kind: ReplicatedService
metadata: {name: web}
spec:
  namespace: web
  image: r/web:1
  replicas: 3
  deletionCost: {initial: 0, tier: default}
  disruptionBudget: {minAvailable: 2}
"""


def _policies(tmp_path: Path, **files: str) -> Path:
    root = tmp_path / "policies"
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        (root / f"{name}.yaml").write_text(text)
    return root


def test_a_policy_that_failed_to_load_is_not_reported_missing_too(gen, tmp_path: Path) -> None:
    root = _policies(tmp_path, target=TARGET, web=WEB.replace("replicas: 3", "replicas: three"))
    run = gen("lint", root)
    assert run.code == 1 and " policy-schema " in run.out
    assert "target-override" not in run.out  # the override's policy exists; its own error says why
    root = _policies(tmp_path, target=TARGET.replace("name: web", "name: webb"), web=WEB)
    assert "there is no such policy" in gen("lint", root).out


def test_a_finding_an_override_causes_is_at_the_override(gen, tmp_path: Path) -> None:
    root = _policies(tmp_path, target=TARGET, web=WEB)
    run = gen("lint", root)
    assert run.code == 1 and "policies/target.yaml:9:26: error policy-schema" in run.out
    assert "[target prod]" in run.out and "write minAvailable: null in the override to remove it" in run.out
    fixed = _policies(
        tmp_path, target=TARGET.replace("{maxUnavailable: 1}", "{maxUnavailable: 1, minAvailable: null}"), web=WEB
    )
    assert gen("lint", fixed).code == 0


SHARED = WEB.replace("  disruptionBudget: {minAvailable: 2}\n", "") + (
    "  volumeMounts: [{name: uploads, mountPath: /uploads}]\n"
    "  pod: {volumes: [{name: uploads, persistentVolumeClaim: {claimName: uploads}}]}\n"
)
CLAIM = """\
apiVersion: gen/v1alpha1
kind: Manifests
metadata: {name: storage}
spec:
  namespace: web
  objects:
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: uploads}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 10Gi}}
"""


def test_several_replicas_on_one_read_write_once_claim(gen, tmp_path: Path) -> None:
    root = _policies(tmp_path, web=SHARED, storage=CLAIM)
    run = gen("render", root, "--out", tmp_path / "out")
    assert run.code == 0 and "web.yaml:10:" in run.err and " pvc-rwo-shared " in run.err
    assert "can run 3 Pods" in run.err
    one = _policies(tmp_path, web=SHARED.replace("replicas: 3", "replicas: 1"), storage=CLAIM)
    assert " pvc-rwo-shared " not in gen("render", one, "--out", tmp_path / "out").err
    many = _policies(tmp_path, web=SHARED, storage=CLAIM.replace("ReadWriteOnce", "ReadWriteMany"))
    assert " pvc-rwo-shared " not in gen("render", many, "--out", tmp_path / "out").err


def test_lint_of_the_whole_directory_judges_objects_together_as_render_does(gen, tmp_path: Path) -> None:
    root = _policies(tmp_path, web=SHARED, storage=CLAIM)
    rendered = gen("render", root, "--out", tmp_path / "out")
    linted = gen("lint", root)
    found = [line for line in linted.out.splitlines() if " pvc-rwo-shared " in line]
    assert found and found == [line for line in rendered.err.splitlines() if " pvc-rwo-shared " in line]
    assert "left to gen render" not in linted.err
    some = gen("lint", root / "web.yaml")  # what pre-commit asks: the files being committed
    assert " pvc-rwo-shared " not in some.out
    assert some.err.strip().endswith(
        "linted: 0 errors, 0 warnings; selector-no-match and pvc-rwo-shared left to gen render"
        " (they need every policy of a target)"
    )


def test_messages_read_as_english(gen, tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: r/c:1\n"
        "    resources: {requests: {memory: 1Gi}, limits: {memory: 512Mi}}\n    volumeMounts: [{name: data, mountPath: /d}]\n"
    )
    run = gen("validate", manifest)
    assert "memory request 1Gi must be less than or equal to memory limit of 512Mi" in run.out  # never bytes
    assert "names no volume of the Pod (hint: add it to the Pod's volumes)" in run.out  # no policy field here
    manifest.write_text(manifest.read_text().split("    resources:")[0] + "    env: [{name: DEBUG, value: 1}]\n")
    assert "reads the unquoted '1' as an integer; quote it" in gen("validate", manifest).out  # not "as a int"
    quoted = tmp_path / "q.yaml"
    quoted.write_text('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  a: "unclosed\n  b: c\n  d: e\n')
    run = gen("validate", quoted)
    assert (
        "q.yaml:5:6: error yaml-syntax while scanning a quoted scalar that is never closed" in run.out
    )  # where it opened
    sample = tmp_path / "s.json"
    sample.write_text("{}")
    run = gen("cost", "--sample", sample, "--now", "yesterday")
    assert run.err.startswith("--now: error cost-now ")  # a flag has no line or column


def _gen(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """gen as a user runs it, from another directory: this tree's package, a new process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "generator", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_patch_that_writes_the_wrong_type_is_an_error_at_the_patch(tmp_path: Path) -> None:
    patched = WEB + "  patches:\n  - patch:\n    - {op: replace, path: /spec/replicas, value: three}\n"
    _policies(tmp_path, web=patched)
    for command in (("render", "policies", "--out", "deploy"), ("plan", "policies", "--out", "deploy")):
        run = _gen(*command, cwd=tmp_path)
        assert run.returncode == 1 and "internal error" not in run.stderr, run.stderr
        assert "policies/web.yaml:12:7: error k8s-schema " in run.stderr and '"three" is a string' in run.stderr
    assert not (tmp_path / "deploy").exists()


def test_a_patch_that_makes_the_kind_a_list_names_the_object_without_a_python_list(tmp_path: Path) -> None:
    """A kind or a name a patch made a list is no file name: the object is named without it,
    never as Python spells a list (`['']`)."""
    patched = WEB + "  patches:\n  - patch:\n    - {op: replace, path: /kind, value: ['']}\n"
    _policies(tmp_path, web=patched)
    run = _gen("render", "policies", "--out", "deploy", cwd=tmp_path)
    assert run.returncode == 1 and "apiVersion and kind are required" in run.stderr, run.stderr
    assert "['" not in run.stderr
