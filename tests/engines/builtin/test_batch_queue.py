from __future__ import annotations

import threading

import pytest

from ludwig_nb.engines.builtin.batch_queue import BatchQueue, batch_source


def test_batches_come_in_order_and_at_most_depth_ahead():
    made: list[int] = []
    gate = threading.Semaphore(0)

    def make(i: int) -> int:
        made.append(i)
        gate.release()
        return i * 10

    queue = BatchQueue(make, 2, 8, depth=2)
    for _ in range(3):  # two in the queue and one waiting to be put
        gate.acquire(timeout=5)
    assert made == [2, 3, 4]
    assert [queue(i) for i in range(2, 8)] == [20, 30, 40, 50, 60, 70]
    queue.close()


def test_an_error_of_make_is_raised_where_its_batch_is_asked():
    def make(i: int) -> int:
        if i == 1:
            raise OSError("cache gone")
        return i

    queue = BatchQueue(make, 0, 3)
    assert queue(0) == 0
    with pytest.raises(OSError, match="cache gone"):
        queue(1)
    queue.close()


def test_close_ends_the_thread_while_the_queue_is_full():
    queue = BatchQueue(lambda i: i, 0, 1000, depth=1)
    queue.close()
    assert not queue._thread.is_alive()


def test_a_skipped_batch_is_an_error_not_the_wrong_data():
    queue = BatchQueue(lambda i: i, 0, 3)
    with pytest.raises(RuntimeError, match="batch 0 came where batch 1"):
        queue(1)
    queue.close()


def test_batch_source_is_make_itself_unless_ahead():
    def make(i: int) -> int:
        return i

    with batch_source(make, 0, 3, ahead=False) as source:
        assert source is make
    with batch_source(make, 0, 3, ahead=True) as source:
        assert isinstance(source, BatchQueue) and source(0) == 0
    assert not source._thread.is_alive()
