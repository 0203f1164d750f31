"""The product names NVIDIA GPU Feature Discovery writes into `nvidia.com/gpu.product`, from
the bundled table (generator/data/gfd-products.json, provenance in the file), so a policy's
`gpu.models` can be checked before any node is asked: `A100` never matches a GFD label; and
the `nvidia.com/gpu.memory` GFD writes for the products the table has seen, so a `minMemoryMiB`
no listed model reaches is caught (an H100 80GB HBM3 is labelled 81559, not 81920).
"""

from __future__ import annotations

import difflib
import json
import re
from functools import cache
from typing import Any

from generator.resources import data_dir

SHARED = "-SHARED"
_DROPPED = re.compile(r"[^A-Za-z0-9\-_. ]")


def sanitise(name: str) -> str:
    """GFD's own spelling of an NVML name: odd characters dropped, blanks become '-'."""
    return "-".join(_DROPPED.sub("", name).split())


@cache
def _table() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((data_dir("data") / "gfd-products.json").read_text(encoding="utf-8"))
    return data


@cache
def products() -> dict[str, frozenset[str]]:
    """GFD product name -> the MIG profiles its `single` strategy can append."""
    return {sanitise(name): frozenset(sanitise(p) for p in profiles) for name, profiles in _table()["products"].items()}


@cache
def memory_mib() -> dict[str, int]:
    """GFD product name -> the `nvidia.com/gpu.memory` GFD writes for it (MiB), where known."""
    return {sanitise(name): entry["MiB"] for name, entry in _table()["memoryMiB"].items() if not name.startswith("$")}


def product_memory(label: str) -> int | None:
    """The memory label of a whole-GPU product (shared or not); None for a MIG product or one
    the table has not seen."""
    return memory_mib().get(label.removesuffix(SHARED))


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
