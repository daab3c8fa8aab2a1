"""A Ray process's prints and log records go to its file, and the process's streams come back."""

from __future__ import annotations

import logging
import sys

from ludwig_nb.engines.ray.process_log import log_to_file


def test_prints_and_log_records_go_to_the_file_and_nothing_is_left_attached(tmp_path, capsys):
    path = tmp_path / "logs" / "worker.log"
    root = logging.getLogger()
    handlers = list(root.handlers)
    with log_to_file(path):
        print("a print")
        print("an error line", file=sys.stderr)
        logging.getLogger("ludwig_nb.test").warning("a record")
    print("after")
    text = path.read_text()
    assert "a print\n" in text and "an error line\n" in text
    assert "WARNING ludwig_nb.test: a record" in text
    assert "after" not in text and "after" in capsys.readouterr().out
    assert root.handlers == handlers
    with log_to_file(path):  # appended, not truncated
        print("second")
    assert path.read_text().startswith(text) and path.read_text().endswith("second\n")
