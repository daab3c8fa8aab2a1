#!/usr/bin/env bash
# The Ludwig engine's tests (marker `ludwig`) with real Ludwig 0.11, in its own venv
# (scripts/setup/ludwig_env.sh builds it once and reuses it from its cache). They run from
# the clone's root (pytest's pythonpath puts the clone first; the project is not installed
# there), in one process: Ludwig's import costs 10-15 s per process.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=$(bash scripts/setup/ludwig_env.sh | tail -n 1)
"$venv/bin/python" -c "import ludwig, sys; print('test_ludwig: ludwig', ludwig.__version__, 'python', sys.version.split()[0])"
# -p no:warnings: Ludwig 0.11 raises ~20k deprecation warnings (marshmallow) per run
# (also the image encoders of torchvision's families, marker `torchvision`: this venv's torch
# 2.14.1 and torchvision 0.29.1 load together, the main venv never has torchvision)
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider -p no:warnings -m "ludwig or torchvision" \
  tests/engines/ludwig tests/runs/test_ludwig_files.py tests/config/test_ludwig_parity.py \
  tests/engines/builtin/image/test_torchvision.py \
  tests/engines/builtin/test_ludwig_model_parity.py tests/engines/builtin/test_ludwig_training_parity.py \
  tests/engines/builtin/test_ludwig_run_parity.py \
  tests/engines/builtin/preprocessing/test_ludwig_preprocessing_parity.py "$@"
