"""Fatal errors: the run cannot go on (bad installation, bad arguments, unsupported version).

Bad policies and invalid manifests are never raised: they are collected as Problems.
"""

from __future__ import annotations


class GeneratorError(Exception):
    """A usage or environment error; the CLI reports it and exits 2."""
