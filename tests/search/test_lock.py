"""The search folder's lock: one holder at a time, named to the next, released on close."""

import json
import os

import pytest

from ludwig_nb.search.lock import LOCK_FILE, SearchBusyError, SearchLock


def test_a_second_lock_on_the_folder_is_refused_naming_the_folder_and_the_holder(tmp_path):
    first = SearchLock(tmp_path, clock=lambda: 0.0).acquire()
    holder = json.loads((tmp_path / LOCK_FILE).read_text())
    assert holder["pid"] == os.getpid() and holder["time"] == 0.0
    with pytest.raises(SearchBusyError) as info:
        SearchLock(tmp_path).acquire()
    assert str(tmp_path) in str(info.value) and "this process" in str(info.value)
    assert first.held
    first.release()
    first.release()  # twice is fine
    second = SearchLock(tmp_path).acquire()
    assert second.held
    second.release()


def test_a_holder_that_has_not_written_itself_yet_is_still_named_as_a_search(tmp_path):
    import fcntl

    with (tmp_path / LOCK_FILE).open("a+") as raw:  # held, nothing written
        fcntl.flock(raw.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(SearchBusyError, match="in use by another search: two searches"):
            SearchLock(tmp_path).acquire()
