"""Custom resources judged by their CRDs, through `gen validate`: the documented examples of
real CRDs pass, and one mutation per schema keyword and per CEL rule fails at its line.

The CRDs under tests/realworld/crds are upstream's (PROVENANCE.md); the custom resources are
written here, after each project's documentation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT, SHARED_CRDS, crd

CRDS = ROOT / "tests" / "realworld" / "crds"
KUEUE = CRDS / "kueue"

QUEUE = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cluster-queue
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 9
      - name: memory
        nominalQuota: 36Gi
"""

FLAVOR = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: spot
spec:
  nodeLabels:
    spot: "true"
  nodeTaints:
  - key: spot
    value: "true"
    effect: NoSchedule
  tolerations:
  - key: spot
    operator: Equal
    value: "true"
    effect: NoSchedule
"""

LOCAL = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: team-a
  name: user-queue
spec:
  clusterQueue: cluster-queue
"""


def findings(text: str) -> list[tuple[int, str, str, str]]:
    """(line, severity, rule, message) of every finding gen printed."""
    out = []
    for line in text.splitlines():
        match = re.match(r"^\S+?:(\d+):\d+: (\w+) (\S+) (.*)$", line)
        if match:
            out.append((int(match[1]), match[2], match[3], match[4]))
    return out


def validate(gen, tmp_path: Path, text: str, *crds: Path):
    path = tmp_path / "cr.yaml"
    path.write_text(text)
    flags = [arg for crd in (crds or (KUEUE,)) for arg in ("--crds", crd)]
    return gen("validate", path, *flags)


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return lines[occurrence - 1]


def test_documented_examples_of_real_crds_validate_clean(gen) -> None:
    """Kueue's, Prometheus Operator's and a cert-manager-shaped CRD, with the custom resources
    their documentation shows: the CRDs among the inputs, nothing reported."""
    run = gen("validate", CRDS)
    assert (run.code, run.out) == (0, ""), run.out


@pytest.mark.parametrize("project", ["kueue", "prometheus-operator", "cert-manager-shaped"])
def test_examples_validate_clean_with_crds_given_apart(gen, project: str) -> None:
    run = gen("validate", CRDS / project / "examples.yaml", "--crds", CRDS / project)
    assert (run.code, run.out) == (0, ""), run.out


def test_without_the_crd_a_custom_resource_stays_unvalidated(gen, tmp_path: Path) -> None:
    path = tmp_path / "cr.yaml"
    path.write_text(QUEUE.replace("nominalQuota: 9", "nominalQouta: 9"))
    run = gen("validate", path)
    assert run.code == 0 and [f[2] for f in findings(run.out)] == ["k8s-unknown-kind"], run.out


# One mutation per schema keyword: (CR text, the text that marks the line, message fragment).
SCHEMA_MUTATIONS = {
    "unknown field": (QUEUE.replace("nominalQuota: 9", "nominalQouta: 9"), "nominalQouta", "did you mean"),
    "type": (
        QUEUE.replace("  namespaceSelector: {}", "  queueingStrategy: 5"),
        "queueingStrategy",
        "",
    ),
    "enum": (QUEUE.replace("  namespaceSelector: {}", "  queueingStrategy: FIFO"), "FIFO", "StrictFIFO"),
    "required": (QUEUE.replace("        nominalQuota: 9\n", ""), "name: cpu", "nominalQuota"),
    "pattern": (QUEUE.replace("  namespaceSelector: {}", "  cohort: Team_A"), "Team_A", ""),
    "maxLength": (QUEUE.replace("  namespaceSelector: {}", "  cohort: " + "a" * 254), "cohort", "253"),
    "minLength": (
        QUEUE.replace("  namespaceSelector: {}", '  excludeResourcePrefixes: [""]'),
        "excludeResourcePrefixes",
        "",
    ),
    "minItems": (QUEUE.replace('["cpu", "memory"]', "[]"), "coveredResources", ""),
    "maxItems": (
        FLAVOR.replace(
            "  tolerations:", "".join(f"  - {{key: k{i}, effect: NoSchedule}}\n" for i in range(8)) + "  tolerations:"
        ),
        "nodeTaints",
        "8",
    ),
    "maxProperties": (
        FLAVOR.replace('    spot: "true"\n', "".join(f"    l{i}: v\n" for i in range(9)), 1),
        "nodeLabels",
        "8",
    ),
    "int-or-string": (QUEUE.replace("nominalQuota: 9", "nominalQuota: true"), "nominalQuota: true", ""),
    "int-or-string pattern": (QUEUE.replace("nominalQuota: 36Gi", "nominalQuota: lots"), "lots", ""),
    "list-type set": (
        QUEUE.replace("  namespaceSelector: {}", "  excludeResourcePrefixes: [a, a]"),
        "excludeResourcePrefixes",
        "",
    ),
    "list-type map keys": (
        QUEUE.replace("      - name: memory\n        nominalQuota: 36Gi", "      - name: cpu\n        nominalQuota: 1"),
        "name: cpu",
        "Duplicate value",
    ),
    "format date-time": (
        FLAVOR.replace(
            "    effect: NoSchedule\n  tolerations", "    effect: NoSchedule\n    timeAdded: yesterday\n  tolerations"
        ),
        "timeAdded",
        "date-time",
    ),
    "minimum": (
        LOCAL + "status:\n  conditions:\n  - {type: Active, status: 'True', reason: Ready, message: '', "
        "lastTransitionTime: '2026-12-01T00:00:00Z', observedGeneration: -1}\n",
        "observedGeneration",
        "at least 0",
    ),
    "metadata": (LOCAL.replace("  name: user-queue", "  name: user-queue\n  lables: {a: b}"), "lables", ""),
}


@pytest.mark.parametrize("keyword", SCHEMA_MUTATIONS)
def test_a_schema_mutation_fails_at_its_line(gen, tmp_path: Path, keyword: str) -> None:
    text, marker, fragment = SCHEMA_MUTATIONS[keyword]
    occurrence = 2 if keyword == "list-type map keys" else 1
    run = validate(gen, tmp_path, text)
    found = [f for f in findings(run.out) if f[1] == "error"]
    assert run.code == 1 and found, run.out
    at = line_of(text, marker, occurrence)
    assert any(f[0] == at and f[2] == "crd-schema" and fragment in f[3] for f in found), run.out


# Every CEL rule of the CRDs the tests use, broken once: (CR text, marker, the rule's message).
CEL_MUTATIONS = {
    "taint effect": (
        FLAVOR.replace("    effect: NoSchedule\n  tolerations", "    effect: Sometimes\n  tolerations"),
        "nodeTaints",
        "supported taint effect values",
    ),
    "toleration operator without key": (
        FLAVOR.replace("  - key: spot\n    operator: Equal", "  - operator: Equal", 1).replace(
            "  - key: spot\n    value", "  - key: spot\n    value", 1
        ),
        "tolerations",
        "operator must be Exists when 'key' is empty",
    ),
    "tolerationSeconds needs NoExecute": (
        FLAVOR + "    tolerationSeconds: 30\n",
        "tolerations",
        "effect must be 'NoExecute'",
    ),
    "toleration operator values": (
        FLAVOR.replace("operator: Equal", "operator: Equals"),
        "tolerations",
        "supported toleration values",
    ),
    "Exists takes no value": (
        FLAVOR.replace("operator: Equal", "operator: Exists"),
        "tolerations",
        "a value must be empty",
    ),
    "toleration effect": (
        FLAVOR.rstrip().removesuffix("NoSchedule") + "Sometimes\n",
        "tolerations",
        "supported taint effect values",
    ),
    "topology needs labels": (
        FLAVOR.replace('  nodeLabels:\n    spot: "true"\n', "  topologyName: rack\n"),
        "spec:",
        "no such key: nodeLabels",
    ),
    "borrowWithinCohort needs reclaim (after defaults)": (
        QUEUE.replace("  namespaceSelector: {}", "  preemption:\n    borrowWithinCohort:\n      policy: LowerPriority"),
        "preemption",
        "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
    ),
    "flavors cover every resource": (
        QUEUE.replace("      - name: memory\n        nominalQuota: 36Gi\n", ""),
        "- coveredResources",
        "flavors must have the same number of resources",
    ),
    "borrowingLimit needs a cohort": (
        QUEUE.replace("nominalQuota: 9", "nominalQuota: 9\n        borrowingLimit: 1"),
        "spec:",
        "borrowingLimit must be nil when cohort is empty",
    ),
}


@pytest.mark.parametrize("case", CEL_MUTATIONS)
def test_a_cel_rule_fails_at_its_field(gen, tmp_path: Path, case: str) -> None:
    text, marker, message = CEL_MUTATIONS[case]
    run = validate(gen, tmp_path, text)
    rules = [f for f in findings(run.out) if f[2] == "crd-rule"]
    assert run.code == 1 and len(rules) >= 1, run.out
    assert any(f[0] == line_of(text, marker) and message in f[3] for f in rules), run.out


def test_the_cel_rules_pass_where_the_examples_hold(gen, tmp_path: Path) -> None:
    for text in (QUEUE, FLAVOR, LOCAL, QUEUE.replace("  namespaceSelector: {}", "  cohort: shared")):
        run = validate(gen, tmp_path, text)
        assert (run.code, run.out) == (0, ""), run.out


def test_transition_rules_wait_for_an_update(gen, tmp_path: Path) -> None:
    """`self == oldSelf` (LocalQueue's immutable clusterQueue) is not evaluated on create."""
    run = validate(gen, tmp_path, LOCAL.replace("clusterQueue: cluster-queue", "clusterQueue: other"))
    assert (run.code, run.out) == (0, ""), run.out


def test_a_deprecated_version_warns_with_the_crds_words(gen, tmp_path: Path) -> None:
    run = validate(gen, tmp_path, FLAVOR.replace("v1beta2", "v1beta1"))
    assert run.code == 0 and findings(run.out) == [
        (
            1,
            "warning",
            "crd-deprecated",
            "This version is deprecated. Use v1beta2 instead. (hint: kube-apiserver answers every request for it "
            "with this warning; served: kueue.x-k8s.io/v1beta2)",
        )
    ], run.out
    assert validate(gen, tmp_path, FLAVOR).out == ""


def test_an_unserved_or_unknown_version_is_refused(gen, tmp_path: Path) -> None:
    run = validate(gen, tmp_path, LOCAL.replace("v1beta1", "v1alpha1"))
    assert run.code == 1 and findings(run.out)[0][:3] == (1, "error", "crd-version"), run.out
    assert "kueue.x-k8s.io/v1beta1" in run.out
    crd = tmp_path / "crd.yaml"
    crd.write_text(
        (KUEUE / "resourceflavors.yaml")
        .read_text()
        .replace("    storage: false", "    storage: false\n    served: false")
        .replace("    served: true\n    storage: false", "    storage: false")
    )
    run = validate(gen, tmp_path, FLAVOR, crd)
    assert "does not serve version v1beta2" in run.out and run.code == 1, run.out


CERT = (CRDS / "cert-manager-shaped" / "examples.yaml").read_text()


def test_field_path_and_message_expression(gen, tmp_path: Path) -> None:
    run = validate(gen, tmp_path, CERT.replace("size: 256", "size: 2048"), CRDS / "cert-manager-shaped")
    assert findings(run.out) == [
        (
            line_of(CERT, "size: 256"),
            "error",
            "crd-rule",
            "an ECDSA key size must be 256, 384 or 521 (hint: x-kubernetes-validations rule: !has(self.size) || !has(self.algorithm) || self.algorithm != 'ECDSA' || self.size in [256, 384, 521])",
        )
    ], run.out
    run = validate(gen, tmp_path, CERT.replace("  duration: 2160h\n", ""), CRDS / "cert-manager-shaped")
    assert "renewBefore 360h needs duration" in run.out and run.code == 1, run.out


CEL_CRD = crd(
    "example.com",
    "Gadget",
    """\
type: object
properties:
  name: {type: string}
  memory: {type: string}
  tags: {type: array, items: {type: integer}}
  cidr: {type: string}
  x-index: {type: integer}
  ratio: {type: number}
  url: {type: string}
x-kubernetes-validations:
- rule: "!has(self.name) || self.name.lowerAscii() == self.name"
  message: name must be lower case
- rule: "!has(self.memory) || quantity(self.memory).isLessThan(quantity('1Gi'))"
  message: memory must be under 1Gi
- rule: "!has(self.tags) || self.tags.isSorted()"
  message: tags must be sorted
- rule: "!has(self.cidr) || cidr(self.cidr).containsIP('10.0.0.1')"
  message: cidr must hold 10.0.0.1
- rule: "!has(self.x__dash__index) || self.x__dash__index < 10"
  message: x-index must be under 10
- rule: "!has(self.ratio) || self.ratio < 1.5"
  message: ratio must be under 1.5
- rule: "!has(self.url) || isURL(self.url)"
  message: url must be a URL
""",
)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("name: Big", "name must be lower case"),
        ("memory: 2Gi", "memory must be under 1Gi"),
        ("tags: [3, 1]", "tags must be sorted"),
        ("cidr: 192.168.0.0/16", "cidr must hold 10.0.0.1"),
        ("x-index: 12", "x-index must be under 10"),
        ("ratio: 2", "ratio must be under 1.5"),
    ],
)
def test_kubernetes_cel_libraries(gen, tmp_path: Path, spec: str, message: str) -> None:
    crd = tmp_path / "crd.yaml"
    crd.write_text(CEL_CRD)
    cr = "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: ns}\nspec:\n  SPEC\n"
    bad = validate(gen, tmp_path, cr.replace("SPEC", spec), crd)
    assert bad.code == 1 and message in bad.out, bad.out
    good = {
        "name: Big": "name: big",
        "memory: 2Gi": "memory: 512Mi",
        "tags: [3, 1]": "tags: [1, 3]",
        "cidr: 192.168.0.0/16": "cidr: 10.0.0.0/8",
        "x-index: 12": "x-index: 2",
        "ratio: 2": "ratio: 1",
    }[spec]
    ok = validate(gen, tmp_path, cr.replace("SPEC", good), crd)
    assert (ok.code, ok.out) == (0, ""), ok.out


def test_a_rule_gen_cannot_evaluate_is_information_naming_it(gen, tmp_path: Path) -> None:
    crd = tmp_path / "crd.yaml"
    crd.write_text(CEL_CRD)
    run = validate(
        gen, tmp_path, "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec:\n  url: x\n", crd
    )
    assert run.code == 0, run.out
    assert findings(run.out) == [
        (
            4,
            "info",
            "crd-unevaluated",
            "rule '!has(self.url) || isURL(self.url)' not evaluated: it calls isURL(), which gen does not provide (hint: kube-apiserver evaluates it when the object is applied)",
        )
    ], run.out


DEFINITION = (KUEUE / "localqueues.yaml").read_text()
CRD_MUTATIONS = {
    "name is not plural.group": (
        DEFINITION.replace("name: localqueues.kueue.x-k8s.io", "name: queues.kueue.x-k8s.io"),
        "name: queues",
        "localqueues.kueue.x-k8s.io",
    ),
    "two storage versions": (
        DEFINITION.replace(
            "  versions:\n",
            "  versions:\n  - name: v1alpha1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n",
        ),
        "  versions:",
        "exactly one version marked as storage",
    ),
    "not structural": (
        DEFINITION.replace(
            "pendingWorkloads:\n                format: int32\n                type: integer\n",
            "pendingWorkloads:\n                format: int32\n",
        ),
        "pendingWorkloads:",
        "must not be empty for specified object fields",
    ),
    "type inside anyOf": (
        DEFINITION.replace(
            "          spec:\n            properties:\n",
            "          spec:\n            anyOf:\n            - type: object\n              required: [clusterQueue]\n"
            "            properties:\n",
        ),
        "- type: object",
        "inside allOf, anyOf, oneOf or not",
    ),
    "map without keys": (
        DEFINITION.replace("                x-kubernetes-list-map-keys:\n                - type\n", ""),
        "conditions:",
        "must not be empty if x-kubernetes-list-type is map",
    ),
    "group without a dot": (
        DEFINITION.replace("group: kueue.x-k8s.io", "group: kueue").replace(
            "name: localqueues.kueue.x-k8s.io", "name: localqueues.kueue"
        ),
        "group: kueue",
        "at least one dot",
    ),
    "uniqueItems": (
        DEFINITION.replace(
            "                x-kubernetes-list-type: map\n              flavorUsage",
            "                x-kubernetes-list-type: map\n                uniqueItems: true\n              flavorUsage",
        ),
        "uniqueItems",
        "quadratic",
    ),
    "metadata beyond name": (
        DEFINITION.replace(
            "          metadata:\n            type: object\n",
            "          metadata:\n            type: object\n            properties:\n              labels: {type: object}\n",
            1,
        ),
        "          metadata:",
        "only name and generateName",
    ),
}


@pytest.mark.parametrize("case", CRD_MUTATIONS)
def test_a_crd_kube_apiserver_refuses(gen, tmp_path: Path, case: str) -> None:
    text, marker, message = CRD_MUTATIONS[case]
    path = tmp_path / "crd.yaml"
    path.write_text(text)
    run = gen("validate", path)
    invalid = [f for f in findings(run.out) if f[2] == "crd-invalid"]
    assert run.code == 1 and invalid, run.out
    assert any(f[0] == line_of(text, marker) and message in f[3] for f in invalid), run.out


def test_the_upstream_crds_are_valid(gen) -> None:
    run = gen("validate", *(p for p in CRDS.rglob("*.yaml") if p.name != "examples.yaml"))
    assert (run.code, run.out) == (0, ""), run.out


def test_a_crd_among_the_inputs_wins_over_the_bundled_schema(gen, tmp_path: Path) -> None:
    """PrometheusRule has a bundled schema; a team's own CRD (here one that adds a field) decides."""
    crd = (CRDS / "prometheus-operator" / "prometheusrules.yaml").read_text()
    (tmp_path / "crd.yaml").write_text(
        crd.replace(
            "                    limit:\n",
            "                    team:\n                      type: string\n                    limit:\n",
        )
    )
    example = (CRDS / "prometheus-operator" / "examples.yaml").read_text()
    (tmp_path / "rule.yaml").write_text(example.replace("  - name: gpu.rules\n", "  - name: gpu.rules\n    team: ml\n"))
    assert gen("validate", tmp_path / "rule.yaml").code == 1  # the bundled schema knows no team
    run = gen("validate", tmp_path)
    assert (run.code, run.out) == (0, ""), run.out


@pytest.mark.skipif(not SHARED_CRDS.is_dir(), reason="the shared reference CRDs are beside the clone")
@pytest.mark.parametrize(
    "kind", ["application", "applicationset", "gitrepository", "kustomization", "prometheusrule", "servicemonitor"]
)
def test_bundled_crd_schemas_judge_the_reference_examples(gen, kind: str) -> None:
    """The bundled schemas, with no CRD given: each reference example passes, its typo fails."""
    examples = SHARED_CRDS / "examples"
    good = gen("validate", examples / f"{kind}-valid.yaml")
    assert good.code == 0 and " error " not in good.out, good.out
    bad = gen("validate", examples / f"{kind}-typo.yaml")
    assert bad.code == 1 and "unknown field" in bad.out, bad.out


def test_render_judges_custom_resources_by_the_crds_beside_them(gen, tmp_path: Path) -> None:
    """A Manifests policy over Kueue's CRDs and queues: the CRDs' scopes keep the policy's
    namespace off cluster-scoped kinds, and their rules judge the queues at their lines."""
    import shutil

    import yaml

    shutil.copytree(KUEUE, tmp_path / "kueue")
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "queues.yaml").write_text(
        "apiVersion: gen/v1alpha1\nkind: Manifests\nmetadata:\n  name: kueue\n"
        "spec:\n  namespace: team-a\n  files: [../kueue]\n"
    )
    run = gen("render", tmp_path / "policies", "--out", tmp_path / "deploy", "--strict")
    assert (run.code, run.out) == (0, ""), run.err
    written = {
        (obj["kind"], obj["metadata"].get("namespace"))
        for path in (tmp_path / "deploy").rglob("*.yaml")
        if path.name != "kustomization.yaml"
        for obj in [yaml.safe_load(path.read_text())]
        if obj["kind"] != "CustomResourceDefinition"
    }
    assert written == {("ResourceFlavor", None), ("ClusterQueue", None), ("LocalQueue", "default")}
    examples = tmp_path / "kueue" / "examples.yaml"
    text = examples.read_text()
    examples.write_text(text.replace("    effect: NoSchedule\n  tolerations", "    effect: Sometimes\n  tolerations"))
    run = gen("render", tmp_path / "policies", "--out", tmp_path / "deploy")
    assert run.code == 1 and f"examples.yaml:{line_of(text, 'nodeTaints')}:3: error crd-rule" in run.err, run.err


@pytest.mark.parametrize("keys", ["1", "[[type]]", "[]", "{a: b}"])
def test_a_crd_of_the_wrong_shape_under_crds_is_no_crash(gen, tmp_path: Path, keys: str) -> None:
    """A CRD under --crds is not validated first: its odd shapes must not break the run (found by the fuzz)."""
    crd = tmp_path / "crd.yaml"
    crd.write_text(
        (KUEUE / "localqueues.yaml")
        .read_text()
        .replace(
            "                x-kubernetes-list-map-keys:\n                - type\n",
            f"                x-kubernetes-list-map-keys: {keys}\n",
        )
    )
    run = validate(gen, tmp_path, LOCAL, crd)
    assert run.code in (0, 1) and "Traceback" not in run.err, run.err
    # read for its schema only: its own findings are not this run's; one kube-apiserver refuses
    # defines nothing, which the source's one finding says
    assert " crd-invalid " not in run.out and " k8s-schema " not in run.out, run.out
    assert all(" crd-source " in line for line in run.out.splitlines() if "crd.yaml" in line), run.out
    among = gen("validate", tmp_path / "cr.yaml", crd, "--crds", crd)  # among the inputs, it is judged
    assert " crd-invalid " in among.out or " k8s-schema " in among.out, among.out


FORMATS_CRD = CEL_CRD.replace(
    """              url: {type: string}
""",
    """              url: {type: string}
              id: {type: string, format: uuid}
              mac: {type: string, format: mac}
              addr: {type: string, format: ipv4}
              net: {type: string, format: cidr}
              starts: {type: string, format: date-time}
              ends: {type: string, format: date-time}
              day: {type: string, format: date}
              blob: {type: string, format: byte}
              timeout: {type: string, format: duration}
""",
).replace(
    """            - rule: "!has(self.url) || isURL(self.url)"
              message: url must be a URL
""",
    """            - rule: "!has(self.starts) || !has(self.ends) || self.starts < self.ends"
              message: starts must come before ends
            - rule: "!has(self.timeout) || self.timeout <= duration('1h')"
              message: timeout must be at most an hour
""",
)


@pytest.mark.parametrize(
    ("spec", "ok"),
    [
        ("id: 123e4567-e89b-12d3-a456-426614174000", True),
        ("id: 123E4567E89B12D3A456426614174000", True),
        ("id: 123e4567-e89b-12d3-a456", False),
        ("mac: 02:00:5e:10:00:00:00:01", True),
        ("mac: 02:00:5e", False),
        ("addr: 10.0.0.1", True),
        ("addr: 10.0.0.256", False),
        ("net: 10.0.0.0/8", True),
        ("net: 10.0.0.0", False),
        ("day: '2026-02-28'", True),
        ("day: '2026-02-30'", False),
        ("blob: aGVsbG8=", True),
        ("blob: not base64!", False),
        ("{starts: '2026-01-01T00:00:00Z', ends: '2026-06-01T12:00:00+02:00'}", True),
        ("{starts: '2026-06-01T00:00:00Z', ends: '2026-01-01T00:00:00Z'}", False),
        ("starts: '2026-13-01T00:00:00Z'", False),
        ("timeout: 30m", True),
        ("timeout: 2h", False),
    ],
)
def test_formats_and_their_cel_types(gen, tmp_path: Path, spec: str, ok: bool) -> None:
    """kube-openapi's formats, and CEL's view of date-time and duration strings as timestamps
    and durations."""
    crd = tmp_path / "crd.yaml"
    crd.write_text(FORMATS_CRD)
    body = spec if spec.startswith("{") else "{" + spec + "}"
    run = validate(
        gen, tmp_path, f"apiVersion: example.com/v1\nkind: Gadget\nmetadata: {{name: g}}\nspec: {body}\n", crd
    )
    assert (run.code == 0 and run.out == "") if ok else (run.code == 1 and " error crd-" in run.out), run.out


def test_a_removed_v1beta1_crd_judges_nothing(gen, tmp_path: Path) -> None:
    """apiextensions.k8s.io/v1beta1 is gone since 1.22: the CRD is refused, its resources stay unknown."""
    crd = tmp_path / "crd.yaml"
    crd.write_text(
        (KUEUE / "localqueues.yaml").read_text().replace("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")
    )
    (tmp_path / "q.yaml").write_text(LOCAL)
    run = gen("validate", tmp_path)
    assert sorted(f[2] for f in findings(run.out)) == ["k8s-api-version", "k8s-unknown-kind"], run.out


def test_identical_values_share_a_verdict_and_each_keeps_its_line(gen, tmp_path: Path) -> None:
    """Verdicts are remembered by value: the second flavor with the same bad tolerations is
    reported at its own line, and a different value is judged anew."""
    bad = FLAVOR.replace("operator: Equal", "operator: Equals")
    text = (
        bad + "---\n" + bad.replace("name: spot", "name: spot-2") + "---\n" + FLAVOR.replace("name: spot", "name: ok")
    )
    run = validate(gen, tmp_path, text)
    lines = [f[0] for f in findings(run.out) if f[2] == "crd-rule"]
    assert lines == [line_of(text, "tolerations", 1), line_of(text, "tolerations", 2)], run.out


def test_an_unknown_kind_of_any_shape_is_only_warned_about(gen, tmp_path: Path) -> None:
    """No CRD: only what holds for any object is checked (odd metadata crashed a release before; found by the fuzz)."""
    path = tmp_path / "cr.yaml"
    path.write_text("apiVersion: example.com/v1\nkind: Gadget\nmetadata: 1\nspec: [1, 2]\n")
    run = gen("validate", path)
    assert run.code == 0 and [f[2] for f in findings(run.out)] == ["k8s-unknown-kind"], run.out


def test_a_crd_whose_root_properties_are_no_mapping_is_no_crash(gen, tmp_path: Path) -> None:
    """Found by the fuzz: the root schema's properties read as a mapping to find metadata's."""
    definition = tmp_path / "crd.yaml"
    definition.write_text(
        crd("example.com", "Widget", "{type: object}").replace(
            "properties:\n          spec: {type: object}", "properties: 1"
        )
    )
    (tmp_path / "cr.yaml").write_text(
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\n"
    )
    run = gen("validate", tmp_path / "cr.yaml", "--crds", definition)
    assert run.code in (0, 1) and "Traceback" not in run.err, run.err
    among = gen("validate", definition, tmp_path / "cr.yaml")
    assert among.code == 1 and "crd.yaml:15:21: error k8s-schema" in among.out, among.out


NOT_A_SCHEMA = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              policy:
                type: string
                enum: 0
                default: Never
"""


def test_a_default_under_a_node_that_is_no_schema_is_not_judged_by_it(gen, tmp_path: Path) -> None:
    """`enum: 0` is no schema: the CRD is refused for it, at its line, and the default beside it
    is not judged against it (found by the CRD mutation fuzz: it crashed)."""
    crd = tmp_path / "crd.yaml"
    crd.write_text(NOT_A_SCHEMA)
    widget = tmp_path / "widget.yaml"
    widget.write_text("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: apps}\nspec: {}\n")
    for run in (gen("validate", crd), gen("validate", widget, "--crds", crd)):
        assert run.code in (0, 1) and "internal error" not in run.err, run.err
    assert "crd.yaml:22:23: error k8s-schema" in gen("validate", crd).out
