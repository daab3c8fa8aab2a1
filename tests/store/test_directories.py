"""The one-line messages for OS errors while making a run (the errnos root cannot cause)."""

import errno
import os

import pytest

from ludwig_nb.store.directories import RunDirectoryError, explain, make_run_directory, undo


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (errno.EACCES, "cannot write the results directory {p}: permission denied; pass another"),
        (errno.EROFS, "cannot write the results directory {p}: read-only file system; pass"),
        (errno.ENOSPC, "cannot write the results directory {p}: no space left on the device"),
        (errno.EIO, "cannot write the results directory {p}: Input/output error; pass"),
    ],
)
def test_each_os_error_is_one_line_naming_the_path(tmp_path, code, expected):
    err = explain(OSError(code, os.strerror(code)), tmp_path, "results")
    assert isinstance(err, RunDirectoryError) and err.errno == code
    assert str(err).startswith(expected.format(p=tmp_path)) and "\n" not in str(err)


def test_a_registry_error_says_to_set_the_runtime_dir(tmp_path):
    err = explain(OSError(errno.EACCES, "Permission denied"), tmp_path, "registry")
    assert "run registry" in str(err) and "JUPYTER_RUNTIME_DIR" in str(err)


def test_undo_removes_only_what_was_made(tmp_path):
    (tmp_path / "keep").mkdir()
    directory, created = make_run_directory(tmp_path / "keep" / "new" / "deeper", "run-1")
    assert directory.is_dir() and created == tmp_path / "keep" / "new"
    undo(created)
    assert (tmp_path / "keep").is_dir() and not (tmp_path / "keep" / "new").exists()
