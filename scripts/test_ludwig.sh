#!/usr/bin/env bash
# The tests marked `ludwig` (schema parity, the Ludwig engine), in the Ludwig 0.11 venv.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(bash scripts/setup_ludwig_env.sh | tail -1)
"$venv/bin/python" -m pytest -q -p no:cacheprovider -m ludwig "${@:-tests}"
