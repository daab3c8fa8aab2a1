#!/usr/bin/env bash
# The Colab CI job (issue 20): ludwig_nb in a venv with exactly Colab's pinned kernel stack
# (scripts/setup/colab/pins.txt: IPython 7.34.0, ipykernel 6.17.1, ipywidgets 7.7.1,
# jupyter-server 2.14.0, tornado 6.5.1) on this machine's Python, with CPU torch 2.13.0.
#
# 1. pip's resolver: installing ludwig_nb's requirements there plans to move no pin (and
#    the real, unconstrained install that built the venv moved none: versions are checked);
# 2. the widget tests (tests/ui) under ipywidgets 7.7.1 + bqplot 0.12;
# 3. every magic (tests/ipython) through a real IPython 7.34 shell, and the Colab profile in
#    a real ipykernel 6.17.1 kernel with a fake google.colab (tests/fixtures/colab) on the
#    path: core widgets only, frames from the main-thread pump while the cell runs,
#    Interrupt -> stopped with the summary, and notebooks/05_colab.ipynb under nbclient.
#
# The venv is cached outside the clone (scripts/setup/colab_env.sh, keyed by the
# requirements); the first run builds it (2 min 48 s here), later runs take about 2 min.
#
#   scripts/ci/test_colab.sh                   # extra args go to pytest
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv=$(bash "$repo/scripts/setup/colab_env.sh" | tail -n 1)
py="$venv/bin/python"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

echo "-- Colab pins: pip's plan for ludwig_nb's requirements, and what is installed"
mapfile -t reqs < <("$py" "$repo/scripts/setup/colab/requirements.py" "$repo/pyproject.toml")
"$py" -m pip install -q --disable-pip-version-check --dry-run \
  --report "$scratch/ludwig_nb-now.json" "${reqs[@]}" 2> >(grep -v "^WARNING: Location" >&2)
"$py" "$repo/scripts/setup/colab/check_pins.py" "$repo/scripts/setup/colab/pins.txt" \
  "$venv/ludwig_nb-install-report.json" "$scratch/ludwig_nb-now.json"

echo "-- Colab pins: tests/ui, the Colab profile in a real shell and kernel, 05_colab.ipynb"
cd "$repo"
# (VIRTUAL_ENV unset: CI runs this with the main venv active, which IPython 7 warns about)
env -u VIRTUAL_ENV PYTHONPATH="$repo" LUDWIG_NB_COLAB_PINS="$repo/scripts/setup/colab/pins.txt" \
  JUPYTER_RUNTIME_DIR="$scratch/runtime" \
  "$py" -m pytest -q -p no:cacheprovider tests/ui tests/ipython "$@"
"$py" "$repo/scripts/setup/colab/check_pins.py" "$repo/scripts/setup/colab/pins.txt" >/dev/null
echo "-- Colab pins: nothing moved"
