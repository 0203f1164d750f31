"""Stage 2a: turn loaded documents into policies, checking structure against schemas/.

Every schema error is mapped back to the line and column of the offending node, with a
did-you-mean hint for unknown fields and a YAML 1.1 hint where the parser changed a value's type.
"""

from __future__ import annotations

import difflib
import marshal
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from generator import cache, schemas
from generator.errors import GeneratorError
from generator.problems import Problem
from generator.schema_messages import in_words, shown
from generator.yamlio.load import Document, Scalar, SourceMap, load_file

if TYPE_CHECKING:
    import jsonschema


# What other policies read of a policy: a workload's namespace (empty for kinds without one),
# and a ReplicatedService's placement.colocateWith rules.
Shared = tuple[str, list[dict[str, Any]]]


@dataclass
class Policy:
    """A schema-valid policy with the schema's defaults filled in."""

    kind: str
    name: str
    labels: dict[str, str]
    spec: dict[str, Any]
    doc: Document
    directory: str = ""  # the real directory of its file: where a Manifests policy's paths start
    loaded: Any = field(default=None, repr=False, compare=False)  # a Manifests policy's objects, read once

    @cached_property
    def shared(self) -> Shared:
        """What the target's other policies read of this one (`context.across`, the Namespaces
        a target creates, the colocation check): kept beside a cached policy as values, so a
        run reads it without unpacking the spec."""
        placement = self.spec.get("placement")
        colocate = placement.get("colocateWith") if isinstance(placement, dict) else None
        namespace = self.spec.get("namespace")
        return namespace if isinstance(namespace, str) else "", list(colocate or [])

    def to_plain(self) -> tuple[Any, ...]:
        """The policy as plain values, for loader processes to send and the cache to keep (see
        parallel.Codec): what says which targets take it, and what other policies read of it,
        as values; the rest packed."""
        doc = self.doc
        packed = marshal.dumps((self.spec, doc.data, doc.text))
        return (self.kind, self.name, self.labels, self.shared, doc.file, doc.index, packed)

    @classmethod
    def from_plain(cls, plain: tuple[Any, ...]) -> Policy:
        kind, name, labels, shared, file, index, packed = plain
        if not isinstance(packed, bytes):
            raise TypeError("a policy's spec, document and text are packed")
        return _PackedPolicy(kind, name, labels, shared, _PackedDocument(file, index, packed))

    @property
    def file(self) -> str:
        return self.doc.file

    def problem(self, path: tuple[str | int, ...], rule: str, message: str, **kw: Any) -> Problem:
        """A finding at spec path `path` of this policy."""
        return self.doc.problem(("spec", *path), rule, message, **kw)


class _PackedDocument(Document):
    """A cached policy's document, its data and text unpacked when first asked for: a render
    whose targets are all up to date never looks at most policies beyond their kind, name and
    labels (unpacking 10,000 took 0.1 s)."""

    def __init__(self, file: str, index: int, packed: bytes) -> None:  # Document's fields, set by hand
        self.file, self.index, self.kube, self.digest = file, index, False, ""
        self._source = self._file_sources = None  # positions: worked out on demand, as Document does
        self._packed: bytes | None = packed
        self._unpacked: tuple[Any, Any, str] | None = None

    def unpacked(self) -> tuple[Any, Any, str]:
        """(the policy's spec, the document's data, its file's text)."""
        if self._unpacked is None:
            try:
                with cache.collector_paused():  # they live as long as the policy
                    spec, data, text = marshal.loads(self._packed or b"")
            except (EOFError, ValueError, TypeError):  # damaged inside a cache file that reads
                spec, data, text = self._read_again()
            self._unpacked, self._packed = (spec, data, text), None
        return self._unpacked

    def _read_again(self) -> tuple[Any, Any, str]:
        """The policy as its file gives it, as if nothing were cached (files are named from
        the working directory)."""
        docs, _ = load_file(self.file, self.file)
        policy = build_policy(docs[self.index])[0] if self.index < len(docs) else None
        if policy is None:
            raise GeneratorError(f"{self.file} changed while gen read it; run gen again")
        return policy.spec, policy.doc.data, policy.doc.text

    @property
    def data(self) -> Any:
        return self.unpacked()[1]

    @property
    def _text(self) -> str:  # type: ignore[override]
        return self.unpacked()[2]


class _PackedPolicy(Policy):
    """A cached policy: its spec unpacked with its document, when first asked for."""

    def __init__(self, kind: str, name: str, labels: dict[str, str], shared: Shared, doc: _PackedDocument) -> None:
        self.kind, self.name, self.labels, self.doc = kind, name, labels, doc
        namespace, colocate = shared
        self.shared = (namespace, list(colocate))  # the cached_property's place: never computed again
        self.directory, self.loaded = "", None
        self._packed = doc

    @cached_property  # then an attribute: the checks across a target read it 19 times a policy
    def spec(self) -> dict[str, Any]:  # type: ignore[override]
        spec: dict[str, Any] = self._packed.unpacked()[0]
        return spec


def _yaml11_hint(scalar: Scalar | None, expected: Any) -> str:
    if scalar is None or not scalar.plain:
        return ""
    text = scalar.text
    if text.lower() in {"y", "n", "yes", "no", "on", "off", "true", "false"}:
        return f"YAML 1.1 reads unquoted {text!r} as a boolean; quote it if you meant the string"
    if len(text) > 1 and text.startswith("0") and text.isdigit() and "8" not in text and "9" not in text:
        return f"YAML 1.1 reads {text!r} as an octal number; write {int(text, 8)} or quote it"
    if "string" in str(expected):
        return f"quote the value: {text!r} was read as a {'number' if text[:1].isdigit() else 'non-string'}"
    if (
        any(c in text for c in "eE")
        and text.replace("e", "").replace("E", "").replace("-", "").replace("+", "").replace(".", "").isdigit()
    ):
        return f"{text!r} is a string in YAML 1.1 (an exponent needs a dot, e.g. 1.0e3); write the plain number"
    return ""


def schema_problems(
    doc: Document, err: jsonschema.ValidationError, schema_file: str, prefix: str = "policy"
) -> list[Problem]:
    """A schema error as findings at the lines that caused it: `<prefix>-required`,
    `<prefix>-unknown-field` (one per key, with what was probably meant) or `<prefix>-schema`."""
    from jsonschema.exceptions import best_match  # only invalid policies pay for the reference validator

    if err.validator in {"additionalProperties", "unevaluatedProperties"} and isinstance(err.instance, dict):
        return _unknown_fields(doc, err, schema_file, prefix)
    if err.context:
        deepest = best_match(err.context)
        if deepest is not None and len(deepest.absolute_path) >= len(err.absolute_path):
            err = deepest
            if err.validator in {"additionalProperties", "unevaluatedProperties"} and isinstance(err.instance, dict):
                return _unknown_fields(doc, err, schema_file, prefix)
    path = tuple(err.absolute_path)
    hint = ""
    if err.validator == "required":
        return [doc.problem(path, f"{prefix}-required", in_words(err), hint="add the field")]
    if err.validator in {"type", "pattern", "enum", "const", "anyOf", "oneOf", "minimum", "maximum"}:
        hint = _yaml11_hint(doc.source.scalars.get(path), err.validator_value)
    if err.validator in {"maximum", "minimum"} and err.validator_value in (2147483647, -2147483648):
        hint = hint or "the value must fit a signed 32-bit integer"
    if not hint and isinstance(err.schema, dict):  # a field's own advice, kept beside it in the schema
        hint = str(err.schema.get("x-gen-hint", ""))
    return [doc.problem(path, f"{prefix}-schema", in_words(err), hint=hint)]


# PodSpec fields a kind builds itself, and where the policy says what it wants instead.
_OWNED_POD_FIELDS = {
    "containers": "gen builds the main container from the policy's Container fields; more long-running "
    "containers are native sidecars: pod.initContainers entries with restartPolicy: Always",
    "schedulerName": "a GpuWorkload sets it at spec.schedulerName (a profile of a Scheduler in its target)",
    "restartPolicy": "a GpuWorkload sets it at spec.restartPolicy",
}


def _unknown_fields(doc: Document, err: jsonschema.ValidationError, schema_file: str, prefix: str) -> list[Problem]:
    """One finding per unknown key, each at its own line, with what was probably meant."""
    path = tuple(err.absolute_path)
    allowed = schemas.allowed_properties(err.schema, schema_file)
    problems = []
    for key in sorted(str(k) for k in err.instance if k not in allowed):
        problems.append(
            doc.problem(
                (*path, key),
                f"{prefix}-unknown-field",
                f"unknown field {shown(key)}",
                hint=_did_you_mean(key, allowed, path),
                key=True,
            )
        )
    return problems


def _did_you_mean(key: str, allowed: set[str], path: tuple[str | int, ...]) -> str:
    if path[-1:] == ("pod",) and key in _OWNED_POD_FIELDS:
        return _OWNED_POD_FIELDS[key]
    pod_fields = schemas.read("kubernetes.json")["$defs"]["gen.PodFields"]["properties"]
    if key in pod_fields and path[:1] == ("spec",):
        return f"did you mean spec.pod.{key}? PodSpec fields go under spec.pod"
    close = difflib.get_close_matches(key, sorted(allowed), n=1)
    return f"did you mean {close[0]!r}?" if close else f"allowed: {', '.join(sorted(allowed))}"


def _all_finite(value: Any) -> bool:
    """True when value holds no inf or nan: a plain walk, several times cheaper than the one
    that says where they are (and than the C JSON encoder, which builds the whole text)."""
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, list):
        return not isinstance(value, float) or math.isfinite(value)
    return all(map(_all_finite, value))


def _non_finite(value: Any, path: tuple[str | int, ...]) -> Iterable[tuple[str | int, ...]]:
    if isinstance(value, float) and not math.isfinite(value):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _non_finite(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _non_finite(item, (*path, i))


def build_policy(doc: Document) -> tuple[Policy | None, list[Problem]]:
    data = doc.data
    if not isinstance(data, dict):
        return None, [doc.problem((), "policy-shape", "a policy document must be a mapping")]
    api, kind = data.get("apiVersion"), data.get("kind")
    if api != schemas.POLICY_API_VERSION:
        return None, [
            doc.problem(
                ("apiVersion",),
                "policy-kind",
                f"apiVersion must be {schemas.POLICY_API_VERSION}, "
                + ("and it is missing" if api is None else f"not {shown(api)}"),
            )
        ]
    if kind not in schemas.POLICY_KINDS:
        close = difflib.get_close_matches(str(kind), schemas.POLICY_KINDS, n=1)
        return None, [
            doc.problem(
                ("kind",),
                "policy-kind",
                "kind is missing" if kind is None else f"unknown policy kind {shown(kind)}",
                hint=f"did you mean {close[0]!r}?" if close else f"one of {', '.join(schemas.POLICY_KINDS)}",
            )
        ]
    name = schemas.policy_schema_file(kind)
    problems = [
        doc.problem(
            path, "policy-number", "numbers must be finite", hint=".inf and .nan cannot become Kubernetes values"
        )
        for path in ([] if _all_finite(data) else _non_finite(data, ()))
    ]
    for err in schemas.iter_schema_errors(name, data):
        problems += schema_problems(doc, err, name)
    problems = list(dict.fromkeys(problems))  # one key can fail a schema and the schema that combines it
    if problems:
        return None, problems
    full = schemas.apply_defaults(data, name)
    meta = full["metadata"]
    return Policy(kind, meta["name"], dict(meta.get("labels", {})), full.get("spec", {}), doc), []


def build_policies(docs: Iterable[Document]) -> tuple[list[Policy], list[Problem]]:
    return unique_policies([build_policy(doc) for doc in docs])


def unique_policies(built: Iterable[tuple[Policy | None, list[Problem]]]) -> tuple[list[Policy], list[Problem]]:
    """The policies in order, each (kind, name) once; a second definition is a finding."""
    policies: list[Policy] = []
    problems: list[Problem] = []
    seen: dict[tuple[str, str], Policy] = {}
    for policy, found in built:
        problems.extend(found)
        if policy is None:
            continue
        doc = policy.doc
        key = (policy.kind, policy.name)
        if key in seen:
            first = seen[key]
            pos = first.doc.source.locate(("metadata", "name"))
            problems.append(
                doc.problem(
                    ("metadata", "name"),
                    "policy-duplicate-name",
                    f"{policy.kind} {policy.name!r} is already defined at {first.file}:{pos.line}",
                    hint="policy names must be unique per kind",
                )
            )
            continue
        seen[key] = policy
        policies.append(policy)
    return policies, problems


def builtin_policy(kind: str, name: str = "default") -> Policy:
    """The policy a user did not write: every field at its schema default."""
    data = {"apiVersion": schemas.POLICY_API_VERSION, "kind": kind, "metadata": {"name": name}}
    policy, problems = build_policy(Document("<built-in>", 0, data, SourceMap()))
    if policy is None:  # only a broken schema file gets here
        raise GeneratorError(f"built-in {kind} does not validate: {problems[0].message}")
    return policy
