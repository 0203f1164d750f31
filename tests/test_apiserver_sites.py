"""Upstream error sites, counted: for each kind, every place its create-time validation function
appends an error (`field.Required`, `Invalid`, `NotSupported`, `Duplicate`, `Forbidden`,
`TooLong`, `TooMany`) in Kubernetes 1.35, listed in tests/apiserver-sites/<Kind>.yaml, each with
exactly one of:

- case: a manifest under tests/apiserver-corpus/<Kind>/ that makes that site refuse; gen must
  report an error at the site's field (or below it) there, so "enforced" is measured, not said;
- unreachable: why the API server never lets an object reach the site (a default fills the
  field, the request sets it, the version has no such field);
- not: why gen does not enforce it.

docs/rules.md's summary table and docs/apiserver-coverage.md's per-site list are generated from
these files: `UPDATE_DOCS=1 pytest tests/test_apiserver_sites.py`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest
import yaml

from tests.conftest import ROOT
from tests.test_apiserver_corpus import errors_of

SITES = ROOT / "tests" / "apiserver-sites"  # <Kind>.yaml, or <Kind>.<area>.yaml for a large kind
CORPUS = ROOT / "tests" / "apiserver-corpus"
RULES = ROOT / "docs" / "rules.md"
DETAIL = ROOT / "docs" / "apiserver-coverage.md"
ERRORS = {"Required", "Invalid", "NotSupported", "Duplicate", "Forbidden", "TooLong", "TooMany"}
VERDICTS = ("case", "unreachable", "not")
BEGIN, END = "<!-- sites:begin -->", "<!-- sites:end -->"


@dataclass(frozen=True)
class Site:
    kind: str
    function: str
    error: str
    field: str
    says: str
    verdict: str
    detail: str


def _files() -> dict[str, dict]:
    return {path.stem: yaml.safe_load(path.read_text()) for path in sorted(SITES.glob("*.yaml"))}


def _kinds() -> dict[str, dict]:
    """Each kind's files merged: its sources and functions in file order, all of its sites."""
    kinds: dict[str, dict] = {}
    for data in _files().values():
        merged = kinds.setdefault(data["kind"], {"sources": [], "functions": [], "sites": []})
        merged["sources"] += [data["source"]] if data["source"] not in merged["sources"] else []
        merged["functions"] += data["functions"]
        merged["sites"] += data["sites"]
    return kinds


def _sites(kind: str, data: dict) -> list[Site]:
    sites = []
    for entry in data["sites"]:
        verdict = next(key for key in VERDICTS if key in entry)
        sites.append(
            Site(
                kind, entry["function"], entry["error"], entry["field"], entry.get("says", ""), verdict, entry[verdict]
            )
        )
    return sites


ALL = [site for kind, data in _kinds().items() for site in _sites(kind, data)]


def test_every_site_file_is_well_formed() -> None:
    assert ALL
    for stem, data in _files().items():
        kind = data["kind"]
        assert stem.split(".")[0] == kind, f"{stem}.yaml names kind {kind}"
        assert set(data) == {"kind", "source", "functions", "sites"}, f"{stem}.yaml: keys {sorted(data)}"
        for entry in data["sites"]:
            verdicts = [key for key in VERDICTS if key in entry]
            assert len(verdicts) == 1, f"{stem}.yaml: {entry} needs exactly one of {VERDICTS}"
            assert entry["error"] in ERRORS, f"{stem}.yaml: {entry['error']} is not a field error"
            assert set(entry) <= {"function", "error", "field", "says", *VERDICTS}, f"{stem}.yaml: {entry}"


@pytest.fixture(scope="module")
def error_paths() -> dict[str, set[str]]:
    """Every case named by a site, validated in one `gen validate` run: file -> its errors' paths."""
    cases = sorted({(CORPUS / site.kind / site.detail).as_posix() for site in ALL if site.verdict == "case"})
    return errors_of(cases, "path")


def _at_or_below(path: str, field: str) -> bool:
    wanted = "$." + field
    return path == wanted or path.startswith((wanted + ".", wanted + "["))


@pytest.mark.parametrize(
    "site", [s for s in ALL if s.verdict == "case"], ids=lambda s: f"{s.kind}-{s.function}-{s.field}"
)
def test_an_enforced_site_is_refused_at_its_field(site: Site, error_paths: dict[str, set[str]]) -> None:
    case = CORPUS / site.kind / site.detail
    assert case.parent.name == "invalid" and case.is_file(), f"{site.kind}: {site.detail} is not an invalid case"
    paths = error_paths.get(case.resolve().as_posix(), set())
    assert any(_at_or_below(path, site.field) for path in paths), (
        f"{case.relative_to(ROOT)}: no error at {site.field} ({site.says}); errors at {sorted(paths)}"
    )


def _summary() -> str:
    rows = [
        "| kind | functions (file) | error sites | enforced | unreachable | not enforced | coverage |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind, data in _kinds().items():
        sites = _sites(kind, data)
        count = {verdict: sum(site.verdict == verdict for site in sites) for verdict in VERDICTS}
        reachable = count["case"] + count["not"]
        share = f"{100 * count['case'] // reachable}%" if reachable else "—"
        functions = ", ".join(f"`{name}`" for name in data["functions"])
        rows.append(
            f"| {kind} | {functions} ({', '.join(f'`{source}`' for source in data['sources'])}) | {len(sites)} | {count['case']} | "
            f"{count['unreachable']} | {count['not']} | {share} |"
        )
    return "\n".join(rows)


def _detail() -> str:
    lines = [
        "# kube-apiserver's error sites, one by one",
        "",
        "Generated from `tests/apiserver-sites/` by `UPDATE_DOCS=1 pytest tests/test_apiserver_sites.py`;",
        "the summary and what a site is are in [rules.md](rules.md#upstream-error-sites-counted). An",
        "enforced site names the refusal-corpus case that shows gen refusing it at that field.",
    ]
    for kind, data in _kinds().items():
        lines += [
            "",
            f"## {kind}",
            "",
            ", ".join(f"`{source}`" for source in data["sources"]),
            "",
            "| function | error | field | verdict |",
            "|---|---|---|---|",
        ]
        for site in _sites(kind, data):
            verdict = {
                "case": f"enforced: `{site.detail}`",
                "unreachable": f"unreachable: {site.detail}",
                "not": f"**not enforced**: {site.detail}",
            }[site.verdict]
            says = f" ({site.says})" if site.says else ""
            lines.append(f"| `{site.function}` | {site.error} | `{site.field}`{says} | {verdict} |")
    return "\n".join(lines) + "\n"


def test_the_docs_say_what_the_sites_measure() -> None:
    text = RULES.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    rules = f"{head}{BEGIN}\n{_summary()}\n{END}{tail}"
    if os.environ.get("UPDATE_DOCS"):
        RULES.write_text(rules)
        DETAIL.write_text(_detail())
    assert text == rules, "run UPDATE_DOCS=1 pytest tests/test_apiserver_sites.py"
    assert DETAIL.read_text() == _detail(), "run UPDATE_DOCS=1 pytest tests/test_apiserver_sites.py"
