"""`# gen:ignore RULE -- reason` (SPEC §13): on the finding's line, on the line above it, or for a
whole document; a reason required, an ignore that silences nothing reported, a count every run."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.problems import Problem, Severity
from generator.suppressions import apply

DAEMONSET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: ops}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      hostNetwork: true
      containers:
      - name: agent
        image: ghcr.io/example/agent:1.0.0
"""


def _validate(gen, tmp_path: Path, text: str):
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return gen("validate", "--strict", path)


def test_without_an_ignore_the_finding_fails_strict(gen, tmp_path: Path) -> None:
    run = _validate(gen, tmp_path, DAEMONSET)
    assert run.code == 1 and " pod-security " in run.out and "; 0 silenced" in run.err


def test_an_ignore_on_the_line_silences_it_and_is_counted(gen, tmp_path: Path) -> None:
    text = DAEMONSET.replace(
        "hostNetwork: true", "hostNetwork: true  # gen:ignore pod-security -- the agent reads node traffic"
    )
    run = _validate(gen, tmp_path, text)
    assert run.code == 0 and run.out == "" and "; 1 silenced" in run.err


def test_an_ignore_on_the_line_above_silences_the_line_below_only(gen, tmp_path: Path) -> None:
    text = DAEMONSET.replace(
        "      hostNetwork: true", "      # gen:ignore pod-security -- reviewed (SEC-12)\n      hostNetwork: true"
    )
    assert _validate(gen, tmp_path, text).code == 0
    moved = DAEMONSET.replace(
        "    spec:\n      hostNetwork", "    # gen:ignore pod-security -- reviewed\n    spec:\n      hostNetwork"
    )
    run = _validate(gen, tmp_path, moved)
    assert run.code == 1 and " pod-security " in run.out and " ignore-unused " in run.out


def test_an_ignore_at_the_top_of_a_document_covers_the_document(gen, tmp_path: Path) -> None:
    text = (
        "# gen:ignore pod-security -- a node agent\n"
        + DAEMONSET
        + "---\n"
        + DAEMONSET.replace("name: agent,", "name: other,")
    )
    run = _validate(gen, tmp_path, text)
    assert run.code == 1  # the second document is not covered
    assert [line.split(":")[1] for line in run.out.splitlines()] == ["23"]


def test_an_ignore_without_a_reason_or_that_silences_nothing_warns(gen, tmp_path: Path) -> None:
    text = DAEMONSET.replace("hostNetwork: true", "hostNetwork: true  # gen:ignore pod-security")
    run = _validate(gen, tmp_path, text)
    assert run.code == 1 and "m.yaml:9:26: warning ignore-reason " in run.out
    text = DAEMONSET.replace("hostNetwork: true", "hostNetwork: true  # gen:ignore pod-securty -- typo")
    run = _validate(gen, tmp_path, text)
    assert " warning ignore-unused " in run.out and " pod-security " in run.out


LINES = st.sampled_from(
    [
        "---",
        "# gen:ignore a -- r",
        "x: 1  # gen:ignore a,b -- r",
        "# gen:ignore",
        "#gen:ignore a",
        "a: '#'",
        "",
        "  y: 2",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(LINES | st.text(max_size=30), max_size=12),
    rule=st.sampled_from(["a", "b", "c"]),
    line=st.integers(0, 14),
)
def test_any_text_and_finding_are_judged_without_a_crash(lines: list[str], rule: str, line: int) -> None:
    problem = Problem("f.yaml", line, 1, rule, Severity.ERROR, "m")
    kept, silenced = apply([problem], {"f.yaml": "\n".join(lines)})
    assert silenced in (0, 1) and (problem in kept) == (silenced == 0)
    assert all(p.rule in (rule, "ignore-reason", "ignore-unused") for p in kept)
