"""The parser: its help names what exists."""

import pytest

from ludwig_nb.cli import main


def test_help_lists_the_demos_that_exist(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = capsys.readouterr().out
    assert "churn" in text and "cars" in text and "reviews" in text
    assert "housing" not in text
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--demo", "housing"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'housing'" in capsys.readouterr().err
