"""Output formats for findings: text for people, json for tools, github annotations, SARIF
2.1.0 for code scanning and JUnit XML for CI test reports."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from generator import __version__
from generator.problems import STDIN_NAME, Problem, Severity

_COLORS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}


def _use_color(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


def _described(problem: Problem) -> str:
    """The message, the targets it holds for (when a render has several) and the hint."""
    text = problem.message
    if problem.targets:
        text += f" [target{'s' if len(problem.targets) > 1 else ''} {', '.join(problem.targets)}]"
    return text + (f" (hint: {problem.hint})" if problem.hint else "")


def report_text(problems: Sequence[Problem], stream: TextIO) -> None:
    color = _use_color(stream)
    for p in problems:
        sev = str(p.severity)
        if color:
            sev = f"{_COLORS[p.severity]}{sev}\033[0m"
        where = f"{p.file}:{p.line}:{p.column}" if p.line else p.file  # a flag or a whole file: no position
        print(f"{where}: {sev} {p.rule} {_described(p)}", file=stream)


def report_json(problems: Sequence[Problem], stream: TextIO) -> None:
    print(json.dumps([p.as_dict() for p in problems], indent=2), file=stream)


def _escape_github(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def report_github(problems: Sequence[Problem], stream: TextIO) -> None:
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    for p in problems:
        message = f"{p.rule}: {_described(p)}"
        props = f"file={_escape_github(p.file).replace(',', '%2C').replace(':', '%3A')},line={p.line},col={p.column}"
        print(f"::{level[p.severity]} {props},title={p.rule}::{_escape_github(message)}", file=stream)


SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_CATALOGUE_LEVEL = {"E": "error", "W": "warning", "I": "note"}


def _sarif_rule(rule_id: str) -> dict[str, Any]:
    """A rule as SARIF describes it, in the catalogue's words (docs/rules.md)."""
    from generator.catalogue import rules

    rule = rules().get(rule_id)
    if rule is None:
        return {"id": rule_id}
    return {
        "id": rule_id,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.text},
        "help": {
            "text": f"{rule.text}\n\nRule catalogue: docs/rules.md; failing and passing examples: "
            f"docs/rule-examples.md#{rule_id}",
            "markdown": f"**{rule_id}**: {rule.text}\n\nSee the rule catalogue (docs/rules.md) and the examples "
            f"(docs/rule-examples.md).",
        },
        "defaultConfiguration": {"level": _CATALOGUE_LEVEL[rule.severity[0]]},
    }


def _repository_root(directory: str) -> str | None:
    """The nearest directory holding .git, from this one up; None outside any checkout."""
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _artifact(file: str, fallback_root: str) -> dict[str, str]:
    """A file as SARIF locates it: a URI relative to the root of the checkout that holds it (so
    gen run from outside the checkout names files as code scanning does), else relative to the
    checkout gen runs in; a file: URI outside both; standard input by its name alone."""
    from pathlib import PurePath
    from urllib.parse import quote

    if file == STDIN_NAME:
        return {"uri": quote(file)}
    full = os.path.abspath(file)
    root = _repository_root(os.path.dirname(full)) or fallback_root
    if full == root or not full.startswith(root.rstrip(os.sep) + os.sep):
        return {"uri": PurePath(full).as_uri()}
    return {"uri": quote(PurePath(os.path.relpath(full, root)).as_posix()), "uriBaseId": "%SRCROOT%"}


def _sarif_result(p: Problem, index: int, root: str) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": _artifact(p.file, root)}
    if p.line > 0:
        location["region"] = {"startLine": p.line, "startColumn": max(p.column, 1)}
    result: dict[str, Any] = {
        "ruleId": p.rule,
        "ruleIndex": index,
        "level": _SARIF_LEVEL[p.severity],
        "message": {"text": _described(p)},
        "locations": [{"physicalLocation": location}],
    }
    if p.about:
        result["locations"][0]["logicalLocations"] = [{"name": p.about, "kind": "object"}]
    return result


def report_sarif(problems: Sequence[Problem], stream: TextIO, files: Sequence[str] = ()) -> None:
    """SARIF 2.1.0, as GitHub code scanning reads it: file URIs relative to the repository root,
    wherever gen runs."""
    ids = sorted({p.rule for p in problems})
    root = _repository_root(os.getcwd()) or os.getcwd()
    index = {rule: i for i, rule in enumerate(ids)}
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "gen",
                        "version": __version__,
                        "informationUri": "https://pypi.org/project/gitops-gen/",
                        "rules": [_sarif_rule(rule) for rule in ids],
                    }
                },
                "results": [_sarif_result(p, index[p.rule], root) for p in problems],
            }
        ],
    }
    print(json.dumps(log, indent=2, ensure_ascii=False), file=stream)


def report_junit(problems: Sequence[Problem], stream: TextIO, files: Sequence[str] = ()) -> None:
    """JUnit XML: a failed test case per error (named by its file, line, column and rule), a
    passing case per file without errors; warnings and information go to the output of the
    file's first case, where CI systems show them without failing the build."""
    from xml.etree import ElementTree as ET

    by_file: dict[str, list[Problem]] = {name: [] for name in files}
    for p in problems:
        by_file.setdefault(p.file, []).append(p)
    cases: list[ET.Element] = []
    for name in sorted(by_file):
        errors = [p for p in by_file[name] if p.severity is Severity.ERROR]
        notes = [_located(p) for p in by_file[name] if p.severity is not Severity.ERROR]
        first = len(cases)
        for p in errors:
            case = ET.Element("testcase", classname=name, name=f"{p.file}:{p.line}:{p.column} {p.rule}")
            failure = ET.SubElement(case, "failure", message=f"{p.rule}: {p.message}", type=p.rule)
            failure.text = _located(p)
            cases.append(case)
        if not errors:
            cases.append(ET.Element("testcase", classname=name, name=name))
        if notes:
            ET.SubElement(cases[first], "system-out").text = "\n".join(notes)
    failed = sum(1 for p in problems if p.severity is Severity.ERROR)
    suites = ET.Element("testsuites", name="gen", tests=str(len(cases)), failures=str(failed))
    suite = ET.SubElement(suites, "testsuite", name="gen", tests=str(len(cases)), failures=str(failed), errors="0")
    suite.extend(cases)
    ET.indent(suites)
    stream.write(ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n")


def _located(p: Problem) -> str:
    return f"{p.file}:{p.line}:{p.column}: {p.severity} {p.rule} {_described(p)}"


def _plain(reporter: Callable[[Sequence[Problem], TextIO], None]) -> Callable[..., None]:
    def report_of(problems: Sequence[Problem], stream: TextIO, files: Sequence[str] = ()) -> None:
        reporter(problems, stream)

    return report_of


REPORTER_BY_NAME: dict[str, Callable[..., None]] = {
    "text": _plain(report_text),
    "json": _plain(report_json),
    "github": _plain(report_github),
    "sarif": report_sarif,
    "junit": report_junit,
}


def report(problems: Sequence[Problem], fmt: str, stream: TextIO | None = None, files: Sequence[str] = ()) -> None:
    """problems in format fmt; files, where given, are every file judged (JUnit lists each)."""
    REPORTER_BY_NAME[fmt](sorted(problems), stream or sys.stdout, files)
