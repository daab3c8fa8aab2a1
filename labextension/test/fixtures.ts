/** Server replies as the Python side writes them (see tests/server for the real ones). */
import { GpuSample, GpusReply, RunSummary } from '../src/types';

export function gpu(overrides: Partial<GpuSample> = {}): GpuSample {
  return {
    index: 0,
    name: 'NVIDIA H100 80GB HBM3',
    uuid: 'GPU-0000',
    utilization_gpu: 87,
    utilization_memory: 40,
    memory_used: 40 * 1024 ** 3,
    memory_total: 80 * 1024 ** 3,
    temperature: 60,
    temperature_slowdown: 87,
    temperature_shutdown: 92,
    temperature_max: 85,
    power_draw: 350.4,
    power_limit: 700,
    fan: null,
    clock_sm: 1980,
    clock_memory: 2619,
    pstate: 0,
    clock_reasons: [],
    process_memory: null,
    lost: false,
    time: 1000,
    ...overrides
  };
}

export function gpusReply(overrides: Partial<GpusReply> = {}): GpusReply {
  return { gpus: [gpu()], host: null, available: true, reason: null, time: 1000, ...overrides };
}

export function run(overrides: Partial<RunSummary> = {}): RunSummary {
  return {
    run_id: 'demo-20261130-080000-abc123',
    name: 'demo',
    notebook: 'train.ipynb',
    kernel: 'k-1',
    pid: 42,
    alive: true,
    directory: '/tmp/results/demo',
    started_at: 900,
    status: 'training',
    this_server: true,
    step: 25,
    total_steps: 100,
    epoch: 0,
    epochs: 4,
    progress: 0.25,
    last_loss: 0.5,
    latest_metrics: {},
    best_metrics: {},
    baseline: {},
    baseline_predictors: {},
    best_step: null,
    evaluations_since_best: null,
    alarms: [],
    alarm_texts: null,
    updated_at: 1000,
    finished_at: null,
    written_at: 1000,
    pause_reason: '',
    pause_text: '',
    phase_detail: '',
    reason: '',
    end_reason: '',
    early_stop: null,
    error: '',
    eta: { remaining_s: 300, low_s: 240, high_s: 360, state: 'stable', finish_time: null },
    eta_text: '≈ 5 min (4 min – 6 min) · done ≈ 14:05',
    took_text: '',
    throttle_text: null,
    gpu_slowdown: null,
    deadline: null,
    problems: [],
    nonfinite: [],
    write_error: null,
    ...overrides
  };
}
