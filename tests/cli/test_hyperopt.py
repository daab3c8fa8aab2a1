"""``ludwig-nb hyperopt``: a line per finished trial, the best, and a resume that reruns nothing."""

from ludwig_nb.cli import main
from tests.cli.conftest import CONFIG


def test_hyperopt_prints_each_trial_and_the_best(files, tmp_path, capsys):
    _, config, data = files
    config.write_text(
        CONFIG.replace("epochs: 8", "epochs: 2")
        + "hyperopt:\n  parameters:\n"
        + "    trainer.learning_rate: {space: grid_search, values: [0.001, 0.05]}\n"
    )
    out_dir = tmp_path / "out"
    args = ["hyperopt", "-c", str(config), "-d", str(data), "-o", str(out_dir), "--name", "s"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.count(": completed ") == 2 and "trainer.learning_rate=0.05" in out
    assert "best: trial " in out and (out_dir / "s" / "hyperopt_statistics.json").exists()
    # a second call resumes: both trials are finished, none reruns
    capsys.readouterr()
    assert main(args) == 0
    again = capsys.readouterr().out
    assert again.count(": completed ") == 2
    journal = (out_dir / "s" / "trials.ndjson").read_text()
    assert journal.count('"trial_started"') == 2


def test_hyperopt_config_mistake_exits_2_with_the_line(files, capsys):
    _, config, data = files
    config.write_text(
        CONFIG + "hyperopt:\n  parameters: {trainer.lr: {space: uniform, lower: 0, upper: 1}}\n"
    )
    assert main(["hyperopt", "-c", str(config), "-d", str(data)]) == 2
    err = capsys.readouterr().err
    assert "line 8, hyperopt.parameters.trainer.lr" in err and "learning_rate" in err
