"""Kubernetes resource quantities (k8s.io/apimachinery resource.Quantity) as exact decimals."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

_QUANTITY = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?P<suffix>[eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE]|)\Z"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
}


def parse_quantity(value: object) -> Decimal | None:
    """The quantity's value, or None when Kubernetes would not parse it."""
    try:
        return _parsed(value)
    except TypeError:  # unhashable: a list or a mapping is no quantity
        return None


@lru_cache(maxsize=8192, typed=True)  # manifests repeat their quantities; typed: True is not 1
def _parsed(value: object) -> Decimal | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON's 1e400 or YAML's .nan: no Kubernetes quantity
    if isinstance(value, int | float):
        try:
            return Decimal(str(value))
        except InvalidOperation:
            return None
    if not isinstance(value, str):
        return None
    match = _QUANTITY.match(value)
    if not match:
        return None
    number, suffix = Decimal(match["num"]), match["suffix"]
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix[:1] in ("e", "E"):
        return number.scaleb(int(suffix[1:]))
    return number * _DECIMAL[suffix]


_BINARY_SUFFIXES = tuple(_BINARY)
_BYTE_DIVISORS = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"
_BYTE_RESOURCES = {
    "limits.memory": "memory",
    "requests.memory": "memory",
    "limits.ephemeral-storage": "local ephemeral storage",
    "requests.ephemeral-storage": "local ephemeral storage",
}


def divisor_error(resource: str, divisor: object) -> str | None:
    """validateContainerResourceDivisor (pkg/apis/core/validation), for a resourceFieldRef of an
    environment variable or a downward API volume file: the divisor's canonical form must be 1m
    or 1 for CPU, a power of 1000 or 1024 from 1 for memory, ephemeral storage and huge pages
    (`1024` is canonically 1024, not 1Ki; `1e3` keeps its exponent form); None when it is unset,
    zero or no quantity (the schema's to say)."""
    amount = parse_quantity(divisor)
    if amount is None or amount == 0:
        return None
    text = str(divisor)
    if resource in ("limits.cpu", "requests.cpu"):
        allowed = text[-1:] not in "eE" and not text.endswith(_BINARY_SUFFIXES) and amount in (1, Decimal("0.001"))
        return None if allowed else "only divisor's values 1m and 1 are supported with the cpu resource"
    what = _BYTE_RESOURCES.get(resource)
    if what is None and resource.startswith(("requests.hugepages-", "limits.hugepages-")):
        what = "hugepages"
    if what is None:
        return None
    if text.endswith(_BINARY_SUFFIXES):
        allowed = any(amount == 1024**k for k in range(1, 7))
    else:
        allowed = "e" not in text.lower() and any(amount == 1000**k for k in range(7))
    return None if allowed else f"only divisor's values {_BYTE_DIVISORS} are supported with the {what} resource"
