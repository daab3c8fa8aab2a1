#!/usr/bin/env bash
# Run every check: lint, types, import layers, the test suite (unit, server, notebooks,
# browser), and the widget tests again in Colab's pinned stack (scripts/test_colab.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC1091
. "${VENV:-.venv}/bin/activate"
export UI_ARTIFACTS=${UI_ARTIFACTS:-$PWD/artifacts/screenshots}
mkdir -p "$UI_ARTIFACTS"

echo "== ruff";   ruff check ludwig_nb tests benchmarks
echo "== format"; ruff format --check ludwig_nb tests benchmarks
echo "== mypy";   mypy ludwig_nb
echo "== layers"; lint-imports
echo "== sidebar unit tests"; (cd labextension && jlpm test)
# Playwright's sync API keeps an event loop running in the main thread for the whole
# session, which breaks pytest-jupyter's loop fixtures: the browser tests get their own run.
echo "== pytest";  python -m pytest -q -p no:cacheprovider -m "not browser and not ludwig and not ray"
echo "== browser"; python -m pytest -q -p no:cacheprovider -m browser tests/browser
# nbval compares the notebooks' outputs with the stored ones (notebooks/nbval.cfg masks
# what legitimately varies); runs go to a scratch results dir and runtime registry.
echo "== nbval"
scratch=$(mktemp -d)
JUPYTER_RUNTIME_DIR="$scratch/runtime" python -m pytest -q -p no:cacheprovider \
  --nbval --nbval-current-env --nbval-sanitize-with notebooks/nbval.cfg \
  -o testpaths=notebooks -o addopts="" notebooks
rm -rf "$scratch" notebooks/results
# Colab's pinned stack (IPython 7.34, ipykernel 6.17.1, ipywidgets 7.7.1, ...): the pins stay
# put when ludwig_nb installs, and tests/ui + the Colab profile run there. This replaces
# the ipywidgets-7 run (scripts/test_widgets7.sh, still there for other ipywidgets pins).
if [ -f scripts/test_colab.sh ]; then
  echo "== Colab pins"; bash scripts/test_colab.sh
elif [ -f scripts/test_widgets7.sh ]; then
  echo "== ipywidgets 7"; bash scripts/test_widgets7.sh
fi
# Real Ludwig in its own venv (torch 2.14.1 beside the main venv's CPU torch 2.13.0).
echo "== ludwig engine"; bash scripts/test_ludwig.sh
# Ray Train in its own venv (ray[default,train] beside CPU torch 2.13.0); each test has a
# hard timeout and the run ends with no ray:: process of its own left behind.
echo "== ray engine"; bash scripts/test_ray.sh
