/**
 * TypeScript mirrors of the shapes defined in Python (the Python code is the authority):
 * events (ludwig_nb/core/events.py), run status (core/state.py + status.json, see
 * docs/CONTRACTS.md), GPU samples (core/gpu_sample.py) and the server's REST replies
 * (ludwig_nb/server/handlers.py).
 */

/** Every status a run can have; "interrupted" is a registry entry whose process is gone. */
export type RunStatus =
  | 'queued'
  | 'preprocessing'
  | 'training'
  | 'paused'
  | 'evaluating'
  | 'stopping'
  | 'completed'
  | 'stopped'
  | 'failed'
  | 'interrupted';

export const FINAL_STATUSES: ReadonlySet<RunStatus> = new Set<RunStatus>([
  'completed',
  'stopped',
  'failed',
  'interrupted'
]);

export type ControlAction = 'stop' | 'pause' | 'resume';

/** `{split: {output feature | "combined": {metric name: value}}}` */
export type Metrics = Record<string, Record<string, Record<string, number>>>;

export interface ScheduleInfo {
  total_steps: number;
  steps_per_epoch: number;
  epochs: number;
  epoch_starts: number[];
  evaluations_after: number[];
  checkpoints_after: number[];
  batch_size: number;
  evaluation_batches?: number;
  eval_batch_size?: number;
  batch_note?: string;
}

interface EventBase {
  v: number;
  /** wall-clock seconds */
  time: number;
  /** dotted paths of numbers that were non-finite (inf/nan), written as null */
  nonfinite?: string[];
}

export interface RunStarted extends EventBase {
  type: 'run_started';
  run_id: string;
  name: string;
  engine: string;
  device: string;
  schedule: ScheduleInfo;
  start_step: number;
  host: string;
  device_index: number | null;
  sample_unit?: string;
}
export interface ScheduleChanged extends EventBase {
  type: 'schedule_changed';
  schedule: ScheduleInfo;
  reason: string;
}
export interface PhaseChanged extends EventBase {
  type: 'phase_changed';
  phase: RunStatus;
  detail: string;
}
export interface StepFinished extends EventBase {
  type: 'step_finished';
  step: number;
  epoch: number;
  start_time: number;
  batch_size: number;
  loss: number | null;
  learning_rate: number | null;
  data_wait?: number | null;
  /** LLM runs: non-padding and padded tokens of the step (absent otherwise) */
  tokens?: number | null;
  padded_tokens?: number | null;
}
export interface EvaluationFinished extends EventBase {
  type: 'evaluation_finished';
  step: number;
  epoch: number;
  start_time: number;
  metrics: Metrics;
  improved: boolean;
}
export interface CheckpointSaved extends EventBase {
  type: 'checkpoint_saved';
  step: number;
  start_time: number;
  path: string;
  best: boolean;
}
export interface Paused extends EventBase {
  type: 'paused';
  step: number;
  reason: string;
}
export interface Resumed extends EventBase {
  type: 'resumed';
  step: number;
  paused_at: number;
  reason: string;
}
export interface AlarmRaised extends EventBase {
  type: 'alarm_raised';
  rule: string;
  device: number;
  value: number;
  threshold: number;
  action: 'warn' | 'pause' | 'stop' | 'throttle';
  message: string;
  /** °C of thermal margin the GPU had (temperature rules), when it reports one */
  margin?: number | null;
  /** the rule's clear level as written: "80", "slowdown-10", "margin>10" */
  clear?: string;
}
export interface AlarmCleared extends EventBase {
  type: 'alarm_cleared';
  rule: string;
  device: number;
  value: number;
}
export interface Throttled extends EventBase {
  type: 'throttled';
  duty: number; // fraction of the time the loop trains; 1.0 = released
  reason: string;
  device: number;
  metric: string; // 'temperature' (°C) | 'power' (W)
  value: number;
  target: number;
  idle_s: number; // idle seconds inserted so far
  method: 'duty' | 'power_limit';
}
/** One rank of a distributed (engine: ray) run, as in WorkersReported.workers. */
export interface WorkerInfo {
  rank: number;
  host: string;
  node_id: string;
  device: string;
  gpu: number | null;
  steps: number;
  steps_per_s: number | null;
  idle_s: number;
  age_s: number;
}
export interface WorkersReported extends EventBase {
  type: 'workers_reported';
  workers: WorkerInfo[];
}
export interface OomRecovered extends EventBase {
  type: 'oom_recovered';
  step: number;
  batch_size: number;
  micro_batch_size: number;
  accumulation: number;
  message: string;
}
export interface RunFinished extends EventBase {
  type: 'run_finished';
  status: 'completed' | 'stopped';
  step: number;
  reason: string;
  best_metrics: Metrics;
  /** what went wrong with the kept model, each with what to change */
  warnings: string[];
}
export interface RunFailed extends EventBase {
  type: 'run_failed';
  step: number;
  error_type: string;
  message: string;
  traceback: string;
}

export interface BaselineComputed extends EventBase {
  type: 'baseline_computed';
  metrics: Metrics;
  /** per output feature: what the trivial baseline predicts ("always 'no'") */
  predictors: Record<string, string>;
}

/** How far the data is before the first step (its words are in status.json's phase_detail). */
export interface DataProgress extends EventBase {
  type: 'data_progress';
  /** reading | read | preprocessing | loading | building */
  stage: string;
  source: string;
  rows: number | null;
  columns: number | null;
  feature: string;
  /** 1-based feature number, of total */
  index: number;
  total: number;
}

/** A GPU started (active) or stopped losing much of its time to throttling. */
export interface GpuSlowdown extends EventBase {
  type: 'gpu_slowdown';
  device: number;
  active: boolean;
  share: number; // fraction of the last minute throttled, 0..1
  causes: string[]; // 'thermal' | 'power_cap' | 'power_brake' | 'sync_boost'
  clock_ratio: number | null;
  text: string;
}
/** The run's deadline: a warning, or the checkpoint/stop fired before the cut-off. */
export interface DeadlineWarning extends EventBase {
  type: 'deadline_warning';
  kind: 'warn' | 'checkpoint' | 'stop';
  deadline: number; // wall-clock seconds
  verdict: 'ok' | 'at_risk' | 'late' | 'unknown' | 'passed';
  message: string;
}

/** An LLM run's model: parameters that train of all, adapter, quantization. */
export interface ModelDescribed extends EventBase {
  type: 'model_described';
  base_model: string;
  architecture: string;
  trainable: number;
  total: number;
  adapter: string;
  quantization: string;
  dtype: string;
  gradient_checkpointing: boolean;
  estimate_bytes: number | null;
}

/** An LLM run's data, tokenized: rows and token lengths per split. */
export interface TokensCounted extends EventBase {
  type: 'tokens_counted';
  splits: Record<string, Record<string, number>>;
  limit: number | null;
}

/** An LLM epoch's batches once ordered: padded and non-padding tokens of each step. */
export interface EpochPlanned extends EventBase {
  type: 'epoch_planned';
  epoch: number;
  first_step: number;
  padded_tokens: number[];
  tokens: number[];
}

/** Answers generated at an evaluation, beside the expected ones. */
export interface SamplesGenerated extends EventBase {
  type: 'samples_generated';
  step: number;
  split: string;
  samples: Array<Record<string, string>>;
}

export type RunEvent =
  | RunStarted
  | ScheduleChanged
  | PhaseChanged
  | StepFinished
  | EvaluationFinished
  | CheckpointSaved
  | Paused
  | Resumed
  | AlarmRaised
  | AlarmCleared
  | Throttled
  | OomRecovered
  | RunFinished
  | RunFailed
  | BaselineComputed
  | WorkersReported
  | DataProgress
  | GpuSlowdown
  | DeadlineWarning
  | ModelDescribed
  | TokensCounted
  | EpochPlanned
  | SamplesGenerated;

/** An active alarm as kept in RunState.alarms. */
export interface ActiveAlarm {
  rule: string;
  device: number;
  value: number;
  threshold: number;
  action: string;
  message: string;
  time: number;
  /** °C of thermal margin the GPU had when it was raised (temperature rules) */
  margin?: number | null;
}

/** status.json's "eta" (seconds; finish_time is wall-clock seconds). */
export interface EtaInfo {
  remaining_s: number | null;
  low_s: number | null;
  high_s: number | null;
  state: string;
  finish_time: number | null;
}

/**
 * status.json's "early_stop" (core/status_words.py): null when early stopping is off.
 * Steps are counts of steps done; `text` is the run's own wording: live, the bound and the
 * forecast ("at most 11,000 steps (early stopping); likely stops near step 2,600 (not before
 * 1,500), ≈ 45 s from now"); ended, why it ended.
 */
export interface EarlyStopInfo {
  patience: number | null;
  metric: string;
  /** the planned total: an upper bound, not a promise (null once the run has ended) */
  upper_bound: number | null;
  likely_step: number | null;
  earliest_step: number | null;
  likely_remaining_s: number | null;
  text: string;
}

/** GET /ludwig-nb/runs/<id>/snapshot: the run's readable state for a saved notebook output. */
export interface SnapshotReply {
  run_id: string;
  status: RunStatus;
  final: boolean;
  bundle: { 'text/plain': string; 'text/html': string };
}

/** One entry of GET /ludwig-nb/runs (registry entry joined with status.json). */
export interface RunSummary {
  run_id: string;
  name: string;
  notebook: string | null;
  kernel: string | null;
  pid: number;
  alive: boolean;
  directory: string;
  started_at: number | null;
  status: RunStatus;
  /** started by one of this server's kernels (one running now or seen running earlier) */
  this_server: boolean;
  step: number | null;
  total_steps: number | null;
  epoch: number | null;
  epochs: number | null;
  progress: number | null;
  last_loss: number | null;
  latest_metrics: Metrics;
  best_metrics: Metrics;
  /** the trivial baseline's metrics (majority class / training mean), same shape */
  baseline: Metrics;
  baseline_predictors: Record<string, string>;
  best_step: number | null;
  evaluations_since_best: number | null;
  alarms: ActiveAlarm[];
  /** each active alarm and what it does, in the dashboard's words (null: an older status.json) */
  alarm_texts: string[] | null;
  updated_at: number | null;
  finished_at: number | null;
  written_at: number | null;
  pause_reason: string | null;
  /** why it is paused, in the dashboard's words (core/status_text.py); "" when it is not */
  pause_text: string | null;
  /** what the data phase is doing ("demo:churn · 5,000 rows × 18 columns"); null: an older status.json */
  phase_detail: string | null;
  reason: string | null;
  /** why it ended, in the dashboard's words (core/early_stop.py end_reason) */
  end_reason: string | null;
  early_stop: EarlyStopInfo | null;
  error: string | null;
  eta: EtaInfo | null;
  /**
   * the ETA as the dashboard words it after "ETA" (core/eta/display.py format_estimate:
   * "≈ 2 min 45 s (2 min 30 s – 3 min) · done ≈ 14:05", "≤ …" under early stopping); "" once
   * ended; null: an older status.json
   */
  eta_text: string | null;
  /** how long an ended run took, pauses included (core/status_text.py took_text: "took 2 min
   * 5 s"); "" while live; null: an older status.json */
  took_text: string | null;
  /** the time its GPU lost to throttling so far ("throttled 7 % of the run (thermal 5 %)") */
  throttle_text: string | null;
  /** a GPU losing much of the last minute to throttling, in words; "" when none */
  gpu_slowdown: string | null;
  /** its deadline against the ETA (null: none, or an older status.json) */
  deadline: DeadlineInfo | null;
  /** the run could not write its files (a full disk): the system's message */
  write_error: string | null;
  /** what was wrong with this entry's registry file or status.json (empty when nothing) */
  problems: string[];
  /** dotted paths of numbers that were non-finite (inf/nan), sent as null */
  nonfinite: string[];
}

/** status.json's deadline block (core/deadline.py outlook). */
export interface DeadlineInfo {
  at: number; // wall-clock seconds
  label: string; // "your deadline", "Colab's 12 h session limit", ...
  action: string; // 'warn' | 'checkpoint' | 'stop'
  verdict: 'ok' | 'at_risk' | 'late' | 'unknown' | 'passed';
  text: string; // "likely finishes 20 min after your deadline (18:30)"
}

export interface RunsReply {
  runs: RunSummary[];
}

export interface RunReply {
  run: RunSummary;
  events: RunEvent[];
  /** byte offset to pass back as ?offset= */
  offset: number;
  /** the page was full (1 MiB): more events are waiting past `offset` */
  more: boolean;
}

/** core/gpu_sample.py GpuSample.to_dict(); null where the device cannot report it. */
export interface GpuSample {
  index: number;
  name: string | null;
  uuid: string | null;
  utilization_gpu: number | null;
  utilization_memory: number | null;
  memory_used: number | null;
  memory_total: number | null;
  temperature: number | null;
  temperature_slowdown: number | null;
  temperature_shutdown: number | null;
  temperature_max: number | null;
  /** °C of headroom to the nearest slowdown point (NVML's thermal margin) */
  temperature_margin?: number | null;
  temperature_memory_max?: number | null;
  power_draw: number | null;
  power_limit: number | null;
  fan: number | null;
  clock_sm: number | null;
  clock_memory: number | null;
  pstate: number | null;
  clock_reasons: string[];
  process_memory: number | null;
  lost: boolean;
  time: number;
  mig_index?: number | null;
  energy_consumed?: number | null;
  /** seconds the clocks were held down since the driver loaded, per cause */
  throttled_power_s?: number | null;
  throttled_thermal_s?: number | null;
  throttled_hw_thermal_s?: number | null;
  throttled_power_brake_s?: number | null;
  throttled_sync_boost_s?: number | null;
  sm_activity?: number | null;
  sm_occupancy?: number | null;
  tensor_activity?: number | null;
  memory_bandwidth?: number | null;
  /** set for a GPU read on a Ray worker's node: its host, Ray node id and NVML index there */
  host?: string | null;
  node_id?: string | null;
  host_index?: number | null;
}

export interface HostSample {
  time: number;
  cpu_percent: number | null;
  memory_used: number | null;
  memory_total: number | null;
  process_cpu_percent?: number | null;
  process_rss?: number | null;
}

/** GET /ludwig-nb/gpus */
export interface GpusReply {
  gpus: GpuSample[];
  host: HostSample | null;
  available: boolean;
  reason: string | null;
  time: number | null;
}
