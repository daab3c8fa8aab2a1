#!/usr/bin/env bash
# Set up ludwig_nb on a fresh Debian machine: system packages, a venv with CPU torch,
# the package with its test/dev extras (this builds the JupyterLab sidebar from source),
# and the Jupyter kernel spec. Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
# Under CI (or LUDWIG_NB_PREBUILD_ENVS=1) the side venvs (Colab's pins, Ludwig, Ray; cached
# by their requirements) start building in the background now, while this script and the
# main stages of scripts/test.sh run; test.sh waits for each (scripts/envs.sh).
if [[ ${CI:-} == true || ${LUDWIG_NB_PREBUILD_ENVS:-0} == 1 ]]; then
  bash scripts/envs.sh start
fi
VENV=${VENV:-.venv}
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3

# Debian's Chromium drives the browser tests (Playwright never downloads a browser here);
# gcc builds the fake libnvidia-ml.so.1 the GPU tests load through the real bindings.
need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v gcc >/dev/null || need_apt+=(gcc)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

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
# The environment's python3 kernel is ludwig_nb's: its warm-up (torch, the engine, the
# dashboard's modules) starts with the kernel, so a notebook's first run trains at once.
ludwig-nb kernel install --sys-prefix --name python3 >/dev/null  # "Python 3 (ludwig_nb)"
echo "setup: ok ($(python -c 'import torch, ludwig_nb; print("torch", torch.__version__, "ludwig_nb", ludwig_nb.__version__)'))"
