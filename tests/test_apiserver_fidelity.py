"""kube-apiserver's verdicts where it differs from reading the bytes: what defaulting and pruning
complete before validation is no error, and what the published API types declare (enums,
quantities, list-map keys) is checked wherever they declare it. Each case runs `gen validate`
on a manifest kube-apiserver judges one way and on its twin it judges the other."""

from __future__ import annotations

from pathlib import Path

import pytest


def _validate(gen, tmp_path: Path, text: str, *args: str):
    path = tmp_path / "manifest.yaml"
    path.write_text(text)
    return gen("validate", path, *args)


VAP = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: team-label
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  validations:
  - expression: "EXPRESSION"
"""


@pytest.mark.parametrize(
    "expression",
    [
        "request.userInfo.extra[?'team'].orValue([]).size() >= 0",
        "object.metadata.?labels.?team.orValue('') != 'x'",
        "[?object.metadata.?name, 'a'].size() > 0",
    ],
)
def test_cel_optional_types_compile(gen, tmp_path: Path, expression: str) -> None:
    """cel-go's optional types are in Kubernetes' base CEL environment since 1.28."""
    run = _validate(gen, tmp_path, VAP.replace("EXPRESSION", expression))
    assert run.code == 0, run.out


def test_cel_that_does_not_parse_is_still_refused(gen, tmp_path: Path) -> None:
    run = _validate(gen, tmp_path, VAP.replace("EXPRESSION", "object.metadata.?labels.? == 1"))
    assert run.code == 1 and "k8s-admission-policy" in run.out and "does not compile" in run.out


@pytest.mark.parametrize(
    ("expression", "undeclared"),
    [
        ("objekt.metadata.name != ''", "objekt"),
        ("object.spec.containers.all(c, c.image != image)", "image"),
        ("has(object.spec) && size(object.spec.containers) > limit", "limit"),
        # bound by a macro or cel.bind, read through a namespace, a type's name: all declared
        ("object.spec.containers.all(c, c.ports.exists(p, p.containerPort > 1024))", None),
        ("cel.bind(names, object.spec.containers.map(c, c.name), names.size() == 1)", None),
        ("type(object.spec.priority) == int && sets.contains(['a'], ['a'])", None),
        ("variables.size() >= 0 || params.x == namespaceObject.metadata.name", None),
    ],
)
def test_a_variable_the_environment_does_not_declare_is_refused(
    gen, tmp_path: Path, expression: str, undeclared: str | None
) -> None:
    """cel-go refuses a name its environment does not declare ("undeclared reference"); gen
    refuses it where no macro, bind or namespace may explain the name, and nothing else."""
    run = _validate(gen, tmp_path, VAP.replace("EXPRESSION", expression))
    if undeclared is None:
        assert run.code == 0, run.out
    else:
        assert run.code == 1 and f"undeclared reference to '{undeclared}'" in run.out, run.out


CLUSTER_ROLE_BINDING = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: read-all
roleRef:
  kind: ClusterRole
  name: view
GROUPsubjects:
- kind: Group
  name: readers
"""


def test_a_role_ref_without_api_group_is_defaulted(gen, tmp_path: Path) -> None:
    """SetDefaults_ClusterRoleBinding fills roleRef.apiGroup before validation."""
    assert _validate(gen, tmp_path, CLUSTER_ROLE_BINDING.replace("GROUP", "")).code == 0
    wrong = CLUSTER_ROLE_BINDING.replace("GROUP", "  apiGroup: rbac.example.com\n")
    run = _validate(gen, tmp_path, wrong)
    assert run.code == 1 and "k8s-rbac" in run.out and "rbac.authorization.k8s.io" in run.out


INDEXED_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: ranks
spec:
  completionMode: Indexed
PARALLELISM  template:
    spec:
      restartPolicy: Never
      containers:
      - name: rank
        image: registry.example/rank:1.0
"""


def test_an_indexed_job_without_completions_is_defaulted(gen, tmp_path: Path) -> None:
    """SetDefaults_Job: neither completions nor parallelism set means one of each; with
    parallelism set, completions stays unset and an Indexed Job is refused."""
    assert _validate(gen, tmp_path, INDEXED_JOB.replace("PARALLELISM", "")).code == 0
    run = _validate(gen, tmp_path, INDEXED_JOB.replace("PARALLELISM", "  parallelism: 4\n"))
    assert run.code == 1 and "completions is required when completion mode is Indexed" in run.out


WIDGET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
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
              size:
                type: SIZE_TYPE
              plugin:
                type: object
                properties:
                  image: {type: string}
              mode:
                type: string
                enum: [fast, slow]
                default: fast
              note:
                type: string
                nullable: true
"""


def test_a_crd_schema_type_outside_openapi_is_refused(gen, tmp_path: Path) -> None:
    run = _validate(gen, tmp_path, WIDGET_CRD.replace("SIZE_TYPE", "strign"))
    assert run.code == 1 and "crd-invalid" in run.out and 'Unsupported value: "strign"' in run.out
    assert _validate(gen, tmp_path, WIDGET_CRD.replace("SIZE_TYPE", "string")).code == 0


def test_nulls_a_schema_does_not_allow_are_pruned(gen, tmp_path: Path) -> None:
    """apiextensions-apiserver drops a null where the schema is not nullable (and defaults it
    where the schema has a default) before validating; a wrong type stays an error."""
    crd = tmp_path / "crd.yaml"
    crd.write_text(WIDGET_CRD.replace("SIZE_TYPE", "string"))
    widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n"
    nulls = widget + "  size: null\n  plugin: null\n  mode: null\n  note: null\n"
    assert _validate(gen, tmp_path, nulls, "--crds", str(crd)).code == 0
    run = _validate(gen, tmp_path, widget + "  plugin: 3\n", "--crds", str(crd))
    assert run.code == 1 and "'plugin' takes a mapping" in run.out


SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: TYPE
  selector: {app: web}
  ports:
  - port: 80
"""


def test_a_service_type_outside_its_enum_is_refused(gen, tmp_path: Path) -> None:
    run = _validate(gen, tmp_path, SERVICE.replace("TYPE", "LoadBalancers"))
    assert run.code == 1 and "k8s-enum" in run.out and '"LoadBalancer"' in run.out
    assert ":6:9:" in run.out  # at the value
    assert _validate(gen, tmp_path, SERVICE.replace("TYPE", "LoadBalancer")).code == 0


QUANTITIES = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: STORAGE
---
apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
spec:
  limits:
  - type: Container
    default:
      memory: MEMORY
---
apiVersion: v1
kind: Pod
metadata:
  name: scratch
spec:
  containers:
  - name: work
    image: registry.example/work:1.0
  volumes:
  - name: tmp
    emptyDir:
      sizeLimit: SIZE
"""


def test_quantities_are_checked_wherever_the_type_is_one(gen, tmp_path: Path) -> None:
    """resource.Quantity does not decode `5GB`: kube-apiserver refuses the request."""
    bad = QUANTITIES.replace("STORAGE", "5GB").replace("MEMORY", "512MB").replace("SIZE", "1GB")
    run = _validate(gen, tmp_path, bad)
    assert run.code == 1 and run.out.count("k8s-quantity") == 3, run.out
    assert "5G (10^n) or 5Gi (2^n)" in run.out
    good = QUANTITIES.replace("STORAGE", "5Gi").replace("MEMORY", "512Mi").replace("SIZE", "1G")
    assert _validate(gen, tmp_path, good).code == 0


PORTS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.example/web:1.0
        ports:
        - containerPort: 8080
          name: http
        - containerPort: 8080
          SECOND
"""


def test_a_repeated_list_map_key_is_named(gen, tmp_path: Path) -> None:
    """containerPort+protocol key the ports list (protocol defaults to TCP): kube-apiserver
    accepts a repeat with a warning, server-side apply refuses it."""
    run = _validate(gen, tmp_path, PORTS.replace("SECOND", "name: metrics"), "--strict")
    assert run.code == 1 and "k8s-list-map" in run.out and "containerPort=8080" in run.out
    assert ":18:11:" in run.out  # at the repeated entry
    assert _validate(gen, tmp_path, PORTS.replace("SECOND", "protocol: UDP"), "--strict").code == 0


def test_a_default_fills_only_an_unset_string_never_a_value_of_another_type(gen, tmp_path: Path) -> None:
    """SetDefaults_ContainerPort fills an absent, null or empty protocol; a number there never
    decodes into the string field, so kube-apiserver refuses it before any default (found by
    the patch fuzz: `protocol: 0` was defaulted over and written)."""
    refused = _validate(gen, tmp_path, PORTS.replace("SECOND", "protocol: 0"))
    assert refused.code == 1 and "k8s-schema" in refused.out and ":19:" in refused.out, refused.out
    for unset in ('protocol: ""', "protocol: null"):
        assert "k8s-schema" not in _validate(gen, tmp_path, PORTS.replace("SECOND", unset)).out


DUPLICATE_KEY = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  name: other\ndata: {}\n"


def test_a_duplicate_key_is_an_error_where_kustomize_builds_the_file(gen, tmp_path: Path) -> None:
    """kustomize's YAML reader refuses a repeated key; kubectl keeps the last value."""
    base = tmp_path / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text("resources: [settings.yaml]\n")
    (base / "settings.yaml").write_text(DUPLICATE_KEY)
    (tmp_path / "plain.yaml").write_text(DUPLICATE_KEY)
    built = gen("validate", base / "settings.yaml")
    assert built.code == 1 and "error yaml-duplicate-key" in built.out and "kustomization.yaml" in built.out
    plain = gen("validate", tmp_path / "plain.yaml")
    assert plain.code == 0 and "warning yaml-duplicate-key" in plain.out


def test_a_kustomization_added_beside_a_file_judged_before_makes_its_duplicate_key_an_error(
    gen, tmp_path: Path
) -> None:
    """The verdict hangs on the directory, not on the file's bytes: a kept result still answers it."""
    base = tmp_path / "base"
    base.mkdir()
    (base / "settings.yaml").write_text(DUPLICATE_KEY)
    assert "warning yaml-duplicate-key" in gen("validate", base).out  # judged, and kept in the cache
    (base / "kustomization.yaml").write_text("resources: [settings.yaml]\n")
    assert "error yaml-duplicate-key" in gen("validate", base).out
    (base / "kustomization.yaml").unlink()
    assert "warning yaml-duplicate-key" in gen("validate", base).out


def _config_maps(count: int) -> str:
    """count ConfigMaps of about 100 kB each, as one stream."""
    return "".join(
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n  a: {'v' * 100_000}\n"
        for i in range(count)
    )


def test_standard_input_takes_a_rendered_platform(tmp_path: Path) -> None:
    """Up to 64 MiB by default (a rendered platform is ~9 MB); GEN_MAX_FILE_MIB changes it."""
    import os
    import subprocess
    import sys

    stream = _config_maps(64)  # ~6.4 MB
    command = [sys.executable, "-m", "generator", "validate", "-"]
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    run = subprocess.run(command, input=stream, capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    env["GEN_MAX_FILE_MIB"] = "5"
    run = subprocess.run(command, input=stream, capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 1 and "<stdin>:1:1: error yaml-too-large file is larger than 5 MiB" in run.stdout


def test_the_size_limit_is_a_repository_setting(gen, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GEN_MAX_FILE_MIB", raising=False)
    (tmp_path / ".git").mkdir()
    (tmp_path / "platform.yaml").write_text(_config_maps(13))  # ~1.3 MB
    assert gen("validate", "platform.yaml").code == 0
    (tmp_path / ".gen.yaml").write_text("maxFileMiB: 1\n")
    run = gen("validate", "platform.yaml")
    assert run.code == 1 and "file is larger than 1 MiB" in run.out
    monkeypatch.setenv("GEN_MAX_FILE_MIB", "2")  # the environment wins over the file
    assert gen("validate", "platform.yaml").code == 0


WIDGET = """\
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec:
  size: SIZE
"""


def _catalog(root: Path, schema: str) -> Path:
    """A kubeconform-style catalog: a folder per group, `{kind}_{version}.json` in it."""
    folder = root / "catalog" / "example.com"
    folder.mkdir(parents=True)
    (folder / "widget_v1.json").write_text(schema)
    return root / "catalog"


WIDGET_SCHEMA = (
    '{"$schema": "http://json-schema.org/schema#", "type": "object", "properties": {"spec": {"type": "object",'
    ' "additionalProperties": false, "properties": {"size": {"type": "integer"}}}}}'
)


def test_a_json_schema_catalog_judges_its_kinds(gen, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = _catalog(tmp_path, WIDGET_SCHEMA)
    run = _validate(gen, tmp_path, WIDGET.replace("SIZE", "big"), "--crds", str(catalog))
    assert run.code == 1 and "crd-schema" in run.out and "'size' takes a whole number" in run.out
    assert _validate(gen, tmp_path, WIDGET.replace("SIZE", "3"), "--crds", str(catalog)).code == 0
    monkeypatch.chdir(tmp_path)  # the same from .gen.yaml
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gen.yaml").write_text("crds: [catalog]\n")
    assert "'size' takes a whole number" in _validate(gen, tmp_path, WIDGET.replace("SIZE", "big")).out


def test_a_broken_catalog_schema_is_an_error(gen, tmp_path: Path) -> None:
    catalog = _catalog(tmp_path, '{"type": "object", "properties": ')
    run = _validate(gen, tmp_path, WIDGET.replace("SIZE", "3"), "--crds", str(catalog))
    assert run.code == 1 and "crd-source" in run.out and "widget_v1.json" in run.out


def test_a_crd_source_that_defines_nothing_is_an_error(gen, tmp_path: Path) -> None:
    """Before, such a source was silently ignored: exit 0 with an unknown-kind warning."""
    source = tmp_path / "service.yaml"
    source.write_text(SERVICE.replace("TYPE", "ClusterIP"))
    run = _validate(gen, tmp_path, WIDGET.replace("SIZE", "3"), "--crds", str(source))
    assert run.code == 1 and f"{source.name}:1:1: error crd-source" in run.out


@pytest.mark.parametrize(
    ("bad", "good", "words"),
    [
        (
            "type: string\n                x-kubernetes-validations:\n                - rule: self.size() >",
            "type: string\n                x-kubernetes-validations:\n                - rule: self.size() > 0",
            "compilation failed",
        ),
        (
            "type: string\n                x-kubernetes-preserve-unknown-fields: false",
            "type: string",
            "must be true or undefined",
        ),
        (
            "x-kubernetes-int-or-string: true\n                x-kubernetes-preserve-unknown-fields: true",
            "x-kubernetes-int-or-string: true",
            "must be false if x-kubernetes-int-or-string is true",
        ),
        (
            "type: array\n                items: {type: string}\n                x-kubernetes-list-type: sets",
            "type: array\n                items: {type: string}\n                x-kubernetes-list-type: set",
            'Unsupported value: "sets"',
        ),
        (
            "type: array\n                items: {type: object, properties: {a: {type: string}}}\n"
            "                x-kubernetes-list-type: set",
            "type: array\n                items: {type: object, properties: {a: {type: string}}, "
            "x-kubernetes-map-type: atomic}\n                x-kubernetes-list-type: set",
            "must be atomic as item of a list with x-kubernetes-list-type=set",
        ),
    ],
)
def test_what_kube_apiserver_refuses_in_a_crd_schema(gen, tmp_path: Path, bad: str, good: str, words: str) -> None:
    """ValidateCustomResourceDefinition: rules compile, x-kubernetes-* values and combinations."""
    run = _validate(gen, tmp_path, WIDGET_CRD.replace("type: SIZE_TYPE", bad))
    assert run.code == 1 and "crd-invalid" in run.out and words in run.out, run.out
    assert _validate(gen, tmp_path, WIDGET_CRD.replace("type: SIZE_TYPE", good)).code == 0


ROLE = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: read-one
  namespace: team
rules:
- apiGroups: [""]
  resources: RESOURCES
  resourceNames: [settings]
  verbs: [get]
"""


def test_resource_names_may_apply_to_several_resources(gen, tmp_path: Path) -> None:
    """ValidatePolicyRule has no check tying resourceNames to one resource (a rule may let someone
    read the ConfigMap and the Secret both named settings); a rule without resources is refused."""
    assert _validate(gen, tmp_path, ROLE.replace("RESOURCES", "[configmaps, secrets]")).code == 0
    run = _validate(gen, tmp_path, ROLE.replace("RESOURCES", "[]"))
    assert run.code == 1 and "resource rules must supply at least one resource" in run.out


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        ("scope: Namespaced", "scope: Namespace", 'Unsupported value: "Namespace"'),
        ("  - name: v1\n", "  - name: V1\n", 'version "V1"'),
        ("scope: Namespaced", "scope: Namespaced\n  preserveUnknownFields: true", "must be false"),
        ("scope: Namespaced", "scope: Namespaced\n  conversion: {strategy: webhook}", 'Unsupported value: "webhook"'),
        (
            "    storage: true\n",
            "    storage: true\n    additionalPrinterColumns:\n    - {name: Size, type: int, jsonPath: .spec.size}\n",
            'Unsupported value: "int"',
        ),
        (
            "    storage: true\n",
            "    storage: true\n    subresources:\n      scale: {specReplicasPath: .replicas, statusReplicasPath: .status.n}\n",
            "should be a json path under .spec",
        ),
    ],
)
def test_what_kube_apiserver_refuses_in_a_crd_spec(gen, tmp_path: Path, old: str, new: str, words: str) -> None:
    """ValidateCustomResourceDefinitionSpec: scope, version names, conversion, preserveUnknownFields."""
    crd = WIDGET_CRD.replace("SIZE_TYPE", "string")
    assert old in crd
    run = _validate(gen, tmp_path, crd.replace(old, new))
    assert run.code == 1 and "crd-invalid" in run.out and words in run.out, run.out


def test_an_enum_at_the_top_of_a_kind_is_checked(gen, tmp_path: Path) -> None:
    """PriorityClass.preemptionPolicy sits on the kind itself, not in a spec."""
    priority = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: high\nvalue: 1000\n"
    run = _validate(gen, tmp_path, priority + "preemptionPolicy: Nevr\n")
    assert run.code == 1 and 'k8s-enum Unsupported value: "Nevr"' in run.out
    assert _validate(gen, tmp_path, priority + "preemptionPolicy: Never\n").code == 0


def test_every_shipped_version_has_its_declared_enums() -> None:
    """schemas/kubernetes-api/enums.json names the k8s.io/api commit it read for each version
    gen validates; a version without one would silently check no enum."""
    from generator import schemas
    from generator.kube import api_versions

    data = schemas.read("kubernetes-api/enums.json")
    assert {api_versions.spell(v) for v in api_versions.shipped()} <= set(data["commits"])
    assert all(len(commit.split()[-1]) == 40 for commit in data["commits"].values())
    service_types = data["fields"]["io.k8s.api.core.v1.ServiceSpec.type"]
    assert service_types[0] == ["1.25", ["ClusterIP", "NodePort", "LoadBalancer", "ExternalName"]]


def test_a_crd_source_named_that_no_tool_applies_is_an_error(gen, tmp_path: Path) -> None:
    """A kustomization named as a CRD source defines nothing: said, not skipped in silence."""
    source = tmp_path / "kustomization.yaml"
    source.write_text("resources: [crds.yaml]\n")
    run = _validate(gen, tmp_path, WIDGET.replace("SIZE", "3"), "--crds", str(source))
    assert run.code == 1 and "kustomization.yaml:1:1: error crd-source" in run.out


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: slow
spec:
  minReadySeconds: READY
  selector:
    matchLabels: {app: slow}
  template:
    metadata:
      labels: {app: slow}
    spec:
      containers:
      - name: app
        image: registry.example/slow:1.0
"""


def test_a_deployment_is_judged_with_its_default_progress_deadline(gen, tmp_path: Path) -> None:
    """SetDefaults_Deployment sets progressDeadlineSeconds to 600, which minReadySeconds must stay below."""
    run = _validate(gen, tmp_path, DEPLOYMENT.replace("READY", "900"))
    assert run.code == 1 and "progressDeadlineSeconds 600 must be greater than minReadySeconds 900" in run.out
    assert _validate(gen, tmp_path, DEPLOYMENT.replace("READY", "30")).code == 0


VOLUMES = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: disks
spec:
  selector: {matchLabels: {app: disks}}
  template:
    metadata: {labels: {app: disks}}
    spec:
      serviceAccountName: disks
      containers:
      - name: app
        image: registry.example/disks:1.0
      volumes:
      - name: scratch
      - name: pod-name
        downwardAPI: {items: [{path: name, fieldRef: {fieldPath: metadata.name}}]}
      - name: token
        projected: {sources: [{serviceAccountToken: {path: token}}]}
      - name: disk
        azureDisk: {diskName: d, diskURI: /subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/dKIND}
"""


def test_volumes_are_judged_with_their_defaults(gen, tmp_path: Path) -> None:
    """SetDefaults_Volume makes a volume without a source an emptyDir, SetDefaults_ObjectFieldSelector
    reads v1, a projected token lasts an hour, and an azureDisk without a kind is a Shared blob
    disk, whose URI must be https://."""
    run = _validate(gen, tmp_path, VOLUMES.replace("KIND", ""))
    assert run.code == 1 and "1 error," in run.err and "manifest.yaml:21:43: error k8s-volume" in run.out
    assert "https://" in run.out
    assert _validate(gen, tmp_path, VOLUMES.replace("KIND", ", kind: Managed")).code == 0


DIVISOR = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers:
  - name: c
    image: registry.example/app:1.0
    env:
    - name: MEMORY
      valueFrom:
        resourceFieldRef: {resource: limits.memory, divisor: DIVISOR}
    volumeMounts: [{name: info, mountPath: /info}]
  volumes:
  - name: info
    downwardAPI:
      items:
      - path: memory
        resourceFieldRef: {containerName: c, resource: limits.memory, divisor: DIVISOR}
"""


@pytest.mark.parametrize(("divisor", "refused"), [("1Ki", False), ("1000", False), ("1024", True), ("1e3", True)])
def test_a_divisor_is_judged_by_its_canonical_form_in_env_and_volumes_alike(
    gen, tmp_path: Path, divisor: str, refused: bool
) -> None:
    """validateContainerResourceDivisor compares Quantity.String(): 1000 is 1k, but 1024 stays
    1024 and 1e3 keeps its exponent, so neither is a divisor memory takes; an environment
    variable and a downward API volume file are held to the same rule."""
    run = _validate(gen, tmp_path, DIVISOR.replace("DIVISOR", f'"{divisor}"'))
    found = [line for line in run.out.splitlines() if "only divisor's values" in line]
    assert len(found) == (2 if refused else 0), run.out
