"""Fan independent work out over forked processes when there is enough of it to pay.

This process takes the first share of the work itself and forks one child per other share.
Children inherit everything already in memory (compiled schemas, templates, the items), so
nothing is sent to them; each sends its results back once, pickled, and this process puts
them in input order, so output never depends on scheduling. Where fork is not available, or
the work is small, everything runs in this process.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this many policies a child process (fork, pickling results) costs more than it saves.
MIN_ITEMS = 400


def cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def workers(amount: int, most: int | None = None) -> int:
    """How many processes `amount` units of work deserve (1: stay in this process)."""
    if amount < MIN_ITEMS or not hasattr(os, "fork"):
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


def _shares(weights: Sequence[int], parts: int) -> list[list[int]]:
    """Indices per process, the heaviest item first to the least loaded share (each share in
    input order)."""
    shares: list[list[int]] = [[] for _ in range(parts)]
    loads = [0] * parts
    for index in sorted(range(len(weights)), key=lambda i: (-weights[i], i)):
        lightest = loads.index(min(loads))
        shares[lightest].append(index)
        loads[lightest] += weights[index]
    return [sorted(share) for share in shares if share]


class WorkerDied(RuntimeError):
    """A child ended without sending its results (killed, or out of memory)."""


def _fork(fn: Callable[[T], R], items: Sequence[T], share: list[int]) -> tuple[int, int]:
    """A child computing fn over items[share]; returns its pid and the pipe its results come on."""
    import pickle  # here, not at the top: `gen lint` of one file never forks

    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        os.close(write_end)
        return pid, read_end
    os.close(read_end)  # in the child from here on: it never returns, it exits
    status = 0
    try:
        try:
            outcome: tuple[bool, Any] = (True, [fn(items[i]) for i in share])
        except BaseException as err:  # the parent re-raises it
            outcome, status = (False, err), 1
        try:
            data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as err:  # an exception that does not pickle: send its text
            data = pickle.dumps((False, RuntimeError(f"{type(outcome[1]).__name__}: {err}")))
            status = 1
        with open(write_end, "wb") as pipe:
            pipe.write(data)
    finally:
        os._exit(status)  # no atexit handlers, no flushing of buffers copied from the parent


def _collect(pid: int, read_end: int) -> list[Any]:
    import pickle

    try:
        with open(read_end, "rb") as pipe:
            data = pipe.read()  # before waiting: a child blocks on a full pipe until it is read
    finally:
        _, status = os.waitpid(pid, 0)
    if not data:
        raise WorkerDied(f"a worker process ended without a result ({_describe(status)})")
    ok, value = pickle.loads(data)
    if not ok:
        raise value
    result: list[Any] = value
    return result


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def map_in_order(
    fn: Callable[[T], R], items: Sequence[T], processes: int, weight: Callable[[T], int] | None = None
) -> list[R]:
    """[fn(item) for item in items], over up to `processes` processes.

    Without weight, each process takes a contiguous share of about equal length; with it, shares
    of about equal total weight.
    """
    if processes <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    if weight is None:
        shares = split(range(len(items)), min(processes, len(items)))
    else:
        shares = _shares([weight(item) for item in items], processes)
    children: list[tuple[list[int], int, int]] = []
    results: list[Any] = [None] * len(items)
    try:
        for share in shares[1:]:  # inside the try: a fork that fails still stops the ones before it
            children.append((share, *_fork(fn, items, share)))
        for index in shares[0]:
            results[index] = fn(items[index])
        while children:
            share, pid, read_end = children.pop(0)
            for index, value in zip(share, _collect(pid, read_end), strict=True):
                results[index] = value
    finally:
        for _, pid, read_end in children:  # something failed before their results were read
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read_end)
    return results
