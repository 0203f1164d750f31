"""Fan independent work out over forked processes when there is enough of it to pay.

This process forks one child per extra process, then works alongside them. Every process
takes its next batch of items from one shared queue (a pipe of batch numbers, filled before
the fork), so a process that starts late or meets slow items simply takes fewer. Children
inherit everything already in memory (compiled schemas, templates, the items), so nothing is
sent to them; each writes every batch's results as it finishes it, pickled (or, given a Codec,
as marshal data), and this process puts them in input order, so output never depends on
scheduling. Where fork is not available, or the work is small, everything runs in this process.
"""

from __future__ import annotations

import gc
import marshal
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
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
    """The CPUs gen may use: GEN_WORKERS when set (a count; 1 keeps all work in one process),
    else those this process may run on."""
    wanted = os.environ.get("GEN_WORKERS", "")
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted)
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
    back: marshal writes and reads those in about 60% of pickle's time."""

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


def _taken(queue: int, plan: list[list[int]]) -> Iterator[list[int]]:
    """The batches of item indices this process takes from the queue, until it is empty."""
    while record := os.read(queue, _RECORD):
        yield plan[int.from_bytes(record, "little")]


def _results_file() -> int:
    """Where a child writes each batch's results as soon as they are done: memory (a memfd)
    where the kernel has it, else an unlinked temporary file. Unlike a pipe it never fills, so
    a child never waits for this process (busy with `meanwhile` and its own share), and its
    results are encoded while other work goes on instead of all at its end."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("gen-results", os.MFD_CLOEXEC)
    import tempfile

    with tempfile.TemporaryFile() as spill:
        return os.dup(spill.fileno())


def _send(results: int, message: bytes) -> None:
    view = memoryview(len(message).to_bytes(8, "little") + message)
    while view:
        view = view[os.write(results, view) :]


def _fork(
    fn: Callable[[T], R], items: Sequence[T], queue: int, plan: list[list[int]], codec: Codec[R] | None
) -> _Child:
    """A child working through the queue, writing its results as it goes."""
    results = _results_file()
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except BaseException:
        os.close(results)
        raise
    if pid:
        return _Child(pid, results)
    status = 0  # in the child from here on: it never returns, it exits
    try:
        try:
            for batch in _taken(queue, plan):
                _send(results, _message((True, [(index, fn(items[index])) for index in batch]), codec))
        except BaseException as err:  # the parent re-raises it
            status = 1
            try:
                failure = _message((False, err), None)
            except Exception as unpicklable:  # an exception that does not pickle: send its text
                failure = _message((False, RuntimeError(f"{type(err).__name__}: {unpicklable}")), None)
            _send(results, failure)
    finally:
        os._exit(status)  # no atexit handlers, no flushing of buffers copied from the parent


def _decoded(message: memoryview, codec: Codec[Any] | None) -> tuple[bool, Any]:
    if message[:1] == _MARSHALLED and codec is not None:
        return True, [(index, codec.from_plain(plain)) for index, plain in marshal.loads(message[1:])]
    import pickle

    outcome: tuple[bool, Any] = pickle.loads(message[1:])
    return outcome


class _Child:
    """A forked worker: its pid, the file its results go to, and how much of it is read."""

    def __init__(self, pid: int, results: int) -> None:
        self.pid, self.results = pid, results
        self.read = 0
        self.collected: list[tuple[int, Any]] = []

    def take_results(self, codec: Codec[Any] | None) -> None:
        """Decode every whole record written so far (a child's exception is raised here)."""
        size = os.fstat(self.results).st_size
        data = memoryview(os.pread(self.results, size - self.read, self.read) if size > self.read else b"")
        at = 0
        while at + 8 <= len(data):
            end = at + 8 + int.from_bytes(data[at : at + 8], "little")
            if end > len(data):
                break  # still being written, or cut off by the child's end: its status says which
            ok, value = _decoded(data[at + 8 : end], codec)
            if not ok:
                raise value
            self.collected.extend(value)
            at = end
        self.read += at

    def finish(self, codec: Codec[Any] | None) -> list[tuple[int, Any]]:
        """Its results once it has exited; WorkerDied if it ended without all of them."""
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0  # reaped
        self.take_results(codec)
        if status != 0:
            raise WorkerDied(f"a worker process ended without all its results ({_describe(status)})")
        return self.collected


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
    children: list[_Child] = []
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
            for child in children:  # what they finished meanwhile, decoded while they go on
                child.take_results(codec)
        for batch in _taken(queue, plan):
            for index in batch:
                results[index] = fn(items[index])
        for child in children:
            for index, value in child.finish(codec):
                results[index] = value
    finally:
        os.close(queue)
        for child in children:
            _stop(child)
    return results


def _stop(child: _Child) -> None:
    """Kill a child not reaped (something failed before its results were read); close its file."""
    if child.pid:
        os.kill(child.pid, signal.SIGKILL)
        os.waitpid(child.pid, 0)
    os.close(child.results)


class Beside(Generic[T, R]):
    """fn(item) worked out in a forked process while this one goes on; `result()` waits for it.

    For work that does not depend on what this process does meanwhile (a check surveys the
    output while the policies load and render). With one CPU, no fork, or too little work to
    pay for a process (`amount`, counted as workers() counts it), fn runs in this process when
    its result is asked. Leaving the `with` block stops a child not asked.
    """

    def __init__(self, fn: Callable[[T], R], item: T, amount: int, codec: Codec[R] | None = None) -> None:
        self._fn, self._item, self._codec = fn, item, codec
        self._child: _Child | None = None
        if workers(amount) > 1:
            queue = _queue(1)
            try:
                self._child = _fork(fn, [item], queue, [[0]], codec)
            finally:
                os.close(queue)

    def result(self) -> R:
        if self._child is None:
            return self._fn(self._item)
        child, self._child = self._child, None
        try:
            [(_, value)] = child.finish(self._codec)
        finally:
            _stop(child)
        result: R = value
        return result

    def __enter__(self) -> Beside[T, R]:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._child is not None:
            _stop(self._child)
            self._child = None
