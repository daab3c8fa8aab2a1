"""The background warm-up: nothing at import, torch after it (never torch._dynamo), once."""

import subprocess
import sys


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_warm_up_imports_what_the_first_fit_needs_once_and_in_a_thread():
    code = (
        "import sys, threading\n"
        "from ludwig_nb.engines.builtin import warmup\n"
        "print('torch' in sys.modules)\n"
        "thread = warmup.start()\n"
        "print(thread is warmup.start(), thread.daemon, thread is not threading.main_thread())\n"
        "thread.join()\n"
        "print(all(m in sys.modules for m in ('torch', 'ludwig_nb.engines.builtin.trainer')))\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    assert _run(code).splitlines() == ["False", "True True True", "True", "False"]


def test_load_ext_warms_the_dashboard_then_the_engine_in_one_thread():
    code = (
        "import sys, threading\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "shell.run_line_magic('load_ext', 'ludwig_nb')\n"
        "(thread,) = [t for t in threading.enumerate() if t.name == 'ludwig_nb-warmup']\n"
        "print(thread.daemon)\n"
        "thread.join()\n"
        "print(all(m in sys.modules for m in ('ludwig_nb.ui.dashboard', 'torch',"
        " 'ludwig_nb.engines.builtin.trainer')))\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    assert _run(code).splitlines() == ["True", "True", "False"]
