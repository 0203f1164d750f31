"""The package's layers, as docs/architecture.md draws them: every import (at the top of a
module or inside a function) goes to a lower layer or stays in its own; no module imports
itself back through others; and the stages reach the cache only through its store
(`generator.cache`), never the modules that decide what is reused (`generator.cache.*`), which
wrap the stages from above."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "generator"

# Lowest first. A module is in the first layer whose prefix names it (a package, or a module).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "generator",
            "generator.problems",
            "generator.errors",
            "generator.resources",
            "generator.schemas",
            "generator.schema_messages",
            "generator.parallel",
            "generator.layout",
            "generator.gitops",
            "generator.suppressions",
            "generator.cache",
        ),
    ),
    ("yaml", ("generator.yamlio",)),
    ("files", ("generator.files",)),
    ("kube", ("generator.kube",)),
    ("policies", ("generator.policies",)),
    ("render", ("generator.render",)),
    ("preview", ("generator.preview",)),
    (
        "cache decisions",
        ("generator.cache.policies", "generator.cache.renders", "generator.cache.targets", "generator.cache.validated"),
    ),
    (
        "pipeline and settings",
        (
            "generator.pipeline",
            "generator.config",
            "generator.baseline",
            "generator.catalogue",
            "generator.reporters",
            "generator.cost",
        ),
    ),
    ("commands", ("generator.commands", "generator.cli", "generator.__main__")),
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _layer(module: str) -> int:
    """The layer whose most specific prefix names the module."""
    best, depth = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and prefix.count(".") > depth:
                best, depth = index, prefix.count(".")
    assert best >= 0, f"{module} is in no layer: add it to LAYERS and docs/architecture.md"
    return best


def _imports(module: str, path: Path) -> set[str]:
    """The generator modules this one imports, anywhere in it."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            for alias in node.names:
                named = f"{base}.{alias.name}"
                found.add(named if named in MODULES else base)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name in MODULES and name != module}


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def test_every_import_goes_down_or_stays_in_its_layer() -> None:
    upward = [
        f"{module} ({LAYERS[_layer(module)][0]}) imports {target} ({LAYERS[_layer(target)][0]})"
        for module, targets in GRAPH.items()
        for target in targets
        if target != "generator" and _layer(target) > _layer(module)
    ]
    assert not upward, "\n".join(sorted(upward))


def test_no_module_imports_itself_back() -> None:
    def reaches(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(GRAPH[start])
        while todo:
            module = todo.pop()
            if module not in seen:
                seen.add(module)
                todo += GRAPH[module]
        return seen

    cycles = sorted(module for module in GRAPH if module in reaches(module))
    assert not cycles, f"import cycles through: {cycles}"


def test_the_stages_reach_the_cache_only_through_its_store() -> None:
    stages = ("generator.yamlio", "generator.files", "generator.kube", "generator.policies", "generator.render")
    deciding = {name for name in MODULES if name.startswith("generator.cache.")}
    reaching = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if module.startswith(stages)
        for target in targets & deciding
    )
    assert deciding and not reaching, reaching
