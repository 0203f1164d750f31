"""Fan independent work out over worker processes when there is enough of it to pay.

Workers are forked (they inherit compiled schemas and templates already in memory) and
results come back in input order, so output never depends on scheduling. Where fork is not
available, or the work is small, everything runs in this process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this many policies a worker process (fork, pickling results) costs more than it saves.
MIN_ITEMS = 400


def cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def workers(amount: int, most: int | None = None) -> int:
    """How many processes `amount` units of work deserve (1: stay in this process)."""
    if amount < MIN_ITEMS:
        return 1
    import multiprocessing  # here, not at the top: `gen lint` of one file never needs it

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(cpus(), most if most is not None else cpus()))


def split(items: Sequence[T], parts: int) -> list[list[T]]:
    """Contiguous, order-keeping chunks of about equal size."""
    size, extra = divmod(len(items), parts)
    chunks, start = [], 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        chunks.append(list(items[start:end]))
        start = end
    return chunks


# The items of the running map: forked workers inherit them, so only an index crosses the pipe
# (pickling a target's thousands of policies to a worker cost more than rendering them).
_ITEMS: Sequence[Any] = ()


def _call(fn: Callable[[Any], R], index: int) -> R:
    return fn(_ITEMS[index])


def map_in_order(fn: Callable[[T], R], items: Sequence[T], processes: int) -> list[R]:
    if processes <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _ITEMS
    _ITEMS = items  # set before the pool forks its workers (at the first submit)
    try:
        with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork")) as pool:
            return list(pool.map(partial(_call, fn), range(len(items))))
    finally:
        _ITEMS = ()
