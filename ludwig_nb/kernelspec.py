"""The ludwig_nb kernel's spec: ``ludwig-nb kernel install`` writes it (see :func:`install`).

The kernel is ``python -m ludwig_nb.ipython.kernel`` (the launcher, in the IPython layer): an
ipykernel whose ludwig_nb warm-up starts with the kernel. This module only names it and writes its
``kernel.json``, so the CLI installs it without importing the IPython layer.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

__all__ = ["DISPLAY_NAME", "KERNEL_NAME", "LAUNCHER", "install", "kernel_argv"]

#: the kernel spec's name (a notebook's ``metadata.kernelspec.name``)
KERNEL_NAME = "ludwig_nb"
DISPLAY_NAME = "Python 3 (ludwig_nb)"
#: a name Jupyter accepts (jupyter_client's own rule)
_KERNEL_NAME = re.compile(r"[a-z0-9._\-]+", re.IGNORECASE)
#: the module the kernel runs
LAUNCHER = "ludwig_nb.ipython.kernel"


def kernel_argv() -> list[str]:
    """The kernel spec's ``argv``: the launcher under this interpreter."""
    # (-Xfrozen_modules=off as ipykernel writes it: the debugger needs unfrozen modules)
    return [sys.executable, "-Xfrozen_modules=off", "-m", LAUNCHER, "-f", "{connection_file}"]


def install(
    *,
    user: bool = False,
    prefix: str | None = None,
    name: str = KERNEL_NAME,
    display_name: str = DISPLAY_NAME,
) -> str:
    """Install the kernel spec; returns the directory it went to.

    Args:
        user: Into the user's Jupyter data directory (``~/.local/share/jupyter/kernels``).
        prefix: Into ``PREFIX/share/jupyter/kernels`` (e.g. ``sys.prefix`` for a venv); with
            neither, the system-wide directory.
        name: The kernel spec's name (``python3`` replaces the environment's default kernel).
        display_name: The name Jupyter's launcher and kernel picker show.

    Raises:
        ValueError: For a name Jupyter does not accept (letters, digits, ``.``, ``_``, ``-``).
    """
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager

    if not _KERNEL_NAME.fullmatch(name):
        raise ValueError(f"kernel name {name!r}: use letters, digits, '.', '_' and '-' only")
    with tempfile.TemporaryDirectory() as scratch:
        # ipykernel's logos and metadata (str: Colab's jupyter_client 7 takes no Path)
        spec_dir = str(write_kernel_spec(str(Path(scratch) / name)))
        spec_file = Path(spec_dir) / "kernel.json"
        spec = json.loads(spec_file.read_text(encoding="utf-8"))
        spec.update(argv=kernel_argv(), display_name=display_name)
        spec_file.write_text(json.dumps(spec, indent=1), encoding="utf-8")
        return str(
            KernelSpecManager().install_kernel_spec(
                spec_dir, kernel_name=name, user=user, prefix=prefix
            )
        )
