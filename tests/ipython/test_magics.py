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


IMAGE = """\
input_features:
  - {name: x, type: number}
  - {name: picture, type: image}
output_features:
  - {name: y, type: binary}
"""


def test_a_config_the_engine_cannot_run_is_refused_at_the_cells_line(ip, monkeypatch):
    from ludwig_nb.engines.ludwig import engine as ludwig_engine

    monkeypatch.setattr(ludwig_engine, "ludwig_missing", lambda: "engine: ludwig needs Ludwig")
    ip.user_ns["df"] = pd.DataFrame({"x": [1.0, 2.0], "picture": ["a", "b"], "y": [0, 1]})
    with pytest.raises(UsageError) as info:
        ip.run_cell_magic("ludwig_config", "--dataset df", IMAGE)  # engine auto
    assert str(info.value).startswith("line 4, input_features[1].type:")
    assert 'pip install "ludwig_nb[ludwig]"' in str(info.value)
    with pytest.raises(UsageError, match="engine: ludwig needs Ludwig"):
        ip.run_cell_magic("ludwig_config", "--dataset df --engine ludwig", IMAGE)
    with pytest.raises(UsageError, match="unknown engine 'torch'"):
        ip.run_cell_magic("ludwig_config", "--dataset df --engine torch", IMAGE)
