"""Fan independent work out over forked processes when there is enough of it to pay.

This process forks one child per extra process, then works alongside them. Every process
takes its next batch of items from one shared queue (a pipe of batch numbers, filled before
the fork), so a process that starts late or meets slow items simply takes fewer. Children
inherit everything already in memory (compiled schemas, templates, the items), so nothing is
sent to them; each sends its results back once, pickled (or, given a Codec, as marshal data),
and this process puts them in input order, so output never depends on scheduling. Where fork
is not available, or the work is small, everything runs in this process.
"""

from __future__ import annotations

import gc
import marshal
import os
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this many policies a child process (fork, pickling results) costs more than it saves.
MIN_ITEMS = 400
# Batches per process: enough that the last ones even out the finish, few enough that taking
# one (a 4-byte read) costs nothing next to its work.
BATCHES_PER_PROCESS = 16
_RECORD = 4  # bytes per batch number in the queue
# At most one page of batch numbers: the least a pipe ever holds, so filling it never blocks.
MAX_BATCHES = 4096 // _RECORD


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


def batches(count: int, processes: int, weights: Sequence[int] | None = None) -> list[list[int]]:
    """The queue's batches of item indices, in the order they are taken.

    Weighted items (few and uneven, like targets) go one per batch, heaviest first, so the
    last to start is a light one; others go in contiguous runs of about equal length.
    """
    if weights is not None and count <= MAX_BATCHES:
        return [[i] for i in sorted(range(count), key=lambda i: (-weights[i], i))]
    return split(range(count), min(count, processes * BATCHES_PER_PROCESS, MAX_BATCHES))


class Codec(NamedTuple, Generic[R]):
    """Results as plain values (str, int, float, bool, None, lists, tuples, dicts, sets) and
    back: marshal writes and reads those in about 60% of pickle's time, most of it on the
    critical path (a child's last act, then this process's wait)."""

    to_plain: Callable[[R], Any]
    from_plain: Callable[[Any], R]


# The first byte of a child's message: how the rest is encoded.
_PICKLED, _MARSHALLED = b"P", b"M"


def _message(outcome: tuple[bool, Any], codec: Codec[Any] | None) -> bytes:
    ok, value = outcome
    if ok and codec is not None:
        try:
            return _MARSHALLED + marshal.dumps([(index, codec.to_plain(result)) for index, result in value])
        except ValueError:
            pass  # a value marshal does not know (say, a date in a free-form field): pickle it
    import pickle  # here, not at the top: `gen lint` of one file never forks

    return _PICKLED + pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)


class WorkerDied(RuntimeError):
    """A child ended without sending its results (killed, or out of memory)."""


def _work(fn: Callable[[T], R], items: Sequence[T], queue: int, plan: list[list[int]]) -> list[tuple[int, R]]:
    """Take batches from the queue until it is empty; results paired with their item's index."""
    done = []
    while record := os.read(queue, _RECORD):
        for index in plan[int.from_bytes(record, "little")]:
            done.append((index, fn(items[index])))
    return done


def _fork(
    fn: Callable[[T], R], items: Sequence[T], queue: int, plan: list[list[int]], codec: Codec[R] | None
) -> tuple[int, int]:
    """A child working through the queue; returns its pid and the pipe its results come on."""
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
            outcome: tuple[bool, Any] = (True, _work(fn, items, queue, plan))
        except BaseException as err:  # the parent re-raises it
            outcome, status = (False, err), 1
        try:
            data = _message(outcome, codec)
        except Exception as err:  # an exception that does not pickle: send its text
            data = _message((False, RuntimeError(f"{type(outcome[1]).__name__}: {err}")), None)
            status = 1
        with open(write_end, "wb") as pipe:
            pipe.write(data)
    finally:
        os._exit(status)  # no atexit handlers, no flushing of buffers copied from the parent


def _collect(pid: int, read_end: int, codec: Codec[Any] | None) -> list[Any]:
    try:
        with open(read_end, "rb") as pipe:
            data = pipe.read()  # before waiting: a child blocks on a full pipe until it is read
    finally:
        _, status = os.waitpid(pid, 0)
    if not data:
        raise WorkerDied(f"a worker process ended without a result ({_describe(status)})")
    body = memoryview(data)[1:]
    if data[:1] == _MARSHALLED and codec is not None:
        return [(index, codec.from_plain(plain)) for index, plain in marshal.loads(body)]
    import pickle

    ok, value = pickle.loads(body)
    if not ok:
        raise value
    result: list[Any] = value
    return result


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def _queue(count: int) -> int:
    """A pipe holding the batch numbers 0..count-1; the read end (every process takes from it)."""
    read_end, write_end = os.pipe()
    try:
        data = b"".join(n.to_bytes(_RECORD, "little") for n in range(count))
        view = memoryview(data)
        while view:  # at most MAX_BATCHES records: never blocks
            view = view[os.write(write_end, view) :]
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)  # readers see the end of the queue once it is empty
    return read_end


def map_in_order(
    fn: Callable[[T], R],
    items: Sequence[T],
    processes: int,
    weight: Callable[[T], int] | None = None,
    meanwhile: Callable[[], object] | None = None,
    codec: Codec[R] | None = None,
) -> list[R]:
    """[fn(item) for item in items], over up to `processes` processes.

    `weight` marks few, uneven items (taken heaviest first). `meanwhile` is preparation for a
    later stage that pays only when it overlaps other work: this process does it while the
    children start on the items, and joins them after; it is skipped when nothing is forked.
    `codec` sends children's results as plain values; this process's own need none.
    """
    if processes <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    plan = batches(len(items), processes, None if weight is None else [weight(item) for item in items])
    queue = _queue(len(plan))
    children: list[tuple[int, int]] = []
    results: list[Any] = [None] * len(items)
    # Everything alive now moves out of the cycle collector's reach: collections in the children
    # would otherwise write to it and copy the pages they share with this process (a cold
    # render of 1,000 services spent about 25 ms on that).
    gc.freeze()
    try:
        for _ in range(processes - 1):  # inside the try: a fork that fails still stops the ones before it
            children.append(_fork(fn, items, queue, plan, codec))
        if meanwhile is not None:
            meanwhile()
        for index, value in _work(fn, items, queue, plan):
            results[index] = value
        while children:
            pid, read_end = children.pop(0)
            for index, value in _collect(pid, read_end, codec):
                results[index] = value
    finally:
        os.close(queue)
        for pid, read_end in children:  # something failed before their results were read
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read_end)
    return results
