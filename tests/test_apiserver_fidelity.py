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
