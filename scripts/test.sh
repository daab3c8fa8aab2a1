#!/usr/bin/env bash
# Run every check: lint, types, import layers, the test suite (unit, server, notebooks,
# browser), the widget tests again in Colab's pinned stack (scripts/test_colab.sh), and the
# engines' tests with real Ludwig and real Ray in their own venvs.
#
# Those three venvs build in the background (scripts/envs.sh; CI starts them in
# scripts/setup.sh, a run of this script alone starts them here) while the main stages run,
# and each stage waits for its venv just before it starts. Every stage runs, each one's
# exit code is kept, and the run ends with a table of the stages, their seconds and exit
# codes: any failed stage (or env build) fails the run. LUDWIG_NB_CI_FAIL_FAST=1 stops at
# the first failure instead.
set -uo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC1091
. "${VENV:-.venv}/bin/activate"
export UI_ARTIFACTS=${UI_ARTIFACTS:-$PWD/artifacts/screenshots}
mkdir -p "$UI_ARTIFACTS"
logs=${LUDWIG_NB_CI_LOGS:-$PWD/artifacts/ci}
rm -rf "$logs" && mkdir -p "$logs"

env_state=${LUDWIG_NB_ENV_STATE:-$PWD/artifacts/env-builds}
bash scripts/envs.sh start  # (those that setup.sh started are left to run)

names=() seconds=() codes=() cpus=()
declare -A bg_pid=() bg_t0=()
trap 'stop_bg; bash scripts/envs.sh stop' EXIT
# child_cpu: CPU seconds (user + system) of every finished process this shell waited for,
# theirs included, from bash's `times`: a stage's share shows how many cores it kept busy
# (`times` runs in this shell: a subshell starts its children's count at zero)
child_cpu() {
  times >"$logs/.times"
  cpu_s=$(tail -n 1 "$logs/.times" | awk '{ t = 0; for (i = 1; i <= 2; i++) {
    split($i, p, /[ms]/); t += p[1] * 60 + p[2] } printf "%d", t }')
}
# (.ci/run passes the seconds setup.sh took, for the table)
[[ -z ${LUDWIG_NB_CI_SETUP_S:-} ]] || { names+=(setup); seconds+=("$LUDWIG_NB_CI_SETUP_S"); codes+=(0); cpus+=("${LUDWIG_NB_CI_SETUP_CPU_S:--}"); }
t_all=$(date +%s)

# stage NAME CMD...: run CMD in the foreground, its output shown and kept in $logs/NAME.log
stage() {
  local name=$1 t0 c0 rc
  shift
  echo "== $name"
  child_cpu; t0=$(date +%s) c0=$cpu_s
  "$@" 2>&1 | tee "$logs/$name.log"
  rc=${PIPESTATUS[0]}
  names+=("$name") seconds+=($(( $(date +%s) - t0 ))) codes+=("$rc")
  child_cpu; cpus+=($(( cpu_s - c0 )))
  [[ $rc == 0 ]] || echo "== $name FAILED (exit $rc)"
  if [[ $rc != 0 && ${LUDWIG_NB_CI_FAIL_FAST:-0} == 1 ]]; then summary; exit "$rc"; fi
}

# bg_stage NAME CMD...: start CMD now, beside the stages that follow (in its own process
# group, its output kept in $logs/NAME.log); join NAME waits for it, shows its output and
# records it like a stage (its seconds run from its start to its end)
bg_stage() {
  local name=$1
  shift
  echo "== $name: started in the background (its output is shown when it ends)"
  bg_t0[$name]=$(date +%s)
  (
    setsid "$@" >"$logs/$name.log" 2>&1 </dev/null &
    echo $! >"$logs/$name.pgid"
    wait $! && rc=0 || rc=$?
    times >"$logs/$name.times"
    echo "$rc" >"$logs/$name.rc"
  ) &
  bg_pid[$name]=$!
}
join() {
  local name=$1 rc
  wait "${bg_pid[$name]}" || true
  unset "bg_pid[$name]"
  echo "== $name (ran in the background since $(( $(date +%s) - bg_t0[$name] )) s ago)"
  cat "$logs/$name.log"
  rc=$(cat "$logs/$name.rc" 2>/dev/null || echo 1)
  names+=("$name") seconds+=($(( $(stat -c %Y "$logs/$name.rc") - bg_t0[$name] ))) codes+=("$rc")
  cpus+=("$(tail -n 1 "$logs/$name.times" | awk '{ t = 0; for (i = 1; i <= 2; i++) {
    split($i, p, /[ms]/); t += p[1] * 60 + p[2] } printf "%d", t }')")
  [[ $rc == 0 ]] || echo "== $name FAILED (exit $rc)"
  if [[ $rc != 0 && ${LUDWIG_NB_CI_FAIL_FAST:-0} == 1 ]]; then summary; exit "$rc"; fi
}
stop_bg() {  # (the exit trap: a stage still in the background is ended with its group)
  local name
  for name in "${!bg_pid[@]}"; do
    [[ -f "$logs/$name.rc" ]] || kill -TERM -- "-$(cat "$logs/$name.pgid")" 2>/dev/null || true
  done
}

summary() {
  local i failed=0 passed=0 tfailed=0 n
  echo
  echo "== summary ($(( $(date +%s) - t_all )) s in test.sh; load average $(cut -d' ' -f1-3 /proc/loadavg))"
  printf '%-12s %8s %8s  %s\n' stage seconds cpu-s result
  for i in "${!names[@]}"; do
    printf '%-12s %8s %8s  %s\n' "${names[$i]}" "${seconds[$i]}" "${cpus[$i]}" \
      "$([[ ${codes[$i]} == 0 ]] && echo ok || echo "FAILED (exit ${codes[$i]})")"
    [[ ${codes[$i]} == 0 ]] || failed=$((failed + 1))
  done
  # the venvs' builds, beside the stages (their waits are the *-env stages above)
  for n in colab ludwig ray; do
    [[ -f $env_state/$n.seconds ]] || continue
    printf '%-12s %8s %8s  %s\n' "build:$n" "$(cat "$env_state/$n.seconds")" \
      "$(cat "$env_state/$n.cpu" 2>/dev/null || echo -)" \
      "in the background, exit $(cat "$env_state/$n.rc" 2>/dev/null || echo '?')"
  done
  # pytest's closing lines of every stage, added up (each stage's own line is in its log)
  for f in "$logs"/*.log; do
    n=$(grep -E '^=*\s*[0-9]+ (passed|failed)|^[0-9]+ (passed|failed)' "$f" | tail -n 1 || true)
    [[ -n "$n" ]] || continue
    passed=$((passed + $(grep -oE '[0-9]+ passed' <<<"$n" | grep -oE '[0-9]+' || echo 0)))
    tfailed=$((tfailed + $(grep -oE '[0-9]+ failed' <<<"$n" | grep -oE '[0-9]+' || echo 0)))
  done
  echo "pytest: $passed passed, $tfailed failed"
  [[ $failed == 0 ]] && echo "== all ${#names[@]} stages passed" || echo "== $failed of ${#names[@]} stages FAILED"
  return "$failed"
}

# wait_env NAME: the venv NAME's background build, if one was started (its log's tail when it
# failed); the stage's own script then finds it in the cache (or builds it, run alone)
wait_env() { bash scripts/envs.sh wait "$1"; }

stage ruff    ruff check ludwig_nb tests benchmarks
stage format  ruff format --check ludwig_nb tests benchmarks
stage mypy    mypy ludwig_nb
stage layers  lint-imports
stage sidebar bash -c 'cd labextension && jlpm test'
# Real Ludwig in its own venv (torch 2.14.1 beside the main venv's CPU torch 2.13.0). By
# default (LUDWIG_NB_CI_PARALLEL=1) it runs beside the main venv's stages below, from the
# moment its venv is built, with a Jupyter runtime dir (so a run registry) of its own.
parallel=${LUDWIG_NB_CI_PARALLEL:-1}
[[ $parallel != 1 ]] || bg_stage ludwig env JUPYTER_RUNTIME_DIR="$logs/ludwig-runtime" bash -c \
  'bash scripts/envs.sh wait ludwig && bash scripts/test_ludwig.sh --durations=25'
# Playwright's sync API keeps an event loop running in the main thread for the whole
# session, which breaks pytest-jupyter's loop fixtures: the browser tests get their own run.
# (--durations: the slowest tests of each long stage are listed in its log, for the next trim)
stage pytest  python -m pytest -q -p no:cacheprovider -m "not browser and not ludwig and not ray" \
  --durations=15
stage browser python -m pytest -q -p no:cacheprovider -m browser tests/browser --durations=10
# nbval compares the notebooks' outputs with the stored ones (notebooks/nbval.cfg masks
# what legitimately varies); runs go to a scratch results dir and runtime registry.
nbval() {
  local scratch rc=0
  scratch=$(mktemp -d)
  JUPYTER_RUNTIME_DIR="$scratch/runtime" python -m pytest -q -p no:cacheprovider \
    --nbval --nbval-current-env --nbval-sanitize-with notebooks/nbval.cfg \
    -o testpaths=notebooks -o addopts="" notebooks || rc=$?
  rm -rf "$scratch" notebooks/results
  return "$rc"
}
stage nbval nbval
# Colab's pinned stack (IPython 7.34, ipykernel 6.17.1, ipywidgets 7.7.1, ...): the pins stay
# put when ludwig_nb installs, and tests/ui + the Colab profile run there.
stage colab-env wait_env colab
stage colab   bash scripts/test_colab.sh
if [[ $parallel == 1 ]]; then
  join ludwig
else
  stage ludwig-env wait_env ludwig
  stage ludwig bash scripts/test_ludwig.sh --durations=25
fi
# Ray Train in its own venv (ray[default,train] beside CPU torch 2.13.0); each test has a
# hard timeout and the run ends with no ray:: process of its own left behind.
stage ray-env wait_env ray
stage ray     bash scripts/test_ray.sh --durations=10
summary
