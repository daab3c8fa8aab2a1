#!/usr/bin/env bash
# Run every check: lint, types, import layers, the sidebar's lint and tests, the test suite
# (unit, server, notebooks, browser), the widget tests again in Colab's pinned stack, and the
# engines' tests with real Ludwig and real Ray in their own venvs. The stages are listed in
# scripts/ci/stages.py; the runner is scripts/ci/ (`bash scripts/test.sh --help`).
#
#   bash scripts/test.sh                    # every stage, then a table of them
#   bash scripts/test.sh --only ruff,mypy   # some (--list names them)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${VENV:-.venv}/bin/python
[[ -x $python ]] || python=python3
exec "$python" -m scripts.ci "$@"
