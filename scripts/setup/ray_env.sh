#!/usr/bin/env bash
# Build (or reuse) the environment that runs the Ray engine's tests (engine: builtin on
# `backend: {type: ray}`) with real Ray Train beside ludwig_nb.
#
# Ray gets its own venv so the main .venv stays as the other suites expect it. CPU torch
# 2.13.0 goes in FIRST (the wheel lies on disk; an unpinned torch would pull a multi-GB CUDA
# build), then ray[default,train] (pinned: the driver and every cluster node must run the same Ray;
# [default] brings the State API without which a force-stop leaks the placement group; 2.60
# is the first release whose raylet honours RAY_agent_register_timeout_ms, without which
# ray.init fails on a loaded 2-core box after 15 s), then ludwig_nb's runtime requirements,
# the [hyperopt] extra (optuna: the searches' spaces, and Ray Tune's OptunaSearch for
# `search_alg: optuna` on `executor: {type: ray}`; [train] already brings Tune's own
# requirements) and the test tools. The venv is cached outside the clone, keyed by a hash of
# its requirements, so repeated CI runs reuse it (a fresh build: ~1-2 min).
#
#   scripts/setup/ray_env.sh          # prints the venv's path on its last line
set -euo pipefail
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
torch_req="torch==2.13.0"
ray_req="ray[default,train]==2.60.0"
# ludwig_nb's own runtime requirements (pyproject.toml [project.dependencies]), optuna (the
# [hyperopt] extra) and the test tools.
deps="pyyaml>=6.0 pandas>=1.5 numpy>=1.23 ipython>=8.0 ipywidgets>=7.6,<9
bqplot>=0.12 traitlets>=5.9 psutil>=5.9 nvidia-ml-py>=12.535.108 jupyter_server>=2.0
jupyter_core>=5.0 tqdm>=4.60 optuna>=3 pytest>=8 pytest-timeout>=2.2 hypothesis>=6.90 ipykernel>=6.29"
# shellcheck source=scripts/setup/env_cache_key.sh
source "$(dirname "${BASH_SOURCE[0]}")/env_cache_key.sh"
venv=$(printf '%s|%s|%s|%s' "$torch_req" "$ray_req" "$deps" "$(env_python_version "$PY")" \
  | env_cache_dir ray)
if [[ ! -f "$venv/.complete" ]]; then
  echo "setup_ray_env: building $venv ($torch_req, $ray_req)" >&2
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$PY" -m venv "$venv"
  pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
  "${pip[@]}" --upgrade pip >&2
  "${pip[@]}" "$torch_req" >&2
  "${pip[@]}" "$ray_req" >&2
  # shellcheck disable=SC2086
  "${pip[@]}" $deps >&2
  "$venv/bin/python" -c "import ray, torch; print('ray', ray.__version__, 'torch', torch.__version__)" >&2
  touch "$venv/.complete"
fi
echo "$venv"
