"""`# gen:ignore RULE[,RULE...] -- reason`: findings a team has decided to live with.

A directive silences the named rules on its own line (a trailing comment), on the line below it
(a comment line of its own), or, in the comment block at the top of a YAML document, in the
whole document. A directive without a reason, or one that silences nothing, is a warning: an
accepted risk is written down, and a stale one does not linger.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from generator.problems import Problem, Severity

_DIRECTIVE = re.compile(r"#\s*gen:ignore\s+([A-Za-z0-9_,\s-]+?)\s*(?:--\s*(.*?))?\s*$")


@dataclass
class Directive:
    line: int  # 1-based
    column: int
    rules: frozenset[str]
    reason: str
    first: int  # the lines it covers
    last: int
    used: int = field(default=0)

    def covers(self, problem: Problem) -> bool:
        return problem.rule in self.rules and self.first <= problem.line <= self.last


def directives(text: str) -> list[Directive]:
    """Every gen:ignore comment of a YAML file, with the lines it covers."""
    lines = text.split("\n")
    starts = [0] + [i + 1 for i, line in enumerate(lines) if line.startswith("---")]
    found = []
    for i, line in enumerate(lines):
        match = _DIRECTIVE.search(line)
        if match is None or "#" not in line[: match.start() + 1]:
            continue
        rules = frozenset(r.strip() for r in match.group(1).replace(",", " ").split() if r.strip())
        own_line = not line[: match.start()].strip()
        start = max(s for s in starts if s <= i)
        end = min([s - 1 for s in starts if s > i] + [len(lines)])
        if own_line and all(
            not text_line.strip() or text_line.lstrip().startswith(("#", "---")) for text_line in lines[start:i]
        ):
            first, last = start + 1, end  # the top of a document: the whole document
        elif own_line:
            first = last = i + 2  # the line below
        else:
            first = last = i + 1
        found.append(Directive(i + 1, match.start() + 1, rules, (match.group(2) or "").strip(), first, last))
    return found


def apply(problems: list[Problem], texts: dict[str, str]) -> tuple[list[Problem], int]:
    """problems without those a directive silences, plus warnings about directives; and how
    many were silenced. texts: each file's text, by the name findings give it."""
    table = {name: directives(text) for name, text in texts.items() if "gen:ignore" in text}
    kept: list[Problem] = []
    silenced = 0
    for problem in problems:
        covering = [d for d in table.get(problem.file, ()) if d.covers(problem)]
        for directive in covering:
            directive.used += 1
        if covering:
            silenced += 1
        else:
            kept.append(problem)
    for name, found in sorted(table.items()):
        for d in found:
            if not d.reason:
                kept.append(
                    Problem(
                        name,
                        d.line,
                        d.column,
                        "ignore-reason",
                        Severity.WARNING,
                        f"gen:ignore {', '.join(sorted(d.rules))} gives no reason",
                        "write why after ' -- ', so a reviewer knows what was accepted",
                    )
                )
            if not d.used:
                kept.append(
                    Problem(
                        name,
                        d.line,
                        d.column,
                        "ignore-unused",
                        Severity.WARNING,
                        f"gen:ignore {', '.join(sorted(d.rules))} silences nothing here",
                        "remove it, or check the rule IDs and which lines it covers",
                    )
                )
    return kept, silenced
