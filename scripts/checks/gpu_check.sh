#!/usr/bin/env bash
# GPU telemetry checks on a machine with an NVIDIA GPU (well under 10 minutes).
#   scripts/checks/gpu_check.sh            # uses $PYTHON or the repo's .venv or python3
# Runs: what the card supports (scripts/checks/gpu_support.py: the thermal margin, thresholds,
# T.Limit fields, each throttle counter and GPM, with the raw field values at the ids the
# counters have had across drivers, and checks that they hold together), the gpu-marked
# tests (real readings, thresholds, an alarm on the real slowdown threshold, the margin
# against the thresholds, counters in seconds, a mixed-precision CUDA training run seen by
# the sampler), the fake-driver suite, the two benchmarks against the real driver, and the
# engine's GPU speed (ms per
# step against a hand-written CUDA loop, resident and pinned data, fp32 / AMP / compile,
# share of step time waiting for data), and the LLM case (tokens/s of a ~220M model in bf16
# and 4-bit, peak memory against the pre-flight). Prints a summary; exits non-zero when a check
# failed. Without a GPU every GPU part skips cleanly.
set -u
cd "$(dirname "$0")/../.."
if [ -n "${PYTHON:-}" ]; then PY=$PYTHON
elif [ -x .venv/bin/python ]; then PY=.venv/bin/python
else PY=python3; fi

declare -a NAMES RESULTS
run() {  # run NAME TIMEOUT_S CMD...
  local name=$1 limit=$2; shift 2
  echo "=== $name"
  timeout "$limit" "$@"
  local rc=$?
  NAMES+=("$name"); RESULTS+=("$rc")
  return 0
}

if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=index,name,driver_version,temperature.gpu,memory.used,memory.total,power.draw,power.limit \
    --format=csv || true
else
  echo "nvidia-smi not found: the gpu tests will be skipped"
fi

run "what the card supports" 60 env PYTHONPATH="$PWD" "$PY" scripts/checks/gpu_support.py --seconds 5
run "gpu tests (real driver)" 300 "$PY" -m pytest -q -p no:cacheprovider -m gpu -rs tests/gpu/test_real_gpu.py
run "telemetry suite (fake driver)" 240 "$PY" -m pytest -q -p no:cacheprovider \
  tests/gpu tests/core/test_alarms.py tests/core/test_series.py tests/runs/test_alarm_watch.py \
  tests/core/test_throttle_time.py tests/core/test_thermal.py tests/core/test_deadline.py
if command -v nvidia-smi >/dev/null; then
  run "benchmark: sample cost (real)" 120 "$PY" benchmarks/gpu_sampling.py --real
  run "benchmark: training overhead (real)" 120 "$PY" benchmarks/sampler_overhead.py --real --rounds 6
  run "benchmark: engine speed on the GPU" 300 env PYTHONPATH="$PWD" "$PY" -m benchmarks.engine_gpu
  # LLM fine-tuning (needs the [llm] extra): tokens/s of a ~220M model in bf16 and 4-bit,
  # peak GPU memory against the pre-flight estimate
  run "benchmark: LLM tokens/s and memory" 300 env PYTHONPATH="$PWD" "$PY" -m benchmarks.llm_gpu
  # the memory pre-flight's total against the measured peak, five configs (goal: within 10 %)
  run "benchmark: LLM memory pre-flight (GPU)" 420 env PYTHONPATH="$PWD" "$PY" \
    -m benchmarks.llm_memory_gpu
  run "LLM engine tests on the GPU" 300 env LUDWIG_NB_LLM_DEVICE=cuda "$PY" -m pytest -q \
    -p no:cacheprovider tests/engines/builtin/llm/test_training.py -k "learns or four_bit or lora"
else
  run "benchmark: engine speed on the GPU (skips)" 60 env PYTHONPATH="$PWD" "$PY" -m benchmarks.engine_gpu
  run "benchmark: LLM memory pre-flight (skips)" 60 env PYTHONPATH="$PWD" "$PY" \
    -m benchmarks.llm_memory_gpu
  echo "(no nvidia-smi: benchmarks against the real driver skipped)"
fi

echo
echo "=== summary"
status=0
for i in "${!NAMES[@]}"; do
  if [ "${RESULTS[$i]}" = 0 ]; then verdict=ok; else verdict="FAILED (exit ${RESULTS[$i]})"; status=1; fi
  printf '%-40s %s\n' "${NAMES[$i]}" "$verdict"
done
exit $status
