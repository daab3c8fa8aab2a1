"""The background warm-up: nothing at import, torch and torch._dynamo after it, once."""

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
        "print(all(m in sys.modules for m in ('torch', 'torch._dynamo',"
        " 'ludwig_nb.engines.builtin.trainer')))\n"
    )
    assert _run(code).splitlines() == ["False", "True True True", "True"]


def test_load_ext_starts_the_warm_up():
    code = (
        "import threading\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "shell.run_line_magic('load_ext', 'ludwig_nb')\n"
        "from ludwig_nb.engines.builtin import warmup\n"
        "print(warmup._started[0].name if warmup._started else None)\n"
        "warmup._started[0].join()\n"
    )
    assert _run(code) == "ludwig-nb-warm-up"
