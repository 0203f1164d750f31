"""Forked workers: results in input order, failures surface in this process, no child is left behind."""

from __future__ import annotations

import os
import signal

import pytest

from generator import parallel
from generator.errors import GeneratorError

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _square_with_pid(n: int) -> tuple[int, int]:
    return n * n, os.getpid()


def test_results_keep_input_order_across_processes() -> None:
    items = list(range(23))
    results = parallel.map_in_order(_square_with_pid, items, 3)
    assert [value for value, _ in results] == [n * n for n in items]
    assert len({pid for _, pid in results}) == 3 and os.getpid() in {pid for _, pid in results}


def test_weighted_shares_balance_and_keep_order() -> None:
    weights = [50, 1, 1, 1, 48, 1]
    shares = parallel._shares(weights, 2)
    assert sorted(i for share in shares for i in share) == list(range(6))
    assert sorted(sum(weights[i] for i in share) for share in shares) == [51, 51]
    assert all(share == sorted(share) for share in shares)
    results = parallel.map_in_order(_square_with_pid, weights, 2, weight=lambda w: w)
    assert [value for value, _ in results] == [w * w for w in weights]


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


def _no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_childs_exception_is_raised_here() -> None:
    with pytest.raises(GeneratorError, match="item 9 is broken"):
        parallel.map_in_order(_fail_in_child, list(range(10)), 2)
    assert _no_children_left()


def test_a_killed_child_is_reported_not_ignored() -> None:
    with pytest.raises(parallel.WorkerDied, match="SIGKILL"):
        parallel.map_in_order(_die_in_child, list(range(10)), 2)
    assert _no_children_left()


def test_an_exception_that_does_not_pickle_arrives_as_text() -> None:
    with pytest.raises(RuntimeError, match="ValueError"):
        parallel.map_in_order(_unpicklable_in_child, list(range(10)), 2)


def _fail_here(n: int) -> int:
    if os.getpid() == PARENT:
        raise GeneratorError("this process failed")
    return n


def test_failing_here_stops_and_reaps_the_children() -> None:
    with pytest.raises(GeneratorError, match="this process failed"):
        parallel.map_in_order(_fail_here, list(range(10)), 3)
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
