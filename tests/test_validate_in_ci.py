"""`gen validate` as a repository's CI runs it: .gen.yaml, baselines, and the SARIF and JUnit
reports code scanning and test dashboards read (checked by the SARIF 2.1.0 schema and read
back by a JUnit parser)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import ROOT

SARIF_SCHEMA = ROOT / "tests" / "schemas" / "sarif-2.1.0-rtm.5.json"

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.example.com/web:latest
"""
BROKEN = """\
apiVersion: v1
kind: Service
metadata:
  name: Web_Front
spec:
  ports:
  - port: 80
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository (with .git) holding a warning (image-tag) and an error (a Service's name)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "web.yaml").write_text(DEPLOYMENT)
    (tmp_path / "apps" / "svc.yaml").write_text(BROKEN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def rules_of(text: str) -> list[str]:
    return [line.split()[2] for line in text.splitlines() if line.count(":") >= 3]


def test_without_config_both_findings(gen, repo: Path) -> None:
    run = gen("validate", "apps")
    assert run.code == 1 and sorted(rules_of(run.out)) == ["image-tag", "k8s-name"], run.out
    assert run.err == "gen: 2 files validated: 1 error, 1 warning; 0 silenced\n"


def test_config_exclude_and_ignore_with_reason(gen, repo: Path) -> None:
    (repo / ".gen.yaml").write_text(
        "exclude: [apps/svc.yaml]\n"
        "ignore:\n"
        "- rule: image-tag\n"
        "  paths: [apps/*]\n"
        "  reason: the registry pins latest to a reviewed digest\n"
    )
    run = gen("validate", "apps", "--strict")
    assert (run.code, run.out) == (0, ""), run.out
    assert run.err == "gen: 1 file validated: 0 errors, 0 warnings; 1 silenced\n"


def test_config_is_found_from_a_subdirectory_up_to_the_repository_root(
    gen, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / ".gen.yaml").write_text("exclude: [apps/svc.yaml]\n")
    monkeypatch.chdir(repo / "apps")
    run = gen("validate", ".")
    assert rules_of(run.out) == ["image-tag"], run.out


def test_flags_win_over_the_config(gen, repo: Path) -> None:
    (repo / ".gen.yaml").write_text('kubernetesVersions: ["1.31"]\n')
    (repo / "apps" / "sidecar.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: 'x:1'}]\n"
        "  resources: {requests: {cpu: 100m}}\n"
    )
    old = gen("validate", "apps/sidecar.yaml")
    new = gen("validate", "apps/sidecar.yaml", "-k", "1.35")
    assert old.code == 1 and new.code == 0, (old.out, new.out)


@pytest.mark.parametrize(
    ("text", "line", "rule", "words"),
    [
        ("exlude: [vendor/]\n", 1, "config-unknown-field", "did you mean 'exclude'?"),
        ("ignore:\n- rule: image-tag\n", 2, "config-required", '"reason"'),
        ("ignore:\n- rule: image-tags\n  reason: r\n", 2, "config-schema", "did you mean 'image-tag'?"),
        ('kubernetesVersions: ["1.2"]\n', 1, "config-schema", "not supported"),
        ("kubernetesVersions: [1.35]\n", 1, "config-schema", "quote the value"),
        ("plugins: GPUPacking\n", 1, "config-schema", ""),
    ],
)
def test_a_bad_config_is_reported_at_its_line_and_stops(gen, repo: Path, text, line, rule, words) -> None:
    (repo / ".gen.yaml").write_text(text)
    run = gen("validate", "apps")
    assert run.code == 1 and run.out.startswith(f".gen.yaml:{line}:") and f" {rule} " in run.out, run.out
    assert words in run.out and "k8s-name" not in run.out


def test_a_good_config_passes(gen, repo: Path) -> None:
    (repo / ".gen.yaml").write_text(
        'kubernetesVersions: ["1.34", "1.35"]\nplugins: [GPUPacking]\ncrds: []\nexclude: [apps/svc.yaml]\n'
        "ignore: [{rule: image-tag, reason: pinned by digest}]\n"
    )
    assert gen("validate", "apps").code == 0


def test_a_missing_config_file_is_a_usage_error(gen, repo: Path) -> None:
    run = gen("validate", "apps", "--config", "nope.yaml")
    assert run.code == 2 and "nope.yaml" in run.err


def test_the_config_schema_is_exported(gen, tmp_path: Path) -> None:
    run = gen("schema", "--out", tmp_path / "schemas")
    assert run.code == 0 and (tmp_path / "schemas" / "config.json").is_file()


def test_baseline_accepts_known_findings_whatever_their_line(gen, repo: Path) -> None:
    written = gen("validate", "apps", "--write-baseline", "baseline.json")
    assert written.code == 0 and "wrote 2 findings" in written.err
    assert {e["object"] for e in json.loads((repo / "baseline.json").read_text())} == {
        "Deployment shop/web",
        "Service Web_Front",
    }
    # an edit above both findings moves them; they stay known
    for name in ("web.yaml", "svc.yaml"):
        path = repo / "apps" / name
        path.write_text("# reviewed 2026-12\n\n" + path.read_text())
    run = gen("validate", "apps", "--baseline", "baseline.json", "--strict")
    assert (run.code, run.out) == (0, ""), run.out
    assert run.err.endswith("; 0 silenced; 2 known from the baseline\n")
    # a new finding is reported, the known ones are not
    (repo / "apps" / "job.yaml").write_text(DEPLOYMENT.replace("name: web\n", "name: api\n", 1))
    run = gen("validate", "apps", "--baseline", "baseline.json")
    assert rules_of(run.out) == ["image-tag"] and "job.yaml" in run.out, run.out


def test_a_baseline_that_is_no_report_is_a_usage_error(gen, repo: Path) -> None:
    (repo / "baseline.json").write_text('{"not": "a report"}')
    run = gen("validate", "apps", "--baseline", "baseline.json")
    assert run.code == 2 and "not a gen JSON report" in run.err


def test_sarif_report_is_valid_sarif_2_1_0_with_the_catalogue_s_words(gen, repo: Path) -> None:
    run = gen("validate", "apps", "--format", "sarif", "--output", "gen.sarif")
    assert run.code == 1
    assert sorted(rules_of(run.out)) == ["image-tag", "k8s-name"], "the terminal still gets the text"
    log = json.loads((repo / "gen.sarif").read_text())
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(log)
    driver = log["runs"][0]["tool"]["driver"]
    rules = {r["id"]: r for r in driver["rules"]}
    from generator.catalogue import rules as catalogue

    assert rules["image-tag"]["fullDescription"]["text"] == catalogue()["image-tag"].text
    assert rules["k8s-name"]["defaultConfiguration"]["level"] == "error"
    results = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    where = results["k8s-name"]["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"] == "apps/svc.yaml"
    assert where["region"] == {"startLine": 4, "startColumn": 9}
    assert results["image-tag"]["level"] == "warning"
    assert driver["rules"][results["image-tag"]["ruleIndex"]]["id"] == "image-tag"


def test_junit_report_is_read_back_by_a_junit_parser(gen, repo: Path) -> None:
    from junitparser import Failure, JUnitXml

    (repo / "apps" / "svc.yaml").write_text(BROKEN.replace("port: 80", "port: 0"))  # a second error
    run = gen("validate", "apps", "--format", "junit", "--output", "gen.xml")
    assert run.code == 1
    xml = JUnitXml.fromfile(str(repo / "gen.xml"))
    suite = next(iter(xml))
    cases = {case.name: case for case in suite}
    failed = sorted(name for name, case in cases.items() if not case.is_passed)
    assert len(failed) == 2 and all(name.startswith("apps/svc.yaml:") for name in failed), "a failure per error"
    assert set(cases) - set(failed) == {"apps/web.yaml"}, "a passing case per file without errors"
    assert (suite.tests, suite.failures) == (3, 2)
    failures = [r for name in failed for r in cases[name].result if isinstance(r, Failure)]
    assert {f.type for f in failures} == {"k8s-name", "k8s-service"} and "apps/svc.yaml:4:9" in failures[0].text
    assert "image-tag" in cases["apps/web.yaml"].system_out, "a warning is no failure"


def test_a_baseline_says_how_many_of_its_entries_no_finding_matches(gen, repo: Path) -> None:
    assert gen("validate", "apps", "--write-baseline", "baseline.json").code == 0
    (repo / "apps" / "svc.yaml").write_text(BROKEN.replace("Web_Front", "web-front"))  # fixed
    run = gen("validate", "apps", "--baseline", "baseline.json")
    assert run.code == 0 and run.err.endswith(
        "; 1 known from the baseline; 1 baseline entry no longer found (fixed or changed: "
        "--write-baseline writes it anew)\n"
    ), run.err


def test_a_path_that_does_not_exist_is_a_usage_error(gen, repo: Path) -> None:
    run = gen("validate", "apps", "aps")
    assert (run.code, run.out) == (2, "") and "no such file or directory: aps" in run.err


def test_sarif_from_outside_the_checkout_names_files_from_its_root(gen, repo: Path, monkeypatch) -> None:
    monkeypatch.chdir(repo.parent)
    log = json.loads(gen("validate", repo / "apps", "--format", "sarif").out)
    where = {r["ruleId"]: r["locations"][0]["physicalLocation"]["artifactLocation"] for r in log["runs"][0]["results"]}
    assert where["k8s-name"] == {"uri": "apps/svc.yaml", "uriBaseId": "%SRCROOT%"}


def test_sarif_names_standard_input_by_its_name(repo: Path) -> None:
    import subprocess
    import sys

    (repo / "apps" / "sub").mkdir()
    run = subprocess.run(
        [sys.executable, "-m", "generator", "validate", "-", "--format", "sarif"],
        input=BROKEN,
        capture_output=True,
        text=True,
        check=False,
        cwd=repo / "apps" / "sub",
    )
    log = json.loads(run.stdout)
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(log)
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "%3Cstdin%3E"}


def test_output_to_a_directory_that_does_not_exist_is_a_usage_error(gen, repo: Path) -> None:
    run = gen("validate", "apps", "--format", "sarif", "--output", "no/such/dir/gen.sarif")
    assert run.code == 2 and "--output" in run.err


def test_sarif_names_a_file_outside_the_checkout_by_a_file_uri(gen, repo: Path, tmp_path_factory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "svc.yaml"
    elsewhere.write_text(BROKEN)
    run = gen("validate", elsewhere, "--format", "sarif")
    log = json.loads(run.out)
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(log)
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": elsewhere.as_uri()}


@pytest.mark.parametrize("fmt", ["sarif", "junit"])
def test_lint_and_render_speak_the_same_formats(gen, repo: Path, fmt: str) -> None:
    from tests.conftest import POLICIES

    run = gen("lint", POLICIES, "--format", fmt)
    assert run.code == 0 and run.out.lstrip().startswith("{" if fmt == "sarif" else "<?xml"), run.out


def test_standard_input_is_validated_as_kustomize_build_pipes_it(repo: Path) -> None:
    """`kustomize build overlays/prod | gen validate -`, through the real entry point."""
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "generator", "validate", "-"],
        input=BROKEN,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1 and run.stdout.startswith("<stdin>:4:9: error k8s-name "), run.stdout + run.stderr


def test_config_crds_judge_custom_resources_and_the_flag_wins(gen, repo: Path) -> None:
    import shutil

    from tests.test_crds import KUEUE, LOCAL

    shutil.copytree(KUEUE, repo / "vendor" / "kueue")
    (repo / "vendor" / "kueue" / "examples.yaml").unlink()
    (repo / "queues").mkdir()
    (repo / "queues" / "q.yaml").write_text(LOCAL.replace("clusterQueue:", "clusterQeue:"))
    (repo / ".gen.yaml").write_text("crds: [vendor/kueue]\n")
    run = gen("validate", "queues")
    assert run.code == 1 and "did you mean 'clusterQueue'?" in run.out, run.out
    (repo / "empty").mkdir()
    run = gen("validate", "queues", "--crds", "empty")  # the flag wins, and a source of nothing is an error
    assert run.code == 1 and "empty: error crd-source " in run.out and " k8s-unknown-kind " in run.out, run.out


def test_the_readme_worked_example_prints_what_the_readme_says(gen, repo: Path) -> None:
    import re
    import shutil

    from tests.test_crds import KUEUE

    readme = (ROOT / "docs" / "validate-in-ci.md").read_text()
    flavors = re.search(r"```yaml\n(# queues/flavors\.yaml\n.*?)```", readme, re.S)
    shown = re.search(r"```\n\$ gen validate queues --crds vendor/kueue/crds\n(.*?)\n(gen: .*?)\n```", readme, re.S)
    assert flavors and shown
    (repo / "queues").mkdir()
    (repo / "queues" / "flavors.yaml").write_text(flavors[1])
    (repo / "vendor" / "kueue").mkdir(parents=True)
    for name in ("clusterqueues.yaml", "localqueues.yaml", "resourceflavors.yaml"):
        shutil.copy(KUEUE / name, repo / "vendor" / "kueue" / name)
    run = gen("validate", "queues", "--crds", "vendor/kueue")
    assert (run.out.strip(), run.err.strip()) == (shown[1], shown[2])
