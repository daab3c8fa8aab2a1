"""The model manifest: written by each engine, read by load_model; old folders still load."""

from __future__ import annotations

import pytest

from ludwig_nb.engines.manifest import MANIFEST_FILE, read_manifest, write_manifest


def test_written_manifest_reads_back(tmp_path):
    write_manifest(tmp_path / "m", "ludwig", path="../x/model")
    assert read_manifest(tmp_path / "m") == {"engine": "ludwig", "format": 1, "path": "../x/model"}


def test_a_builtin_folder_without_manifest_is_builtin(tmp_path):
    (tmp_path / "model_weights.pt").write_bytes(b"")
    assert read_manifest(tmp_path)["engine"] == "builtin"


def test_a_ludwig_folder_without_manifest_is_ludwig(tmp_path):
    (tmp_path / "model_weights").write_bytes(b"")
    (tmp_path / "model_hyperparameters.json").write_text("{}")
    assert read_manifest(tmp_path)["engine"] == "ludwig"


def test_no_model_at_all_is_a_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a saved model"):
        read_manifest(tmp_path)


@pytest.mark.parametrize("body", ["{not json", '{"format": 1}', "[]"])
def test_a_broken_manifest_names_its_file(tmp_path, body):
    (tmp_path / MANIFEST_FILE).write_text(body)
    with pytest.raises(ValueError, match=MANIFEST_FILE):
        read_manifest(tmp_path)
