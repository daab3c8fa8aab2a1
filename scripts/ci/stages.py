"""Every CI stage, in order: to add a check, add its line here.

``scripts/test.sh`` runs ``STAGES``; ``.ci/run`` runs ``SETUP`` first, on a fresh machine. A
stage is a command run from the clone's root with the project's venv (``.venv``) first on
PATH; see :class:`scripts.ci.runner.Stage` for what else a stage can say (a side venv to
wait for, running in the background, a Jupyter runtime directory of its own).
"""

from __future__ import annotations

from scripts.ci.runner import Join, Stage, Step

__all__ = ["PYTHON_TREES", "SETUP", "STAGES"]

#: the Python that ruff lints and formats
PYTHON_TREES = ("ludwig_nb", "tests", "benchmarks", "scripts")

#: the pytest options every pytest stage shares (no cache in the clone)
_PYTEST = ("python", "-m", "pytest", "-q", "-p", "no:cacheprovider")

#: a fresh machine's set-up (.ci/run); nothing after it can run when it fails
SETUP: tuple[Step, ...] = (Stage("setup", ("bash", "scripts/setup.sh"), gate=True),)

STAGES: tuple[Step, ...] = (
    # what only the tests need from the system: Debian's Chromium and gcc (root, or sudo)
    Stage("system-deps", ("bash", "scripts/setup/system_packages.sh")),
    Stage("ruff", ("ruff", "check", *PYTHON_TREES)),
    Stage("format", ("ruff", "format", "--check", *PYTHON_TREES)),
    # the package, the runner, and the UI tests' FakeRun checked against RunHandle
    Stage("mypy", ("mypy", "ludwig_nb", "scripts/ci", "tests/ui/conftest.py")),
    Stage("layers", ("lint-imports",)),
    Stage("sidebar", ("bash", "-c", "cd labextension && jlpm lint:check && jlpm test")),
    # real Ludwig 0.11 in its own venv (torch 2.14.1 beside the main venv's CPU 2.13.0), beside
    # the main venv's stages from the moment its venv is built, with a run registry of its own
    Stage(
        "ludwig",
        ("bash", "scripts/ci/test_ludwig.sh", "--durations=25"),
        env_build="ludwig",
        background=True,
        runtime_dir=True,
    ),
    # (--durations: the slowest tests of each long stage are listed in its log, for the next trim)
    Stage("pytest", (*_PYTEST, "-m", "not browser and not ludwig and not ray", "--durations=15")),
    # Playwright's sync API keeps an event loop running in the main thread for the whole
    # session, which breaks pytest-jupyter's loop fixtures: the browser tests get their own run
    Stage("browser", (*_PYTEST, "-m", "browser", "tests/browser", "--durations=10")),
    # nbval compares the notebooks' outputs with the stored ones (notebooks/nbval.cfg masks
    # what legitimately varies); their runs go to a scratch results dir and runtime registry
    Stage(
        "nbval",
        (
            *_PYTEST,
            "--nbval",
            "--nbval-current-env",
            "--nbval-sanitize-with",
            "notebooks/nbval.cfg",
            "-o",
            "testpaths=notebooks",
            "-o",
            "addopts=",
            "notebooks",
        ),
        runtime_dir=True,
        removes=("notebooks/results",),
    ),
    # Colab's pinned stack (IPython 7.34, ipykernel 6.17.1, ipywidgets 7.7.1, ...): the pins
    # stay put when ludwig_nb installs, and tests/ui + the Colab profile run there
    Stage("colab", ("bash", "scripts/ci/test_colab.sh"), env_build="colab"),
    Join("ludwig"),
    # Ray Train in its own venv (ray[default,train] beside CPU torch 2.13.0); each test has a
    # hard timeout and the run ends with no ray:: process of its own left behind
    Stage("ray", ("bash", "scripts/ci/test_ray.sh", "--durations=10"), env_build="ray"),
)
