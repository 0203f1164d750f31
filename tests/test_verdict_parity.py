"""The fast schema path (jsonschema-rs) reaches the same verdicts as the reference path.

gen asks jsonschema-rs "valid?" first and the reference implementation only to explain a
failure. These tests check, over a corpus with invalid objects, that a fast "valid" never
hides what plain kubernetes-validate or jsonschema would reject, and the other way round.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from generator import schemas
from generator.kube.validate import k8s_validator
from tests.conftest import POLICIES
from tests.test_validate import INVALID, VALID

MUTATIONS: list[tuple[str, Any]] = [
    ("unknown field", lambda o: o.setdefault("spec", {}).__setitem__("bogus", 1)),
    ("wrong type", lambda o: o["metadata"].__setitem__("name", 7)),
    ("labels as list", lambda o: o["metadata"].__setitem__("labels", ["a"])),
    ("null metadata", lambda o: o.__setitem__("metadata", None)),
    ("huge integer", lambda o: o["metadata"].__setitem__("generation", 2**70)),
    ("float where int", lambda o: o["metadata"].__setitem__("generation", 1.5)),
    ("spec as string", lambda o: o.__setitem__("spec", "x")),
]


def _rendered_objects() -> Iterator[dict[str, Any]]:
    from generator import pipeline

    result = pipeline.render(pipeline.RenderOptions(POLICIES, Path("deploy")))
    for plan in result.plans:
        for rel, data in sorted(plan.files.items()):
            if rel.endswith(".yaml") and rel != "kustomization.yaml" and not rel.startswith("integrations/"):
                yield yaml.safe_load(data)


def corpus() -> list[tuple[str, dict[str, Any]]]:
    base = [(f"valid:{k}", v) for k, v in VALID.items()] + [(f"invalid:{k}", v[0]) for k, v in INVALID.items()]
    base += [(f"rendered:{o['kind']}/{o['metadata']['name']}", o) for o in _rendered_objects()]
    mutated = []
    for name, obj in base:
        if not name.startswith("rendered:"):
            continue
        for label, mutate in MUTATIONS:
            bad = copy.deepcopy(obj)
            mutate(bad)
            mutated.append((f"{name} + {label}", bad))
    return base + mutated


CORPUS = corpus()


def _reference_verdict(obj: dict[str, Any]) -> bool:
    try:
        kubernetes_validate.validate(obj, "1.35", strict=True)
    except kubernetes_validate.ValidationError:
        return False
    return True


@pytest.mark.parametrize(("name", "obj"), CORPUS, ids=[n for n, _ in CORPUS])
def test_fast_and_reference_verdicts_agree(name: str, obj: dict[str, Any]) -> None:
    bundled = schemas.MANIFEST_SCHEMA_FILES.get((obj.get("apiVersion"), obj.get("kind")))
    if bundled is not None:
        validator = schemas.validator(bundled)
        reference = schemas._reference_validator(schemas.read(bundled), schemas._registry())
        expected = not list(reference.iter_errors(obj))
    else:
        found = k8s_validator("1.35", obj["apiVersion"], obj["kind"])
        assert found is not None, name
        validator, expected = found, _reference_verdict(obj)
    assert validator.fast_verdict(obj) in (expected, None)  # None: the reference path decides
    assert (not list(validator.iter_errors(obj))) == expected


def test_the_corpus_has_both_verdicts() -> None:
    verdicts = {
        _reference_verdict(o) for _, o in CORPUS if (o["apiVersion"], o["kind"]) not in schemas.MANIFEST_SCHEMA_FILES
    }
    assert verdicts == {True, False}
    assert len(CORPUS) > 150
