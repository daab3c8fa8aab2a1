"""The magics through a real IPython shell: arguments, located errors, run control."""

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

BAD_KEY = """\
input_features:
  - {name: x, type: number}
output_features:
  - {name: y, type: binary}
trainer: {epochs: 2, batch_sise: 64}
"""


def test_load_ext_registers_every_magic(ip):
    cells = ip.magics_manager.magics["cell"]
    lines = ip.magics_manager.magics["line"]
    assert "ludwig_config" in cells
    assert {"ludwig_runs", "ludwig_stop", "ludwig_pause", "ludwig_resume"} <= set(lines)


def test_help_is_the_docstring(ip):
    from ludwig_nb.ipython.magics import LudwigMagics

    assert "Validate the Ludwig config" in LudwigMagics.ludwig_config.__doc__
    assert "--dataset" in LudwigMagics.ludwig_config.__doc__  # magic_arguments appends usage


def test_the_engine_settings_help_names_every_engine(ip):
    from ludwig_nb.engines.registry import ENGINE_NAMES
    from ludwig_nb.ipython.magics import LudwigMagics

    setting = LudwigMagics.class_traits()["engine"].help
    doc = LudwigMagics.ludwig_config.__doc__
    option = doc[doc.rindex("--engine") :].split("\n  -", 1)[0]  # its line of the options
    for name in ENGINE_NAMES:
        assert name in setting, name  # %config LudwigMagics.engine
        assert name in option, name  # %%ludwig_config --engine


def test_config_error_is_one_usage_error_at_the_cells_own_line(ip):
    ip.user_ns["df"] = pd.DataFrame({"x": [1.0, 2.0], "y": [0, 1]})
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("ludwig_config", "--dataset df", BAD_KEY)
    message = str(info.value)
    # the YAML's line 5 is the cell's line 6: the magic line is line 1
    assert message.startswith("line 6, trainer.batch_sise:")
    assert "did you mean 'batch_size'?" in message
    assert "^" in message and "Traceback" not in message


def test_through_run_cell_the_user_sees_no_traceback(ip):
    with capture_output() as captured:
        result = ip.run_cell("%%ludwig_config --dataset df\n" + BAD_KEY)
    assert not result.success and isinstance(result.error_in_exec, UsageError)
    assert "UsageError: line 6" in captured.stderr and "Traceback" not in captured.stderr


def test_dataset_is_required_and_must_resolve(ip):
    good = "input_features: [{name: x, type: number}]\noutput_features: [{name: y, type: binary}]"
    with pytest.raises(UsageError, match="--dataset is required"):
        ip.run_cell_magic("ludwig_config", "", good)
    with pytest.raises(UsageError, match="neither a variable, an expression nor an existing file"):
        ip.run_cell_magic("ludwig_config", "--dataset no_such_thing.csv", good)


def test_unknown_option_is_a_usage_error(ip):
    with pytest.raises(UsageError):
        ip.run_cell_magic("ludwig_config", "--nope 1", "")


def test_stop_pause_resume_name_the_missing_run(ip):
    with pytest.raises(UsageError, match="no run named 'ghost'"):
        ip.run_line_magic("ludwig_stop", "ghost")
    with pytest.raises(UsageError, match="no run named 'ghost'"):
        ip.run_line_magic("ludwig_pause", "ghost")


def test_traits_are_configurable(ip):
    ip.run_line_magic("config", "LudwigMagics.frame_rate = 2.0")
    from ludwig_nb.ipython.magics import LudwigMagics

    magics = ip.magics_manager.registry[LudwigMagics.__name__]
    assert magics.frame_rate == 2.0
    ip.run_line_magic("config", "LudwigMagics.frame_rate = 4.0")


AUDIO = """\
input_features:
  - {name: x, type: number}
  - {name: picture, type: audio}
output_features:
  - {name: y, type: binary}
"""


def test_a_config_the_engine_cannot_run_is_refused_at_the_cells_line(ip, monkeypatch):
    from ludwig_nb.engines.ludwig import engine as ludwig_engine

    monkeypatch.setattr(ludwig_engine, "ludwig_missing", lambda: "engine: ludwig needs Ludwig")
    ip.user_ns["df"] = pd.DataFrame({"x": [1.0, 2.0], "picture": ["a", "b"], "y": [0, 1]})
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("ludwig_config", "--dataset df", AUDIO)  # engine auto
    assert str(info.value).startswith("line 4, input_features[1].type:")
    assert 'pip install "ludwig_nb[ludwig]"' in str(info.value)
    with pytest.raises(UsageError, match="engine: ludwig needs Ludwig"):
        ip.run_cell_magic("ludwig_config", "--dataset df --engine ludwig", AUDIO)
    with pytest.raises(UsageError, match="unknown engine 'torch'"):
        ip.run_cell_magic("ludwig_config", "--dataset df --engine torch", AUDIO)


def test_ludwig_compare_takes_run_names_and_directories(ip, tmp_path):
    from ludwig_nb.runs import train

    config = (
        "input_features: [{name: x, type: number}]\n"
        "output_features: [{name: y, type: binary}]\n"
        "trainer: {epochs: 2, batch_size: 8}\ngpu_watch: {enabled: false}\n"
    )
    df = pd.DataFrame({"x": [float(i % 7) for i in range(60)], "y": [i % 2 for i in range(60)]})
    common = {
        "results_dir": tmp_path / "r",
        "registry_dir": tmp_path / "reg",
        "wait": True,
        "threads": 1,
    }
    first = train(config, df, name="cmp_a", **common)
    second = train(config.replace("batch_size: 8", "batch_size: 16"), df, name="cmp_b", **common)
    comparison = ip.run_line_magic("ludwig_compare", f"cmp_a {second.directory}")
    assert comparison.names == ["cmp_a", "cmp_b"] and first.is_done
    assert comparison.config_diff == {"trainer.batch_size": (8, 16)}
    assert "ludwig-nb-compare" in comparison._repr_html_()
    # the same rows from a CSV file are the same dataset; changed rows are not, and say so
    df.to_csv(tmp_path / "same.csv", index=False)
    train(config, str(tmp_path / "same.csv"), name="cmp_csv", **common)
    changed = df.assign(y=1 - df.y)
    train(config, changed, name="cmp_changed", **common)
    same = ip.run_line_magic("ludwig_compare", "cmp_a cmp_csv")
    assert not any("different datasets" in w for w in same.warnings)
    other = ip.run_line_magic("ludwig_compare", "cmp_csv cmp_changed")
    assert any(w.startswith("different datasets: cmp_csv=") for w in other.warnings)
    assert "different datasets" in other._repr_html_()
    with pytest.raises(UsageError, match="is not a run of this kernel"):
        ip.run_line_magic("ludwig_compare", "cmp_a no_such_run")


def test_estimate_with_vary_shows_the_sweep(ip):
    from unittest import mock

    cell = (
        "input_features: [{name: x, type: number}]\n"
        "output_features: [{name: y, type: binary}]\ntrainer: {epochs: 1}\n"
    )
    ip.user_ns["sweep_df"] = pd.DataFrame(
        {"x": [float(i % 5) for i in range(200)], "y": [i % 2 for i in range(200)]}
    )
    with mock.patch("IPython.display.display") as shown:
        ip.run_cell_magic(
            "ludwig_config", "--dataset sweep_df --estimate --vary trainer.batch_size=16,32", cell
        )
    (sweep,), _ = shown.call_args
    assert [p.value for p in sweep.points] == [16, 32]
    with pytest.raises(UsageError, match="--vary needs --estimate"):
        ip.run_cell_magic("ludwig_config", "--dataset sweep_df --vary trainer.batch_size=8", cell)
    with pytest.raises(UsageError, match="expected PATH=V1,V2"):
        ip.run_cell_magic("ludwig_config", "--dataset sweep_df --estimate --vary 8,16", cell)


SEARCH = """\
input_features:
  - {name: Weight_in_lbs, type: number}
  - {name: Horsepower, type: number, preprocessing: {missing_value_strategy: fill_with_mean}}
output_features:
  - {name: Miles_per_Gallon, type: number}
trainer: {epochs: 2, batch_size: 32}
hyperopt:
  parameters:
    trainer.learning_rate: {space: grid_search, values: [0.001, 0.01]}
"""


def test_ludwig_hyperopt_searches_the_cell_and_binds_the_search(ip, tmp_path):
    pytest.importorskip("optuna")  # the [hyperopt] extra (not in Colab's pinned test env)
    with capture_output() as captured:
        ip.run_cell_magic(
            "ludwig_hyperopt", "--dataset demo:cars --name cars_search --wait", SEARCH
        )
    search = ip.user_ns["cars_search"]
    assert search is ip.user_ns["_ludwig_search"] and search.is_done and search.error is None
    assert sorted(search.trials["trainer.learning_rate"]) == [0.001, 0.01]
    assert list(search.trials["state"]) == ["completed", "completed"]
    assert search.directory == (tmp_path / "results" / "cars_search").resolve()
    # the live panel, then the static summary that replaces it (text/html survives saving)
    first, *_, last = captured.outputs
    assert first.data["text/plain"] == "ludwig_nb search: cars_search"
    assert "application/vnd.jupyter.widget-view+json" in first.data
    assert last.data["text/plain"] == "ludwig_nb search cars_search: 2 completed"
    assert "2 of 2 trials" in last.data["text/html"] and "<svg" in last.data["text/html"]


def test_ludwig_hyperopt_errors_are_at_the_cells_lines(ip):
    bad = SEARCH.replace("trainer.learning_rate:", "trainer.learning_rte:")
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("ludwig_hyperopt", "--dataset demo:cars", bad)
    assert str(info.value).startswith("line 10, hyperopt.parameters.trainer.learning_rte:")
    with pytest.raises(UsageError, match="--dataset is required"):
        ip.run_cell_magic("ludwig_hyperopt", "", SEARCH)


def test_ludwig_config_refuses_a_search_and_names_the_magic(ip):
    with pytest.raises(UsageError, match="%%ludwig_hyperopt"):
        ip.run_cell_magic("ludwig_config", "--dataset demo:cars --engine builtin", SEARCH)
