#!/usr/bin/env bash
# The side environments (Colab's pins, real Ludwig, Ray) built in the background while the
# main suite runs, and waited for just before the stage that needs each.
#
# Their builds are pip installs (from PyPI and the machine's local wheel index: unpacking and
# byte-compiling, so they take CPU as well as disk): CI starts them at the top of
# scripts/setup.sh (or scripts/test.sh run alone starts them) so that on a fresh machine they
# build while the main venv installs and lint, pytest, the browser tests and nbval run. Each build is scripts/setup_<name>_env.sh as it is (its cache key and cache
# directory, LUDWIG_NB_ENV_CACHE, unchanged), writing its own log; a cached env costs
# seconds. The builds form lanes: the names of one lane build one after the other, the lanes
# side by side (LUDWIG_NB_ENV_LANES, default "colab,ray ludwig": the biggest build, Ludwig's
# 6.9 GB, on a lane of its own beside the two smaller ones).
#
#   scripts/envs.sh start [NAME...]   # start the builds not already running or done (default all)
#   scripts/envs.sh wait NAME         # wait for NAME's build; a failed build fails with its log's tail
#   scripts/envs.sh stop              # end the builds still running (test.sh's exit trap)
#
# State (logs, pids, exit codes, seconds) lives in LUDWIG_NB_ENV_STATE (default
# artifacts/env-builds in the clone). `wait` on a name that no `start` launched returns at
# once: the stage's own script then builds or reuses the env in the foreground, as before.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
state=${LUDWIG_NB_ENV_STATE:-$repo/artifacts/env-builds}
lanes=${LUDWIG_NB_ENV_LANES:-"colab,ray ludwig"}
all=(colab ludwig ray)

running() {  # running NAME: its build's process group is still alive
  [[ -f "$state/$1.pid" && ! -f "$state/$1.rc" ]] && kill -0 -- "-$(cat "$state/$1.pid")" 2>/dev/null
}

built() {  # built NAME: a finished build of it succeeded and its env is still there
  local venv
  [[ -f "$state/$1.rc" && "$(cat "$state/$1.rc")" == 0 ]] || return 1
  venv=$(tail -n 1 "$state/$1.log" 2>/dev/null) || return 1
  [[ -n "$venv" && -f "$venv/.complete" ]]
}

cmd_start() {
  local want=("$@") lane name chain
  [[ ${#want[@]} -gt 0 ]] || want=("${all[@]}")
  mkdir -p "$state"
  for lane in $lanes; do
    chain=()
    for name in ${lane//,/ }; do
      [[ " ${want[*]} " == *" $name "* ]] || continue
      [[ -f "$repo/scripts/setup_${name}_env.sh" ]] || continue
      running "$name" && continue
      built "$name" && continue
      # A build that failed earlier in this CI run stays failed (its stage shows why); run
      # by hand, a second start builds it again.
      if [[ -f "$state/$name.rc" && ${CI:-} == true ]]; then continue; fi
      rm -f "$state/$name.rc" "$state/$name.seconds" "$state/$name.pid"
      chain+=("$name")
    done
    [[ ${#chain[@]} -gt 0 ]] || continue
    # One process group per lane (setsid), so that `stop` ends the pip processes too. Each
    # name records the lane's pid, its exit code and its seconds; a failed build does not
    # stop the next one on its lane (its stage fails on its own, the next may still run).
    setsid bash -c '
      state=$1; repo=$2; shift 2
      for name in "$@"; do
        echo $$ > "$state/$name.pid"
      done
      cpu() {  # cpu_s: CPU seconds of the finished children (`times` in this shell, no subshell)
        times >"$state/.times-$$"
        cpu_s=$(tail -n 1 "$state/.times-$$" | awk "{ t = 0; for (i = 1; i <= 2; i++) {
          split(\$i, p, /[ms]/); t += p[1] * 60 + p[2] } printf \"%d\", t }")
      }
      for name in "$@"; do
        cpu; t0=$(date +%s) c0=$cpu_s
        rc=0
        bash "$repo/scripts/setup_${name}_env.sh" > "$state/$name.log" 2>&1 || rc=$?
        cpu; echo $(( cpu_s - c0 )) > "$state/$name.cpu"
        echo $(( $(date +%s) - t0 )) > "$state/$name.seconds"
        echo "$rc" > "$state/$name.rc"
      done
      rm -f "$state/.times-$$"' envs-lane "$state" "$repo" "${chain[@]}" </dev/null >/dev/null 2>&1 &
    echo "envs: building ${chain[*]} in the background (logs: $state/<name>.log)"
  done
  # (each lane writes its pid files at once; wait for them so `wait` never sees a gap)
  for name in "${want[@]}"; do
    for _ in $(seq 50); do
      [[ -f "$state/$name.pid" || ! -f "$repo/scripts/setup_${name}_env.sh" ]] && break
      sleep 0.1
    done
  done
}

cmd_wait() {
  local name=$1 t0 rc
  [[ -f "$state/$name.pid" ]] || return 0
  t0=$(date +%s)
  while [[ ! -f "$state/$name.rc" ]]; do
    if ! kill -0 -- "-$(cat "$state/$name.pid")" 2>/dev/null && [[ ! -f "$state/$name.rc" ]]; then
      sleep 1  # the lane may have written its rc as it ended
      [[ -f "$state/$name.rc" ]] && break
      echo "envs: the build of $name ended without an exit code; its log's tail:" >&2
      tail -n 40 "$state/$name.log" >&2 || true
      return 1
    fi
    sleep 1
  done
  rc=$(cat "$state/$name.rc")
  echo "envs: the build of $name ended in the background after" \
    "$(cat "$state/$name.seconds" 2>/dev/null || echo '?') s ($(cat "$state/$name.cpu" 2>/dev/null || echo '?') CPU s)," \
    "exit $rc; waited $(( $(date +%s) - t0 )) s for it here"
  if [[ "$rc" != 0 ]]; then
    echo "envs: the build of $name failed (exit $rc); the last 40 lines of $state/$name.log:" >&2
    tail -n 40 "$state/$name.log" >&2 || true
    return 1
  fi
}

cmd_stop() {
  local name pid
  [[ -d "$state" ]] || return 0
  for name in "${all[@]}"; do
    if running "$name"; then
      pid=$(cat "$state/$name.pid")
      echo "envs: stopping the unfinished build of $name (process group $pid)" >&2
      kill -TERM -- "-$pid" 2>/dev/null || true
    fi
  done
}

case ${1:-} in
  start) shift; cmd_start "$@" ;;
  wait) [[ $# -eq 2 ]] || { echo "usage: $0 wait NAME" >&2; exit 2; }; cmd_wait "$2" ;;
  stop) cmd_stop ;;
  *) echo "usage: $0 start [NAME...] | wait NAME | stop" >&2; exit 2 ;;
esac
