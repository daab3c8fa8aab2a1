#!/usr/bin/env bash
# Sourced by scripts/setup/{ludwig,ray,colab}_env.sh: where a cached venv lives.
#
# A venv is cached outside the clone, under $LUDWIG_NB_ENV_CACHE (default
# ~/.cache/ludwig_nb/envs), in a folder named after the env and the first 12 hex digits of
# the sha256 of everything that went into it, so repeated CI runs reuse it and a changed
# requirement builds a new one. Each caller feeds its own key material on stdin (the bytes
# are unchanged from when each script computed its key inline, so existing caches stay valid).
#
#   source "$repo/scripts/setup/env_cache_key.sh"
#   venv=$(printf '%s|%s' "$reqs" "$(env_python_version "$PY")" | env_cache_dir ludwig)

# env_python_version PY: prints PY's (major, minor), e.g. "(3, 11)".
env_python_version() {
  "$1" -c 'import sys; print(sys.version_info[:2])'
}

# env_cache_dir NAME: reads the key material on stdin, prints the venv's path.
env_cache_dir() {
  local cache=${LUDWIG_NB_ENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ludwig_nb/envs}
  printf '%s/%s-%s\n' "$cache" "$1" "$(sha256sum | cut -c1-12)"
}
