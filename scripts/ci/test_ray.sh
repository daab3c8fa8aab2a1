#!/usr/bin/env bash
# The Ray engine's tests (marker `ray`) with real Ray Train, in their own venv
# (scripts/setup/ray_env.sh builds it once and reuses it from its cache). They run from the
# clone's root (pytest's pythonpath puts the clone first; the project is not installed
# there), in one process with one Ray session (started and shut down by the tests, with a
# fixed num_cpus: never `ray stop`, which would kill every Ray on the machine). Each test
# has a hard timeout; the whole step has one too.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=$(bash scripts/setup/ray_env.sh | tail -n 1)
"$venv/bin/python" -c "import ray, torch, sys; print('test_ray: ray', ray.__version__, 'torch', torch.__version__, 'python', sys.version.split()[0])"
export RAY_agent_register_timeout_ms=${RAY_agent_register_timeout_ms:-120000}
export RAY_USAGE_STATS_ENABLED=0
# Warnings are errors (pyproject), except ResourceWarning here: Ray's node start-up leaves
# sockets of its own unclosed (reported at garbage collection); ours fail the main suite.
exec timeout "${RAY_TESTS_TIMEOUT_S:-1500}" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  -W default::ResourceWarning -o timeout=420 -m ray tests/engines/ray "$@"
