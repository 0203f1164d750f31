"""The refusal corpus: cases of Kubernetes' own validation tests (`validation_test.go` tables),
each a manifest under tests/apiserver-corpus/<Kind>/<verdict>/ named after its upstream case.

- valid/: kube-apiserver accepts it; gen must report no error (a false error is worse than a miss).
- invalid/: kube-apiserver refuses it at create; the share gen catches is docs/rules.md's table.
- unreachable/: the upstream function refuses it, but the API server never lets it reach that
  function (the file says why); gen must report no error either.

A case whose verdict depends on how the clusters run kube-apiserver says so on its second line,
`# .gen.yaml: {allowPrivileged: false}`, and is judged with that config.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "apiserver-corpus"
CASES = sorted(CORPUS.glob("*/*/*.yaml"))
UPSTREAM_CASE = re.compile(r"^# \w+ \((?:pkg/apis|staging/src)/[\w/.-]+\): \".+\"$")
SETTINGS = re.compile(r"^# \.gen\.yaml: (\{.*\})$", re.M)


def errors_of(paths: Sequence[str | Path], field: str) -> dict[str, set[str]]:
    """The paths validated in one `gen validate` run: file -> one field ("rule", "path") of each
    of its errors; the cases that name cluster settings, again in a run with those settings."""
    found = _errors_of(paths, field)
    files = [case for p in map(Path, paths) for case in (sorted(p.rglob("*.yaml")) if p.is_dir() else [p])]
    with_settings: dict[str, list[Path]] = {}
    for case in files:
        if named := SETTINGS.search(case.read_text()):
            with_settings.setdefault(named[1], []).append(case)
    for settings, cases in with_settings.items():
        with tempfile.TemporaryDirectory() as directory:
            config = Path(directory, ".gen.yaml")
            config.write_text(settings + "\n")
            for case in cases:
                found.pop(case.resolve().as_posix(), None)
            found.update(_errors_of(cases, field, config))
    return found


def _errors_of(paths: Sequence[str | Path], field: str, config: Path | None = None) -> dict[str, set[str]]:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "generator",
            "validate",
            *map(str, paths),
            "--format",
            "json",
            *(["--config", str(config)] if config is not None else []),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    found: dict[str, set[str]] = {}
    for finding in json.loads(run.stdout):
        if finding["severity"] == "error":
            found.setdefault(Path(finding["file"]).resolve().as_posix(), set()).add(finding[field])
    return found


@pytest.fixture(scope="module")
def errors_by_file() -> dict[str, set[str]]:
    """Every case validated in one `gen validate` run: file -> the rules of its errors."""
    return errors_of([CORPUS], "rule")


def test_every_case_names_its_upstream_test_and_case() -> None:
    assert CASES
    for case in CASES:
        assert case.parent.name in ("valid", "invalid", "unreachable"), case
        assert UPSTREAM_CASE.match(case.read_text().splitlines()[0]), f"{case}: first line names no upstream case"
        if case.parent.name == "unreachable":
            assert "# Unreachable: " in case.read_text(), f"{case}: says not why"


@pytest.mark.parametrize("case", [c for c in CASES if c.parent.name != "invalid"], ids=lambda c: c.stem)
def test_what_kube_apiserver_accepts_gen_accepts(case: Path, errors_by_file: dict[str, set[str]]) -> None:
    assert not errors_by_file.get(case.resolve().as_posix()), f"false error on {case.relative_to(CORPUS)}"


def _table() -> dict[str, tuple[int, int, int]]:
    """docs/rules.md's refusal-corpus rows: kind -> (invalid caught, invalid ported, valid ported)."""
    text = (ROOT / "docs" / "rules.md").read_text()
    section = text.split("### Refusal corpus", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\w+) \| (\d+) of (\d+) \| (\d+) of \d+ \|", section, re.M)
    return {kind: (int(caught), int(ported), int(valid)) for kind, caught, ported, valid in rows}


def test_the_catch_rate_per_kind_is_the_one_documented(errors_by_file: dict[str, set[str]]) -> None:
    caught: Counter[str] = Counter()
    ported: Counter[str] = Counter()
    valid: Counter[str] = Counter()
    for case in CASES:
        kind = case.parent.parent.name
        if case.parent.name == "invalid":
            ported[kind] += 1
            caught[kind] += bool(errors_by_file.get(case.resolve().as_posix()))
        elif case.parent.name == "valid":
            valid[kind] += 1
    measured = {kind: (caught[kind], ported[kind], valid[kind]) for kind in sorted({*ported, *valid})}
    if os.environ.get("UPDATE_DOCS"):
        _rewrite_counts(measured)
    assert _table() == measured, "run UPDATE_DOCS=1 pytest tests/test_apiserver_corpus.py"


def _rewrite_counts(measured: dict[str, tuple[int, int, int]]) -> None:
    """Write the measured counts into the table's rows, keeping each row's source column; a
    kind without a row gets one whose source column says to fill it."""
    path = ROOT / "docs" / "rules.md"
    head, section = path.read_text().split("### Refusal corpus", 1)
    section, sep, tail = section.partition("\n## ")
    lines = section.split("\n")
    rows = {m.group(1): i for i, line in enumerate(lines) if (m := re.match(r"^\| (\w+) \| \d+ of", line))}
    for kind, (caught, ported, valid) in measured.items():
        source = lines[rows[kind]].split(" | ", 3)[3] if kind in rows else "(name the upstream tests) |"
        row = f"| {kind} | {caught} of {ported} | {valid} of {valid} | {source}"
        if kind in rows:
            lines[rows[kind]] = row
        else:
            last = max(rows.values())
            lines.insert(last + 1, row)
            rows = {k: (i + 1 if i > last else i) for k, i in rows.items()} | {kind: last + 1}
    total = [i for i, line in enumerate(lines) if line.startswith("| **all ")]
    ported_all = sum(p for _, p, _ in measured.values())
    lines[total[0]] = (
        f"| **all {len(measured)} kinds** | **{sum(c for c, _, _ in measured.values())} of {ported_all}** | "
        f"**{sum(v for _, _, v in measured.values())} of {sum(v for _, _, v in measured.values())}** | |"
    )
    path.write_text(head + "### Refusal corpus" + "\n".join(lines) + sep + tail)


def test_an_ingress_class_scope_is_cluster_when_unset(gen, tmp_path: Path) -> None:
    """k8s-ingress-class: parameters without a scope are Cluster-scoped, as the API server
    defaults them, so a namespace beside them is refused and none is needed."""
    case = CORPUS / "IngressClass" / "invalid" / "valid-name-valid-controller-invalid-scope.yaml"
    refused = gen("validate", case)
    assert refused.code == 1 and "k8s-ingress-class" in refused.out and "(the default)" in refused.out
    fixed = tmp_path / "ingressclass.yaml"
    fixed.write_text(case.read_text().replace('    namespace: "foo_ns"\n', ""))
    assert gen("validate", fixed).code == 0
