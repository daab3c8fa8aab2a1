"""The ludwig_nb kernel: its spec, ``ludwig-nb kernel install``, and a real kernel started from it
that warms up before any cell and trains a run like a plain one."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.kernelspec import KernelSpecManager

from ludwig_nb import cli
from ludwig_nb.kernelspec import KERNEL_NAME, install, kernel_argv
from tests.ipython.test_colab import execute

REPO = Path(__file__).resolve().parents[2]


def _specs(root: Path) -> KernelSpecManager:
    return KernelSpecManager(kernel_dirs=[str(root / "share" / "jupyter" / "kernels")])


def test_install_writes_a_spec_that_runs_this_python_on_the_launcher(tmp_path):
    where = install(prefix=str(tmp_path))
    spec = _specs(tmp_path).get_kernel_spec(KERNEL_NAME)
    assert Path(where) == tmp_path / "share" / "jupyter" / "kernels" / KERNEL_NAME
    assert (
        spec.argv
        == kernel_argv()
        == [
            sys.executable,
            "-Xfrozen_modules=off",
            "-m",
            "ludwig_nb.ipython.kernel",
            "-f",
            "{connection_file}",
        ]
    )
    assert spec.display_name == "Python 3 (ludwig_nb)" and spec.language == "python"
    assert (Path(where) / "logo-64x64.png").is_file()  # ipykernel's logos came along


def test_a_second_install_replaces_the_first_under_the_name_given(tmp_path):
    install(prefix=str(tmp_path), name="python3", display_name="first")
    install(prefix=str(tmp_path), name="python3", display_name="second")
    assert _specs(tmp_path).get_kernel_spec("python3").display_name == "second"


def test_a_name_jupyter_refuses_is_a_value_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match="'my kernel'"):
        install(prefix=str(tmp_path), name="my kernel")


def test_the_cli_installs_where_its_flags_say(tmp_path, monkeypatch, capsys):
    assert cli.main(["kernel", "install", "--prefix", str(tmp_path), "--name", "nb"]) == 0
    assert "installed kernel 'nb'" in capsys.readouterr().out
    assert _specs(tmp_path).get_kernel_spec("nb").argv[3] == "ludwig_nb.ipython.kernel"
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "user"))
    assert cli.main(["kernel", "install", "--user"]) == 0
    assert json.loads((tmp_path / "user" / "kernels" / KERNEL_NAME / "kernel.json").read_text())


def test_the_cli_says_where_it_could_not_write_and_what_to_do(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert cli.main(["kernel", "install", "--prefix", str(blocker)]) == 2
    err = capsys.readouterr().err
    assert f"{blocker}/share/jupyter/kernels" in err and "--user" in err
    assert "Traceback" not in err
    assert cli.main(["kernel", "install", "--prefix", str(tmp_path), "--name", "a b"]) == 2
    assert "'a b'" in capsys.readouterr().err


def test_a_warm_up_that_cannot_start_still_starts_the_kernel(monkeypatch, capsys):
    import ipykernel.kernelapp
    import ipywidgets

    from ludwig_nb.ipython import kernel, warmup

    calls: list[str] = []

    class App:  # ipykernel's app: initialize() makes the shell, start() serves
        shell = "the shell"

        @classmethod
        def instance(cls) -> App:
            return cls()

        def initialize(self) -> None:
            calls.append("initialize")

        def start(self) -> None:
            calls.append("start")

    def broken(what: str) -> Any:
        def fail(*args: Any) -> None:
            calls.append(f"{what}{args}")
            raise ImportError(f"no module named {what!r}")

        return fail

    # the warm-up starts only once ipykernel's kernel modules are loaded on this thread
    # (imported beside it, initialize() read `IPython.core` half-imported: the kernel died)
    monkeypatch.delitem(sys.modules, "ipykernel.ipkernel")
    warm = broken("torch")

    def warm_after_ipykernel() -> None:
        calls.append(f"ipkernel loaded: {'ipykernel.ipkernel' in sys.modules}")
        warm()

    monkeypatch.setattr(warmup, "start_kernel_warm_up", warm_after_ipykernel)
    monkeypatch.setattr(ipywidgets, "load_ipython_extension", broken("comm"))
    monkeypatch.setattr(ipykernel.kernelapp, "IPKernelApp", App)
    kernel.main()
    # the warm-up first, the widgets once the shell exists, and the kernel serves anyway
    assert calls == [
        "ipkernel loaded: True",
        "torch()",
        "initialize",
        "comm('the shell',)",
        "start",
    ]
    err = capsys.readouterr().err
    assert "the warm-up failed (ImportError: no module named 'torch')" in err
    assert "registering the widgets' comm targets failed (ImportError" in err


def test_without_ipykernel_the_cli_says_what_to_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ipykernel.kernelspec", None)  # its import now fails
    assert cli.main(["kernel", "install", "--prefix", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "pip install ipykernel" in err and "Traceback" not in err
    assert not (tmp_path / "share").exists()


# -- a real kernel from the spec ---------------------------------------------------------
@pytest.fixture
def warm_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from jupyter_client.manager import start_new_kernel

    install(prefix=str(tmp_path / "prefix"), name="under-test")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "prefix" / "share" / "jupyter"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("MPLBACKEND", "agg")
    km, kc = start_new_kernel(kernel_name="under-test", cwd=str(tmp_path))
    yield kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def _printed(cell: Any) -> str:
    assert not [o for o in cell.outputs if o["type"] == "error"], cell.outputs
    return "".join(o.get("text", "") for o in cell.outputs if o["type"] == "stream")


@pytest.mark.timeout(300)
def test_the_kernel_imports_torch_before_any_cell_and_then_trains_a_run(warm_kernel):
    # before any ludwig_nb cell: the warm-up thread was started by the kernel, and it loads
    # torch and the engine with no cell asking for them
    seen = _printed(
        execute(
            warm_kernel,
            (
                "import sys, threading\n"
                "import ludwig_nb.ipython.warmup as w\n"
                "print('started', w._started.is_set())\n"
                # ipywidgets, imported by the warm-up, found the shell: the widget comm targets are
                # there, as in a plain kernel
                "print('targets', sorted(get_ipython().kernel.comm_manager.targets))\n"
                "[t.join(120) for t in threading.enumerate() if t.name == 'ludwig_nb-warmup']\n"
                "print('torch', 'torch' in sys.modules,\n"
                "      'ludwig_nb.engines.builtin.trainer' in sys.modules)"
            ),
        )
    )
    assert "started True" in seen and "torch True True" in seen
    assert "targets ['jupyter.widget', 'jupyter.widget.control']" in seen
    # the notebook's own %load_ext loads the extension (no "already loaded" notice)
    assert _printed(execute(warm_kernel, "%load_ext ludwig_nb")).strip() == ""
    execute(
        warm_kernel,
        (
            "%%ludwig_config --dataset demo:churn --name churn\n"
            "input_features: [{name: total_day_minutes, type: number}]\n"
            "output_features: [{name: churn, type: binary}]\n"
            "trainer: {epochs: 1, batch_size: 256}\n"
        ),
    )
    done = _printed(execute(warm_kernel, "print(churn.wait().status)"))
    assert done.strip().splitlines()[-1] == "completed"
