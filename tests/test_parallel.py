"""Forked workers: results in input order, failures surface in this process, no child is left behind."""

from __future__ import annotations

import datetime
import gc
import marshal
import os
import pickle
import signal
import time

import pytest

from generator import parallel
from generator.errors import GeneratorError

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _square_with_pid(n: int) -> tuple[int, int]:
    time.sleep(0.002)  # long enough that every process gets to take some batches
    return n * n, os.getpid()


def test_results_keep_input_order_across_processes() -> None:
    items = list(range(60))
    results = parallel.map_in_order(_square_with_pid, items, 3)
    assert [value for value, _ in results] == [n * n for n in items]
    assert len({pid for _, pid in results}) == 3 and os.getpid() in {pid for _, pid in results}


def test_weighted_items_are_taken_heaviest_first_and_kept_in_order() -> None:
    weights = [5, 50, 1, 48, 1]
    assert parallel.batches(5, 2, weights) == [[1], [3], [0], [2], [4]]
    results = parallel.map_in_order(_square_with_pid, weights, 2, weight=lambda w: w)
    assert [value for value, _ in results] == [w * w for w in weights]


class Box:
    """A result that marshal cannot send: only its codec turns it into plain values."""

    def __init__(self, value: object, pid: int, decoded: bool = False) -> None:
        self.value, self.pid, self.decoded = value, pid, decoded


BOXES: parallel.Codec[Box] = parallel.Codec(lambda box: (box.value, box.pid), lambda plain: Box(*plain, decoded=True))


def _boxed(n: int) -> Box:
    time.sleep(0.002)
    value = {"n": n, "square": [n * n]}
    if n == 7:
        value["when"] = datetime.date(2001, 12, 14)  # marshal cannot send a date: pickle does
    return Box(value, os.getpid())


@pytest.mark.parametrize("count", [7, 20])
def test_a_codec_sends_plain_values_and_falls_back_to_pickle(count: int) -> None:
    items = list(range(count))
    results = parallel.map_in_order(_boxed, items, 2, meanwhile=_busy, codec=BOXES)  # all in the child
    assert [box.value["square"] for box in results] == [[n * n] for n in items]
    assert all(box.pid != os.getpid() for box in results)
    assert [box.decoded for box in results] == [n != 7 for n in items]  # item 7's batch goes pickled
    assert count == 7 or results[7].value["when"] == datetime.date(2001, 12, 14)


def test_messages_say_how_they_are_encoded() -> None:
    plain = parallel._message((True, [(0, Box(1, 2))]), BOXES)
    assert plain[:1] == parallel._MARSHALLED and marshal.loads(plain[1:]) == [(0, (1, 2))]
    dated = parallel._message((True, [(0, Box(datetime.date(2001, 1, 1), 2))]), BOXES)
    assert dated[:1] == parallel._PICKLED and pickle.loads(dated[1:])[1][0][1].value == datetime.date(2001, 1, 1)
    failed = parallel._message((False, ValueError("x")), BOXES)
    assert failed[:1] == parallel._PICKLED


def test_what_the_children_inherit_is_kept_from_their_collector() -> None:
    gc.unfreeze()
    inherited = [[n] for n in range(1000)]  # tracked containers, alive before the fork
    try:
        parallel.map_in_order(_square_with_pid, list(range(10)), 2)
        assert gc.get_freeze_count() >= len(inherited)
    finally:
        gc.unfreeze()


def test_results_come_through_a_temporary_file_where_there_is_no_memfd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(os, "memfd_create", raising=False)
    results = parallel.map_in_order(_square_with_pid, list(range(40)), 2, meanwhile=_busy)
    assert [value for value, _ in results] == [n * n for n in range(40)]
    assert {pid for _, pid in results} != {os.getpid()}


def test_batches_cover_every_item_once_and_fit_one_pipe_page() -> None:
    for count in (2, 31, 1000, 100_000):
        plan = parallel.batches(count, 2)
        assert [i for batch in plan for i in batch] == list(range(count))
        assert len(plan) <= parallel.MAX_BATCHES and all(plan)
    assert len(parallel.batches(5000, 2, [1] * 5000)) <= parallel.MAX_BATCHES


def test_work_done_first_here_leaves_the_items_to_the_children() -> None:
    """What this process prepares for a later stage runs while the children take the queue."""
    results = parallel.map_in_order(_square_with_pid, list(range(20)), 2, meanwhile=lambda: time.sleep(0.5))
    assert [value for value, _ in results] == [n * n for n in range(20)]
    assert os.getpid() not in {pid for _, pid in results}


def test_preparation_is_skipped_when_nothing_is_forked() -> None:
    prepared: list[int] = []
    assert parallel.map_in_order(abs, [-1, 2], 1, meanwhile=lambda: prepared.append(1)) == [1, 2]
    assert prepared == []


def _fail_in_child(n: int) -> int:
    if n == 9 and os.getpid() != PARENT:
        raise GeneratorError("item 9 is broken")
    return n


def _die_in_child(n: int) -> int:
    if n == 9 and os.getpid() != PARENT:
        os.kill(os.getpid(), signal.SIGKILL)
    return n


def _unpicklable_in_child(n: int) -> int:
    if n == 9 and os.getpid() != PARENT:
        error = ValueError("no pickle")
        error.payload = lambda: None  # type: ignore[attr-defined]
        raise error
    return n


PARENT = os.getpid()


def _busy() -> None:
    """Keeps this process away from the queue until a child has taken every item."""
    time.sleep(0.5)


def _no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_childs_exception_is_raised_here() -> None:
    with pytest.raises(GeneratorError, match="item 9 is broken"):
        parallel.map_in_order(_fail_in_child, list(range(10)), 2, meanwhile=_busy)
    assert _no_children_left()


def test_a_killed_child_is_reported_not_ignored() -> None:
    with pytest.raises(parallel.WorkerDied, match="SIGKILL"):
        parallel.map_in_order(_die_in_child, list(range(10)), 2, meanwhile=_busy)
    assert _no_children_left()


def test_an_exception_that_does_not_pickle_arrives_as_text() -> None:
    with pytest.raises(RuntimeError, match="ValueError"):
        parallel.map_in_order(_unpicklable_in_child, list(range(10)), 2, meanwhile=_busy)


def _fail_here() -> None:
    raise GeneratorError("this process failed")


def test_failing_here_stops_and_reaps_the_children() -> None:
    with pytest.raises(GeneratorError, match="this process failed"):
        parallel.map_in_order(_square_with_pid, list(range(10)), 3, meanwhile=_fail_here)
    assert _no_children_left()


def test_a_failed_fork_stops_the_children_already_started(monkeypatch: pytest.MonkeyPatch) -> None:
    real_fork, forks = os.fork, []

    def fork_once() -> int:
        if forks:
            raise BlockingIOError("fork: resource temporarily unavailable")
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", fork_once)
    with pytest.raises(BlockingIOError):
        parallel.map_in_order(_square_with_pid, list(range(9)), 3)
    assert _no_children_left()


@pytest.mark.parametrize(("value", "expected"), [("3", 3), ("1", 1), ("0", None), ("many", None), ("", None)])
def test_gen_workers_sets_the_process_count(monkeypatch: pytest.MonkeyPatch, value: str, expected: int | None) -> None:
    monkeypatch.setenv("GEN_WORKERS", value)
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert parallel.cpus() == (expected if expected is not None else available)


def test_work_beside_is_done_in_a_child_and_sent_through_the_codec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEN_WORKERS", "2")
    with parallel.Beside(_boxed, 3, parallel.MIN_ITEMS, BOXES) as beside:
        box = beside.result()
    assert box.value == {"n": 3, "square": [9]} and box.pid != os.getpid() and box.decoded
    assert _no_children_left()


def test_work_beside_stays_here_with_one_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEN_WORKERS", "1")
    with parallel.Beside(_square_with_pid, 4, parallel.MIN_ITEMS) as beside:
        assert beside.result() == (16, os.getpid())


def test_too_little_work_beside_stays_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEN_WORKERS", "2")
    with parallel.Beside(_square_with_pid, 4, parallel.MIN_ITEMS - 1) as beside:
        assert beside.result() == (16, os.getpid())


def test_a_childs_exception_beside_is_raised_when_its_result_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEN_WORKERS", "2")
    with (
        parallel.Beside(_fail_in_child, 9, parallel.MIN_ITEMS) as beside,
        pytest.raises(GeneratorError, match="item 9 is broken"),
    ):
        beside.result()
    assert _no_children_left()


def test_work_beside_never_asked_is_stopped_and_reaped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEN_WORKERS", "2")
    with parallel.Beside(time.sleep, 30, parallel.MIN_ITEMS):
        pass
    assert _no_children_left()
