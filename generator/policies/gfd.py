"""The product names NVIDIA GPU Feature Discovery writes into `nvidia.com/gpu.product`, from
the bundled table (generator/data/gfd-products.json, provenance in the file), so a policy's
`gpu.models` can be checked before any node is asked: `A100` never matches a GFD label.
"""

from __future__ import annotations

import difflib
import json
import re
from functools import cache

from generator.resources import data_dir

SHARED = "-SHARED"
_DROPPED = re.compile(r"[^A-Za-z0-9\-_. ]")


def sanitise(name: str) -> str:
    """GFD's own spelling of an NVML name: odd characters dropped, blanks become '-'."""
    return "-".join(_DROPPED.sub("", name).split())


@cache
def products() -> dict[str, frozenset[str]]:
    """GFD product name -> the MIG profiles its `single` strategy can append."""
    table = json.loads((data_dir("data") / "gfd-products.json").read_text(encoding="utf-8"))["products"]
    return {sanitise(name): frozenset(sanitise(p) for p in profiles) for name, profiles in table.items()}


def is_product(label: str) -> bool:
    """Whether GFD can write label: a product, a MIG product, either with -SHARED."""
    base = label.removesuffix(SHARED)
    if base in products():
        return True
    name, mig, profile = base.partition("-MIG-")
    return bool(mig) and profile in products().get(name, frozenset())


def suggestions(label: str) -> list[str]:
    """The products a short or misspelt model name probably meant: those containing it as a
    word (`A100`), else the closest spellings."""
    word = re.compile(rf"(^|-){re.escape(label.removesuffix(SHARED))}(-|$)", re.IGNORECASE)
    found = sorted(name for name in products() if word.search(name))
    return found or difflib.get_close_matches(label, sorted(products()), n=3, cutoff=0.6)
