"""`gen validate` keeps each file's findings by its name and content: with the cache it finds
exactly what it finds without, after every kind of edit, and across files (a Namespace's Pod
Security level judges another file's workloads; a CRD judges another file's resources)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator import cache
from generator.cache.validated import Kept
from generator.kube.repository import Validated, validate_paths
from tests.conftest import ROOT, crd, edit

NAMESPACE = """apiVersion: v1
kind: Namespace
metadata:
  name: apps
  labels: {pod-security.kubernetes.io/enforce: restricted}
"""

WORKLOAD = """apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: apps}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: api
        image: registry.example.com/api:1.0.0
        securityContext: {privileged: true}
"""

CRD = crd("example.com", "Widget", "{type: object, properties: {size: {type: integer, maximum: 10}}}")

WIDGET = """apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: apps}
spec: {size: 20}
"""


def _validate(
    repo: Path, monkeypatch: pytest.MonkeyPatch, cached: bool = True, crds: tuple[Path, ...] = ()
) -> Validated:
    with monkeypatch.context() as scoped:
        if not cached:
            scoped.setenv("GEN_NO_CACHE", "1")
        cache.directory.cache_clear()
        validated = validate_paths([repo], ("1.35",), crd_paths=crds, kept_for=Kept.of)
    cache.directory.cache_clear()
    return validated


def _same_as_uncached(repo: Path, monkeypatch: pytest.MonkeyPatch, crds: tuple[Path, ...] = ()) -> Validated:
    validated = _validate(repo, monkeypatch, crds=crds)
    assert validated == _validate(repo, monkeypatch, cached=False, crds=crds)
    return validated


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "tests" / "realworld" / "valid", root / "valid")
    shutil.copytree(ROOT / "tests" / "realworld" / "invalid", root / "invalid")
    (root / "apps").mkdir()
    for name, text in {"namespace": NAMESPACE, "api": WORKLOAD, "crd": CRD, "widget": WIDGET}.items():
        (root / "apps" / f"{name}.yaml").write_text(text)
    return root


def test_findings_follow_edits_within_and_across_files(
    cache_home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = _same_as_uncached(repo, monkeypatch)
    rules = {(Path(p.file).name, p.rule) for p in cold.problems}
    assert {("api.yaml", "pod-security"), ("widget.yaml", "crd-schema")} <= rules
    from generator.kube import repository

    judged: list[str] = []
    judge = repository._judged_documents
    with monkeypatch.context() as scoped:
        scoped.setattr(
            repository,
            "_judged_documents",
            lambda docs, *rest: judged.extend(dict.fromkeys(d.file for d in docs)) or judge(docs, *rest),
        )
        # warm, unchanged: nothing judged again but the resource a CRD among the inputs defines
        # (judged again once every such CRD is known, as on every run)
        assert _validate(repo, monkeypatch) == cold and [Path(name).name for name in judged] == ["widget.yaml"]
        judged.clear()
        edit(repo / "apps" / "api.yaml", "/api:1.0.0", "/api")
        assert _validate(repo, monkeypatch) != cold
        assert sorted(Path(name).name for name in judged) == ["api.yaml", "widget.yaml"]
    edit(repo / "apps" / "api.yaml", "/api\n", "/api:1.0.0\n")

    seen = [cold]
    for path, old, new in [
        (repo / "apps" / "namespace.yaml", "enforce: restricted", "enforce: privileged"),  # another file's finding
        (repo / "apps" / "crd.yaml", "maximum: 10", "maximum: 100"),  # another file's resource
        (repo / "apps" / "api.yaml", "privileged: true", "privileged: false"),
        (repo / "apps" / "widget.yaml", "metadata: {", "# gen:ignore crd-schema -- sized by hand\nmetadata: {"),
    ]:
        edit(path, old, new)
        seen.append(_same_as_uncached(repo, monkeypatch))
        assert seen[-1] != seen[-2], path
    (repo / "valid" / "workloads.yaml").unlink()
    assert _same_as_uncached(repo, monkeypatch).files != seen[-1].files


def test_a_broken_bundle_is_ignored_and_rewritten(
    cache_home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = _same_as_uncached(repo, monkeypatch)
    (bundle,) = [p for p in cache_home.rglob("*") if p.is_dir() and p.parent.name == "validated"]
    for shard in bundle.iterdir():
        shard.write_bytes(shard.read_bytes()[:7])
    assert _same_as_uncached(repo, monkeypatch) == cold
    assert all(cache.read("validated", f"{bundle.name}/{shard.name}") is not None for shard in bundle.iterdir())


def test_other_crds_given_judge_again(cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A resource judged against no CRD is judged again against the one --crds gives now (no
    CRD among the inputs, which would have it judged again anyway)."""
    repo, given = tmp_path / "repo", tmp_path / "given"
    repo.mkdir()
    given.mkdir()
    (repo / "widget.yaml").write_text(WIDGET)
    (given / "crd.yaml").write_text(CRD)
    without = _same_as_uncached(repo, monkeypatch)
    against = _same_as_uncached(repo, monkeypatch, crds=(given,))
    assert [p.rule for p in without.problems] == ["k8s-unknown-kind"]
    assert [p.rule for p in against.problems] == ["crd-schema"]


def test_a_file_edited_behind_its_stat_is_judged_again(
    cache_home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files judged before and unchanged by their stat are not read; one edited since (its size
    and modification time kept) is."""
    from tests.test_cache import _same_size_edit

    monkeypatch.setattr(cache, "SETTLED_NS", 0)
    settings = repo / "apps" / "settings.yaml"
    settings.write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: apps}\ndata: {a: "1"}\n'
    )
    before = _same_as_uncached(repo, monkeypatch)
    assert _same_as_uncached(repo, monkeypatch) == before == _same_as_uncached(repo, monkeypatch)
    _same_size_edit(settings, settings.read_bytes().replace(b'{a: "1"}', b"{a: 1.5}"))
    after = _same_as_uncached(repo, monkeypatch)
    assert [p for p in after.problems if p.file.endswith("settings.yaml")] and after != before


@pytest.mark.parametrize("content", ["kind: ConfigMap\n", "\ufeffkind: ConfigMap # é, 日本\n", ""])
def test_a_file_is_keyed_alike_from_its_bytes_and_from_the_text_read(tmp_path: Path, content: str) -> None:
    """A file judged this run is kept under the key of the text its reader decoded, which must
    be the key a later run computes from the file's bytes, or the entry would never be found."""
    path = tmp_path / "cm.yaml"
    path.write_bytes(content.encode("utf-8"))
    assert cache.text_key("apps/cm.yaml", path.read_bytes().decode("utf-8")) == cache.file_key(
        str(path), "apps/cm.yaml"
    )
