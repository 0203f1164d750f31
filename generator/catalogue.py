"""The rule catalogue, docs/rules.md, read as data: one source for the documentation and for
the rule descriptions reports carry (SARIF's rules). The wheel ships the file beside the
package."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from generator.resources import data_dir

# A table row of the catalogue: `| id[, id...] | severity | what and why |`
_ROW = re.compile(r"^\| ([a-z0-9-][a-z0-9, `*-]*?) \| ([EWI/]+) \| (.+?) \|\s*$", re.M)


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str  # E, W, I, or E/W where render and validate differ
    text: str

    @property
    def summary(self) -> str:
        """The first sentence (or clause) of the description."""
        first = re.split(r"(?<=[.;:])\s", self.text, maxsplit=1)[0]
        return first.rstrip(".;:")


@cache
def rules() -> dict[str, Rule]:
    """Every documented rule by ID (a row naming several IDs describes each of them)."""
    text = (data_dir("docs") / "rules.md").read_text(encoding="utf-8")
    found: dict[str, Rule] = {}
    for ids, severity, description in _ROW.findall(text):
        for rule_id in (part.strip(" `") for part in ids.split(",")):
            if rule_id and "*" not in rule_id:
                found.setdefault(rule_id, Rule(rule_id, severity, description.strip()))
    return found
