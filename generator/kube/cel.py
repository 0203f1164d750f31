"""CRD validation rules (`x-kubernetes-validations`) evaluated as kube-apiserver evaluates them.

The language is cel-python's, a well-kept implementation of the CEL specification; the
Kubernetes libraries CRDs call (apiserver/pkg/cel/library: strings, lists, regex, quantity,
ip and cidr) are added here by their documented semantics. A rule that reaches a function
neither provides, or that fails in a way kube-apiserver's type checker would have caught
when the CRD was created, yields no verdict: the caller reports it as one gen could not
evaluate, never as a pass or a failure.
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

from generator.kube.quantity import parse_quantity


@dataclass(frozen=True)
class Outcome:
    """A rule's verdict: passed, failed, or unknown (with why)."""

    passed: bool | None
    reason: str = ""


class Quantity:
    """A resource.Quantity as the quantity library returns it: compared and added exactly."""

    __slots__ = ("text", "value")

    def __init__(self, text: str, value: Decimal) -> None:
        self.text, self.value = text, value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


def _types() -> Any:
    import celpy.celtypes as types  # only CRDs with rules pay for the CEL runtime

    return types


def _quantity(text: Any) -> Quantity:
    value = parse_quantity(str(text))
    if value is None:
        raise ValueError(f"invalid quantity {str(text)!r}")
    return Quantity(str(text), value)


def _is_quantity(text: Any) -> Any:
    return _types().BoolType(parse_quantity(str(text)) is not None)


def _list_or_string(name: str, on_string: Callable[..., Any], on_list: Callable[..., Any]) -> Callable[..., Any]:
    def dispatch(target: Any, *args: Any) -> Any:
        return on_string(target, *args) if isinstance(target, str) else on_list(target, *args)

    dispatch.__name__ = name
    return dispatch


def _substring(s: Any, start: Any, end: Any = None) -> Any:
    stop = len(s) if end is None else int(end)
    if not 0 <= int(start) <= stop <= len(s):
        raise IndexError(f"substring out of range: {int(start)}, {stop}")
    return _types().StringType(s[int(start) : stop])


def _split(s: Any, sep: Any, limit: Any = -1) -> Any:
    t = _types()
    n = int(limit)
    if n == 0:
        return t.ListType([])
    parts = str(s).split(str(sep), n - 1) if n > 0 else str(s).split(str(sep))
    return t.ListType([t.StringType(p) for p in parts])


def _sorted(items: Any) -> Any:
    return _types().BoolType(all(a <= b for a, b in zip(items, list(items)[1:], strict=False)))


def _sum(items: Any) -> Any:
    total = _types().IntType(0)
    for i, item in enumerate(items):
        total = item if i == 0 else total + item
    return total


def _extreme(pick: Callable[..., Any]) -> Callable[[Any], Any]:
    def of(items: Any) -> Any:
        if not items:
            raise ValueError("min/max of an empty list")
        return pick(items)

    return of


def _find_all(s: Any, pattern: Any, limit: Any = -1) -> Any:
    t = _types()
    found = [m.group(0) for m in re.finditer(str(pattern), str(s))]
    if int(limit) >= 0:
        found = found[: int(limit)]
    return t.ListType([t.StringType(f) for f in found])


def _find(s: Any, pattern: Any) -> Any:
    match = re.search(str(pattern), str(s))
    return _types().StringType(match.group(0) if match else "")


def _ip(text: Any) -> Any:
    return ipaddress.ip_address(str(text))


def _cidr(text: Any) -> Any:
    return ipaddress.ip_network(str(text), strict=False)


def _parses(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def check(text: Any) -> Any:
        try:
            parse(text)
        except ValueError:
            return _types().BoolType(False)
        return _types().BoolType("%" not in str(text))  # zones are refused

    return check


def _contains_ip(network: Any, address: Any) -> Any:
    ip = address if not isinstance(address, str) else _ip(address)
    return _types().BoolType(ip in network)


def _contains_cidr(network: Any, other: Any) -> Any:
    sub = other if not isinstance(other, str) else _cidr(other)
    return _types().BoolType(sub.version == network.version and sub.subnet_of(network))


@cache
def _library() -> dict[str, Callable[..., Any]]:
    """The Kubernetes CEL functions gen provides, by name (methods take their target first)."""
    t = _types()
    return {
        # strings (cel-go ext/strings, as Kubernetes enables it)
        "charAt": lambda s, i: t.StringType(s[int(i)] if int(i) < len(s) else ""),
        "indexOf": _list_or_string(
            "indexOf",
            lambda s, sub, start=0: t.IntType(str(s).find(str(sub), int(start))),
            lambda items, value: t.IntType(next((i for i, v in enumerate(items) if v == value), -1)),
        ),
        "lastIndexOf": _list_or_string(
            "lastIndexOf",
            lambda s, sub: t.IntType(str(s).rfind(str(sub))),
            lambda items, value: t.IntType(max((i for i, v in enumerate(items) if v == value), default=-1)),
        ),
        "lowerAscii": lambda s: t.StringType("".join(c.lower() if c.isascii() else c for c in s)),
        "upperAscii": lambda s: t.StringType("".join(c.upper() if c.isascii() else c for c in s)),
        "replace": lambda s, old, new, n=-1: t.StringType(str(s).replace(str(old), str(new), int(n))),
        "split": _split,
        "substring": _substring,
        "trim": lambda s: t.StringType(str(s).strip()),
        "join": lambda items, sep="": t.StringType(str(sep).join(str(i) for i in items)),
        # lists (Kubernetes' lists library)
        "isSorted": _sorted,
        "sum": _sum,
        "min": _extreme(min),
        "max": _extreme(max),
        # regex (Kubernetes' regex library)
        "find": _find,
        "findAll": _find_all,
        # quantity (Kubernetes' quantity library)
        "quantity": _quantity,
        "isQuantity": _is_quantity,
        "isInteger": lambda q: t.BoolType(q.value == q.value.to_integral_value()),
        "asInteger": lambda q: t.IntType(int(q.value)),
        "asApproximateFloat": lambda q: t.DoubleType(float(q.value)),
        "sign": lambda q: t.IntType((q.value > 0) - (q.value < 0)),
        "add": lambda q, other: Quantity(
            "", q.value + (other.value if isinstance(other, Quantity) else Decimal(int(other)))
        ),
        "sub": lambda q, other: Quantity(
            "", q.value - (other.value if isinstance(other, Quantity) else Decimal(int(other)))
        ),
        "isGreaterThan": lambda q, other: t.BoolType(q.value > other.value),
        "isLessThan": lambda q, other: t.BoolType(q.value < other.value),
        "compareTo": lambda q, other: t.IntType((q.value > other.value) - (q.value < other.value)),
        # ip and cidr (Kubernetes' net libraries)
        "ip": lambda x: x.network_address if isinstance(x, ipaddress.IPv4Network | ipaddress.IPv6Network) else _ip(x),
        "cidr": _cidr,
        "isIP": _parses(_ip),
        "isCIDR": _parses(lambda x: ipaddress.ip_network(str(x), strict=False)),
        "family": lambda x: t.IntType(x.version),
        "isLoopback": lambda x: t.BoolType(x.is_loopback),
        "isUnspecified": lambda x: t.BoolType(x.is_unspecified),
        "containsIP": _contains_ip,
        "containsCIDR": _contains_cidr,
        "prefixLength": lambda n: t.IntType(n.prefixlen),
        "masked": lambda n: n.supernet(new_prefix=n.prefixlen),
    }


@cache
def _environment() -> Any:
    import celpy

    _load_parser()
    return celpy.Environment()


def _load_parser() -> None:
    """cel-python's parser from gen's cache: building its LALR tables took about 0.3 s of
    every run that evaluates a CRD's rule. The parser is cel-python's own, built with its own
    options; Lark's cache option (keyed by the grammar and those options) stores it. An entry
    is written under a unique name and renamed into place; one that does not load is rebuilt."""
    import os
    import tempfile

    import lark
    from celpy import InterpretedRunner, celparser

    from generator import cache

    folder = cache.directory("cel")
    if (
        folder is None
        or celparser.CELParser.CEL_PARSER is not None
        or getattr(celparser, "Lark", None) is not lark.Lark
    ):
        return  # celpy builds it as it always does
    entry = folder / f"parser-lark{lark.__version__}"
    fresh = not entry.exists()
    if fresh:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        os.close(handle)
        os.unlink(temporary)  # Lark writes it; an existing empty file would read as a broken entry
    where = temporary if fresh else str(entry)
    # cel-python builds its parser with the Lark its module imported: that name gets the option
    setattr(celparser, "Lark", lambda *args, **options: lark.Lark(*args, **options, cache=where))  # noqa: B010
    try:
        celparser.CELParser(tree_class=InterpretedRunner.tree_node_class)  # what Environment() asks for
    finally:
        setattr(celparser, "Lark", lark.Lark)  # noqa: B010
    if fresh:
        try:
            os.replace(temporary, entry)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


# Optional syntax (cel-go's OptionalTypes, on in Kubernetes' base environment since 1.28:
# apiserver/pkg/cel/environment/base.go): `a.?b`, `a[?k]`, `[?x]` and `{?k: v}`. cel-python's
# grammar has none of it; the same text without the `?` is what the parser checks.
_OPTIONAL_SYNTAX = re.compile(r"([.\[{,])(\s*)\?")
_STRING_LITERAL = re.compile(r'''[rR]?("""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')''')


def _without_optional_syntax(rule: str) -> str | None:
    """rule with its optional selections and entries spelt as plain ones, or None if it has none."""
    pieces = _STRING_LITERAL.split(rule)  # code at even indices, string literals at odd ones
    plain = "".join(_OPTIONAL_SYNTAX.sub(r"\1\2", p) if i % 2 == 0 else p for i, p in enumerate(pieces))
    return plain if plain != rule else None


@dataclass(frozen=True)
class _Compiled:
    """A rule as cel-python reads it: its program, or why it does not parse; optional: it
    parses only as CEL with optional types, which cel-python cannot run."""

    program: Any = None
    error: str | None = None
    optional: bool = False
    result: str | None = None  # the CEL type it returns whatever its variables' types: "bool", "list"...
    free: tuple[str, ...] = ()  # the variables it names that nothing in it binds, in order


@cache
def _compiled(rule: str) -> _Compiled:
    """A rule's program, or why cel-python cannot parse it (its first line); once per process
    (building the parser also raises the recursion limit CEL's grammar needs)."""
    env = _environment()
    try:
        tree = env.compile(rule)
    except Exception as err:  # CELParseError, and lark's errors beneath it
        plain = _without_optional_syntax(rule)
        if plain is not None and _compiled(plain).error is None:
            return _Compiled(optional=True)
        lines = str(err).strip().splitlines()
        return _Compiled(error=lines[0] if lines else type(err).__name__)
    free: list[str] = []
    _free_names(tree, frozenset(), free)
    return _Compiled(
        program=env.program(tree, functions=_library()), result=_result_type(tree), free=tuple(dict.fromkeys(free))
    )


# the parse tree's names for a literal, and the CEL type it has
_LITERALS = {
    "BOOL_LIT": "bool",
    "INT_LIT": "int",
    "UINT_LIT": "uint",
    "FLOAT_LIT": "double",
    "STRING_LIT": "string",
    "BYTES_LIT": "bytes",
    "NULL_LIT": "null_type",
    "list_lit": "list",
    "map_lit": "map",
}


# The parse tree's operators whose result has one type whatever their operands (cel-go's
# standard declarations: every `_||_`, `_&&_`, `!_`, comparison and `in` overload returns bool).
_BOOL_OPERATORS = frozenset({"conditionalor", "conditionaland", "relation"})
# Functions and methods that return one type for every overload: cel-go's standard library and
# macros, and Kubernetes' libraries, none of which declares these names another way.
_FUNCTIONS = {"has": "bool", "size": "int", "string": "string", "int": "int", "uint": "uint", "double": "double"}
_FUNCTIONS |= {"bool": "bool", "bytes": "bytes", "matches": "bool"}
_METHODS = {"startsWith": "bool", "endsWith": "bool", "contains": "bool", "matches": "bool", "size": "int"}
_METHODS |= {"all": "bool", "exists": "bool", "exists_one": "bool", "map": "list", "filter": "list"}


def _result_type(tree: Any) -> str | None:
    """The type an expression returns whatever its variables' types (a literal, a comparison,
    `has`, `size`...), found at the first node with more than one child; None when the
    variables' types decide it (`object.spec.x`, `a + b`, `c ? x : y`)."""
    node = tree
    while getattr(node, "children", None) is not None and len(node.children) == 1:
        if str(node.data) in _LITERALS:
            return _LITERALS[str(node.data)]
        node = node.children[0]
    children = getattr(node, "children", None)
    if children is None:
        return _LITERALS.get(str(getattr(node, "type", "")))
    rule = str(node.data)
    if rule in _LITERALS:
        return _LITERALS[rule]
    if rule in _BOOL_OPERATORS and len(children) == 2:
        return "bool"
    if rule == "unary" and str(getattr(children[0], "data", "")) == "unary_not":
        return "bool"
    if rule == "ident_arg":
        return _FUNCTIONS.get(str(children[0]))
    if rule == "member_dot_arg":
        return _METHODS.get(str(children[1]))
    return None


# CEL's type denotations, which an expression may name as values (`type(x) == int`).
_TYPE_NAMES = frozenset({"bool", "bytes", "double", "dyn", "int", "list", "map", "null_type", "string", "type", "uint"})


def _bare_name(node: Any) -> str | None:
    """The name an argument is when it is a lone identifier (down its chain of one-child nodes)."""
    while getattr(node, "children", None) is not None and len(node.children) == 1 and str(node.data) != "ident":
        node = node.children[0]
    return str(node.children[0]) if str(getattr(node, "data", "")) == "ident" else None


def _free_names(node: Any, bound: frozenset[str], out: list[str]) -> None:
    """Appends to out the identifiers node reads that nothing around it binds. Where a name
    may be something other than a variable it is left out, so a name listed is surely one: a
    call's receiver written alone may be a namespace (`cel.bind`, `strings.quote`, `sets`), a
    call's leading lone identifiers may be the variables a macro binds (`all(x, ...)`,
    `cel.bind(v, ...)`, two-variable comprehensions), a message's type name is a type
    (`Object{...}`), and a name with a leading dot is fully qualified."""
    children = getattr(node, "children", None)
    if children is None:
        return
    kind = str(node.data)
    if kind == "ident":
        if str(children[0]) not in bound:
            out.append(str(children[0]))
        return
    if kind == "member_dot":  # the field name after the dot is no variable
        _free_names(children[0], bound, out)
        return
    if kind == "member_dot_arg":
        if _bare_name(children[0]) is None:
            _free_names(children[0], bound, out)
        arguments = children[2].children if len(children) > 2 and hasattr(children[2], "children") else []
        binds = []
        for argument in arguments[:-1]:
            if (name := _bare_name(argument)) is None:
                break
            binds.append(name)
        for argument in arguments[len(binds) :]:
            _free_names(argument, bound | frozenset(binds), out)
        return
    if kind == "member_object":  # Type{field: value}: the type's name, then the values
        for init in getattr(children[-1], "children", []):
            _free_names(init, bound, out)
        return
    for child in children[1:] if kind in ("ident_arg", "dot_ident_arg", "dot_ident") else children:
        _free_names(child, bound, out)


def undeclared(rule: str, declared: frozenset[str]) -> str | None:
    """The first variable rule reads that its environment does not declare (cel-go's
    "undeclared reference" at compile time), or None; an expression with optional syntax,
    which cel-python cannot parse as written, is not looked into."""
    for name in _compiled(rule).free:
        if name not in declared and name not in _TYPE_NAMES:
            return name
    return None


def result_type(rule: str) -> str | None:
    """The CEL type an expression returns whatever its variables' types (`6` int, `'x'` string,
    `a > 1` bool, `size(a)` int), or None: the type checking gen can do without the matched
    resources' schemas, so an expression of the wrong type is certainly refused."""
    return _compiled(rule).result


def parse_error(rule: str) -> str | None:
    """Why an expression does not parse as CEL, or None: kube-apiserver compiles CEL before it
    stores an object that holds it, and refuses what does not parse."""
    return _compiled(rule).error


def program(rule: str) -> Any:
    """The compiled program of an expression that parses without optional syntax (see parse_error)."""
    compiled = _compiled(rule)
    if compiled.program is None:
        raise ValueError(compiled.error or "it uses CEL optional types, which gen cannot evaluate")
    return compiled.program


def evaluate(rule: str, variables: dict[str, Any]) -> Outcome:
    """The verdict of rule with `self` (and nothing else) bound, from cel-python's result."""
    import celpy

    compiled = _compiled(rule)
    if compiled.error:
        return Outcome(None, f"cel-python cannot parse it ({compiled.error})")
    if compiled.optional:
        return Outcome(None, "it uses CEL optional types (a.?b, m[?k]), which gen cannot evaluate")
    try:
        result = program(rule).evaluate(variables)
    except celpy.CELEvalError as err:
        return _failure(err)
    except (ValueError, TypeError, IndexError, ArithmeticError) as err:  # from a library function
        return Outcome(False, f"evaluation error: {err}")
    if isinstance(result, celpy.CELEvalError):
        return _failure(result)
    if not isinstance(result, _types().BoolType):
        return Outcome(None, f"it gives {type(result).__name__}, not a bool")
    return Outcome(bool(result))


def _failure(err: Any) -> Outcome:
    """A rule that failed to evaluate: "no such key" is kube-apiserver's verdict too (an
    absent optional field read without has()); anything else, an unknown function above all,
    gen cannot judge."""
    args = err.args
    cause = args[1] if len(args) > 1 else None
    detail = args[2] if len(args) > 2 else None
    text = str(args[0]) if args else ""
    if cause is KeyError and text.startswith("undeclared reference"):
        name = detail[0] if isinstance(detail, tuple) and detail else text
        return Outcome(None, f"it calls {name}(), which gen does not provide")
    if cause is KeyError and "no such" in text:
        key = text.split(":", 1)[-1].strip()
        return Outcome(False, f"no such key: {key.strip(chr(39))}")
    if cause in (ValueError, IndexError, ZeroDivisionError, ArithmeticError):
        return Outcome(False, f"evaluation error: {text}")
    return Outcome(None, f"cel-python stops at it ({text.splitlines()[0] if text else type(err).__name__})")


def value(node_type: str | None, fmt: str | None, data: Any) -> Any:
    """A leaf as Kubernetes' CEL sees it: number fields are doubles, and string formats
    byte, duration, date and date-time give bytes, durations and timestamps."""
    import celpy

    t = _types()
    if node_type == "number" and isinstance(data, int | float) and not isinstance(data, bool):
        return t.DoubleType(float(data))
    if isinstance(data, str) and fmt in _FORMAT_TYPES:
        try:
            return _FORMAT_TYPES[fmt](data)
        except (ValueError, TypeError):
            return t.StringType(data)
    return celpy.json_to_cel(data)


_FORMAT_TYPES: dict[str, Callable[[str], Any]] = {
    "byte": lambda s: _types().BytesType(base64.b64decode(s, validate=True)),
    "duration": lambda s: _types().DurationType(s),
    "date-time": lambda s: _types().TimestampType(s),
    "date": lambda s: _types().TimestampType(f"{s}T00:00:00Z"),
}
