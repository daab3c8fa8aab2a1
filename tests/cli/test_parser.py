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


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("train", ["Train a Ludwig config", "--resume-from RUN_DIR", "example"]),
        ("evaluate", ["Evaluate a saved model", "--json", "example"]),
        ("predict", ["one <output>_probabilities_<class> column per class", "example"]),
        ("compare", ["what you changed in the config", "example"]),
        ("hyperopt", ["same --name to resume it", "example"]),
        ("kernel", ["Jupyter kernel spec"]),
    ],
)
def test_every_command_has_a_real_help_text(capsys, command, words):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert all(word in text for word in words), text
