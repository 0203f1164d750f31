"""Plain YAML scalars as Kubernetes reads them.

kubectl and kube-apiserver turn YAML into JSON with sigs.k8s.io/yaml, which reads it with
go-yaml v2. That reader differs from PyYAML's YAML 1.1 resolver on a few spellings: `y`/`n`
are booleans, `0o17` and `1e3` are numbers, `1:20` (sexagesimal) and `=` (YAML 1.1's "value")
are strings, timestamps stay the text written, and keys that read as numbers or booleans
become their string spelling. Manifests are read this way (`gen validate`); policies keep
gen's own rules. The writer quotes a string whenever either reader would take it for
something else.
"""

from __future__ import annotations

import math
import re
import struct
from functools import lru_cache
from typing import Any

# go-yaml v2 resolve.go: the scalars looked up by their exact spelling
_CONSTANTS: dict[str, Any] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
# Go's strconv.ParseInt(s, 0, 64) after go-yaml drops every underscore: a sign, then a base
# prefix (0x, 0o, 0b, or a leading 0 for octal) or decimal digits.
_GO_INT = re.compile(r"([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")  # yamlStyleFloat
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?\Z")  # strconv.ParseFloat of what starts with "."
# go-yaml's parseTimestamp accepts only texts that start with four digits and a dash.
_TIMESTAMP_START = re.compile(r"[0-9]{4}-")
_INT64_MIN, _UINT64_END = -(2**63), 2**64


@lru_cache(maxsize=16384)
def plain_value(text: str) -> Any:
    """What go-yaml v2 makes of an untagged plain scalar, as the JSON value it becomes.

    Timestamps stay strings: go-yaml hands a timestamp decoded into an untyped value back as
    the text written, and that is what reaches the API server.
    """
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    first = text[0]
    if first == ".":
        return float(text) if _DOT_FLOAT.match(text) else text
    if not (first.isdigit() and first.isascii()) and first not in "+-":
        return text
    if _TIMESTAMP_START.match(text):
        return text  # whether or not it parses as a timestamp, it stays this string
    plain = text.replace("_", "")
    if match := _GO_INT.match(plain):
        sign, digits = match.groups()
        number = _go_unsigned(digits)
        number = -number if sign == "-" else number
        if _INT64_MIN <= number < _UINT64_END:
            return number
    if _GO_FLOAT.match(plain):
        real = float(plain)
        if math.isfinite(real):  # Go's ParseFloat reports overflow as an error: a string then
            return real
    return text


def _go_unsigned(digits: str) -> int:
    if len(digits) > 1 and digits[0] == "0" and digits[1] in "0123456789":
        return int(digits, 8)  # Go's leading-zero octal, which Python's int(x, 0) refuses
    return int(digits, 0)


def is_string(text: str) -> bool:
    """Whether go-yaml reads text, written plain, as the string text itself."""
    return text != "<<" and type(plain_value(text)) is str


def key_string(key: Any) -> str | None:
    """The JSON key sigs.k8s.io/yaml makes of a mapping key go-yaml read as a non-string, or
    None where it refuses one (null)."""
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _go_float32_g(key)
    return None


def _go_float32_g(value: float) -> str:
    """strconv.FormatFloat(value, 'g', -1, 32): the shortest digits that survive float32."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    try:
        single = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:  # beyond float32: Go's conversion gives an infinity
        single = math.inf if value > 0 else -math.inf
    if math.isinf(single):
        return ".inf" if single > 0 else "-.inf"
    if single == 0:
        return "-0" if math.copysign(1, single) < 0 else "0"
    for digits in range(1, 10):
        text = f"{single:.{digits - 1}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    mantissa, exponent = text.split("e")
    exp = int(exponent)
    if exp < -4 or exp >= 6:  # Go's %e threshold when the precision is "shortest"
        return f"{mantissa.rstrip('0').rstrip('.')}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return f"{float(text):f}".rstrip("0").rstrip(".")
