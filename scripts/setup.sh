#!/usr/bin/env bash
# Set up ludwig_nb from this clone: a venv (.venv) with CPU torch, the package with its
# test/dev extras (this builds the JupyterLab sidebar from source, with Node's jlpm), and the
# Jupyter kernel specs. Runs as a normal user: it installs nothing outside the clone and
# needs no root (what only the tests need from the system, Chromium and gcc, is the first
# test stage's: scripts/setup/system_packages.sh). Idempotent: a second run only checks.
#
#   bash scripts/setup.sh
#   LUDWIG_NB_DEFAULT_KERNEL=plain bash scripts/setup.sh   # leave python3 a plain ipykernel
set -euo pipefail
cd "$(dirname "$0")/.."
# Under CI (or LUDWIG_NB_PREBUILD_ENVS=1) the side venvs (Colab's pins, Ludwig, Ray; cached
# by their requirements) start building in the background now, while this script and the
# main test stages run; each test stage that needs one waits for it (scripts/ci/envs.py).
if [[ ${CI:-} == true || ${LUDWIG_NB_PREBUILD_ENVS:-0} == 1 ]]; then
  python3 -m scripts.ci.envs start
fi
VENV=${VENV:-.venv}
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
# shellcheck disable=SC1091
. "$VENV/bin/activate"
python -m pip install -q --upgrade pip
# CPU torch first: an unpinned torch pulls a multi-GB CUDA build.
python -c "import torch" 2>/dev/null || python -m pip install -q "torch==2.13.0"
# Build requirements in the venv, then an editable install without isolation: the
# labextension is built once by hatch-jupyter-builder (jlpm) from labextension/.
python -m pip install -q hatchling hatch-jupyter-builder jupyter-builder editables "jupyterlab>=4.6,<5"
python -m pip install -q --no-build-isolation -e ".[dev]"
# (read the whole listing first: grep -q closing the pipe early would fail under pipefail)
labext=$(jupyter labextension list 2>&1)
grep -qE "ludwig-nb.*enabled.*OK" <<<"$labext" || { echo "setup: sidebar not enabled:"; echo "$labext"; exit 1; }
serverext=$(jupyter server extension list 2>&1)
grep -qE "ludwig_nb.*enabled" <<<"$serverext" || { echo "setup: server extension not enabled:"; echo "$serverext"; exit 1; }

# Kernels. By default this environment's python3 kernel is ludwig_nb's: its warm-up (torch,
# the engine, the dashboard's modules) starts with the kernel, so a notebook's first run
# trains at once, and the example notebooks (kernel "python3") get it. A plain ipykernel
# stays selectable as "Python 3 (plain)" (python3-plain). (Each branch removes the other's
# extra spec from this venv, so that switching leaves no duplicate in the kernel menu.)
kernels=$VENV/share/jupyter/kernels
if [[ ${LUDWIG_NB_DEFAULT_KERNEL:-ludwig_nb} == plain ]]; then
  echo "setup: kernels: python3 is a plain ipykernel; \"Python 3 (ludwig_nb)\" (ludwig_nb) loads torch as it starts"
  python -m ipykernel install --sys-prefix --name python3 >/dev/null
  ludwig-nb kernel install --sys-prefix >/dev/null
  rm -rf "$kernels/python3-plain"
else
  echo "setup: kernels: python3 in $VENV is now \"Python 3 (ludwig_nb)\", which loads torch as it starts" \
    "(~330 MiB per kernel); \"Python 3 (plain)\" (python3-plain) stays a plain ipykernel" \
    "(LUDWIG_NB_DEFAULT_KERNEL=plain keeps python3 plain)"
  ludwig-nb kernel install --sys-prefix --name python3 >/dev/null
  python -m ipykernel install --sys-prefix --name python3-plain --display-name "Python 3 (plain)" >/dev/null
  rm -rf "$kernels/ludwig_nb"
fi
echo "setup: ok ($(python -c 'import torch, ludwig_nb; print("torch", torch.__version__, "ludwig_nb", ludwig_nb.__version__)'))"
