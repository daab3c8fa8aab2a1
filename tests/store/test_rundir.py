import pytest

from ludwig_nb.store import rundir


@pytest.mark.parametrize("bad", ["", "../x", "a/b", "..", "a..b", ".hidden", "x" * 200, "a b"])
def test_run_ids_that_could_escape_are_invalid(bad):
    assert not rundir.is_valid_run_id(bad)


def test_a_generated_style_id_is_valid():
    assert rundir.is_valid_run_id("churn-20261130-081500-a1b2")


def test_atomic_json_and_unreadable_files(tmp_path):
    path = tmp_path / "s.json"
    rundir.write_json_atomic(path, {"a": 1})
    assert rundir.read_json(path) == {"a": 1}
    path.write_text("{half")
    assert rundir.read_json(path) is None
    assert rundir.read_json(tmp_path / "missing.json") is None
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]  # no temp files left


def test_read_events_leaves_a_half_written_line(tmp_path):
    path = tmp_path / rundir.EVENTS_FILE
    path.write_text('{"type":"a"}\n{"type":"b"}\n{"type":')
    events, offset, more = rundir.read_events(path)
    assert [e["type"] for e in events] == ["a", "b"] and not more
    with open(path, "a") as handle:
        handle.write('"c"}\n')
    later, offset2, more = rundir.read_events(path, offset)
    assert [e["type"] for e in later] == ["c"] and offset2 == path.stat().st_size
    assert not more


def test_read_events_pages_a_long_log(tmp_path):
    path = tmp_path / rundir.EVENTS_FILE
    lines = [f'{{"type":"step_finished","step":{i}}}\n' for i in range(1000)]
    path.write_text("".join(lines))
    seen: list[int] = []
    offset, pages, more = 0, 0, True
    while more:
        events, offset, more = rundir.read_events(path, offset, max_bytes=4096)
        assert sum(len(line) for line in lines[len(seen) : len(seen) + len(events)]) <= 4096
        seen += [e["step"] for e in events]
        pages += 1
    assert seen == list(range(1000)) and offset == path.stat().st_size
    assert pages > 5


def test_read_events_returns_a_line_longer_than_the_page(tmp_path):
    path = tmp_path / rundir.EVENTS_FILE
    long = '{"type":"run_failed","traceback":"' + "x" * 10_000 + '"}\n'
    path.write_text(long + '{"type":"b"}\n')
    events, offset, more = rundir.read_events(path, 0, max_bytes=1024)
    assert [e["type"] for e in events] == ["run_failed"] and more
    events, offset, more = rundir.read_events(path, offset, max_bytes=1024)
    assert [e["type"] for e in events] == ["b"] and not more


def test_control_request_is_consumed_once(tmp_path):
    rundir.request_control(tmp_path, "pause")
    assert rundir.consume_control(tmp_path)["action"] == "pause"
    assert rundir.consume_control(tmp_path) is None
    with pytest.raises(ValueError, match="action must be one of"):
        rundir.request_control(tmp_path, "explode")
