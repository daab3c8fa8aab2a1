#!/usr/bin/env bash
# Build (or reuse) a venv with exactly Colab's pinned kernel stack (scripts/setup/colab/pins.txt)
# on this machine's Python, then install ludwig_nb's own requirements into it the way
# `%pip install ludwig_nb` would in Colab: unconstrained, so that a requirement which moved
# a pin would show. The check itself (pins unchanged) is scripts/ci/test_colab.sh's business.
#
# The venv is cached outside the clone, keyed by a hash of the pins, the tools, ludwig_nb's
# requirements, the torch pin and the Python version, so repeated CI runs reuse it.
#
#   scripts/setup/colab_env.sh          # prints the venv's path on its last line
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
torch_pin="torch==2.13.0"   # CPU wheel on disk (/opt/wheels); an unpinned torch pulls CUDA
reqs=$("$PY" "$repo/scripts/setup/colab/requirements.py" "$repo/pyproject.toml")
# shellcheck source=scripts/setup/env_cache_key.sh
source "$repo/scripts/setup/env_cache_key.sh"
# (the key reads the requirement lines only: a changed comment keeps the cached venv)
venv=$( { grep -hv '^#' "$repo/scripts/setup/colab/pins.txt" "$repo/scripts/setup/colab/tools.txt"
          echo "$reqs|$torch_pin"; env_python_version "$PY"; } | env_cache_dir colab)
if [[ ! -f "$venv/.complete" ]]; then
  echo "colab_env: building $venv" >&2
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$PY" -m venv "$venv"
  pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
  "${pip[@]}" --upgrade pip >&2
  "${pip[@]}" "$torch_pin" >&2
  "${pip[@]}" -r "$repo/scripts/setup/colab/pins.txt" >&2
  "${pip[@]}" -r "$repo/scripts/setup/colab/tools.txt" -c "$repo/scripts/setup/colab/pins.txt" >&2
  # ludwig_nb's requirements, read from pyproject.toml, unconstrained (what Colab's %pip
  # does): first the resolver's plan (kept for scripts/ci/test_colab.sh), then the install
  mapfile -t req_array <<<"$reqs"
  "${pip[@]}" --dry-run --report "$venv/ludwig_nb-install-report.json" "${req_array[@]}" >&2
  "${pip[@]}" "${req_array[@]}" >&2
  "$venv/bin/python" -m ipykernel install --sys-prefix --name python3 >/dev/null
  touch "$venv/.complete"
fi
echo "$venv"
