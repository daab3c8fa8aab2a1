#!/usr/bin/env bash
# Run the widget-level tests (tests/ui) against ipywidgets 7, the version Colab ships.
#
# Creates (or reuses) a small venv with ipywidgets 7 + bqplot + ipykernel 6 and what the UI
# tests import (no torch), installs this package with --no-deps, and runs tests/ui there.
#
#   scripts/test_widgets7.sh                 # venv in $WIDGETS7_VENV (default /tmp/ludwig_nb-widgets7)
#   WIDGETS7_PIN="ipywidgets==7.8.5" scripts/test_widgets7.sh -k dashboard   # extra args go to pytest
#
# Exit status is pytest's. The first run takes about a minute (pip), later runs a few seconds.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${WIDGETS7_VENV:-/tmp/ludwig_nb-widgets7}"
pin="${WIDGETS7_PIN:-ipywidgets==7.7.1}"   # Colab's version
python="${PYTHON:-python3.11}"

if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv"
fi
# shellcheck disable=SC1091
. "$venv/bin/activate"
pip install -q --disable-pip-version-check \
    "$pin" "bqplot>=0.12,<0.14" "ipykernel>=6.29,<7" "ipython>=8" traitlets numpy \
    pytest pytest-timeout hypothesis nbformat nbclient
pip install -q --disable-pip-version-check --no-deps -e "$repo"
python -m ipykernel install --sys-prefix --name python3 >/dev/null

python - <<'EOF'
import ipywidgets, bqplot, ipykernel, importlib.util
assert ipywidgets.__version__.startswith("7."), ipywidgets.__version__
assert importlib.util.find_spec("torch") is None, "torch must not be needed by tests/ui"
print(f"ipywidgets {ipywidgets.__version__}, bqplot {bqplot.__version__}, ipykernel {ipykernel.__version__}")
EOF
cd "$repo"
exec python -m pytest -q -p no:cacheprovider tests/ui "$@"
