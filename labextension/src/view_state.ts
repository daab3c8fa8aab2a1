/**
 * Derived view state: what each GPU card and run row shows, computed from the server's
 * replies. Pure functions of (data, now, options); the panel only copies these fields
 * into the DOM as text.
 */

import { describeMargin, formatNumber, fraction, gib, grouped } from './format';
import {
  ControlAction,
  FINAL_STATUSES,
  GpuSample,
  GpusReply,
  HostSample,
  Metrics,
  RunSummary
} from './types';

/** Alarm colours, mildest first. */
export type Level = 'ok' | 'warn' | 'alarm';

const LEVEL_ORDER: Level[] = ['ok', 'warn', 'alarm'];

export interface Meter {
  label: string;
  text: string;
  /** bar fill in [0, 1]; null hides the bar */
  fraction: number | null;
  level: Level;
  /** what the meter's number means, or the limits it is read against ("" when none) */
  tooltip?: string;
}

/** The utilisation meter's tooltip (ui/gauges.py ACTIVITY_TOOLTIP, word for word). */
export const ACTIVITY_TOOLTIP =
  'Utilisation is the share of time any kernel ran, however little of the GPU it used; ' +
  'SM is the share of multiprocessors busy, tensor the share of time tensor cores worked, ' +
  'DRAM the share of peak memory bandwidth used (GPM, Hopper and newer).';

export interface Card {
  key: string;
  title: string;
  subtitle: string;
  meters: Meter[];
  /** active clock-throttle reasons, human-readable */
  throttle: string[];
  level: Level;
}

export interface RunRow {
  id: string;
  name: string;
  /** the notebook's file name (or the kernel id, or "script"), and a live run's process */
  where: string;
  /** the notebook's full path, for the tooltip */
  whereTitle: string;
  status: string;
  progress: number | null;
  progressText: string;
  etaText: string;
  /** the early-stop bound and forecast, or why the run stopped early ("" without) */
  earlyStopText: string;
  /** the likely stop as a fraction of the planned total, marked on the bar (null: none) */
  likelyStop: number | null;
  bestMetricText: string;
  alarmText: string;
  /** the time its GPU lost to throttling ("throttled 7 % of the run (thermal 5 %)"), or "" */
  throttleText: string;
  /** its deadline against the ETA ("likely finishes 20 min after your deadline"), or "" */
  deadlineText: string;
  /** what the server found wrong with this run's files, and numbers that were inf/nan */
  noteText: string;
  level: Level;
  actions: Record<ControlAction, boolean>;
}

/** A heading of the run list: the group, how many runs it lists, whether it is folded. */
export interface RunGroup {
  key: RunGroupKey;
  title: string;
  /** "other processes: live (3)" */
  heading: string;
  collapsed: boolean;
  rows: RunRow[];
  /** "12 older finished runs not listed (ludwig-nb runs lists them)", or "" */
  hiddenText: string;
}

export interface ViewState {
  gpuCards: Card[];
  /** the host card, shown when there is no GPU */
  hostCard: Card | null;
  gpuMessage: string;
  /** every row the list holds, folded groups' rows included, in display order */
  runs: RunRow[];
  runGroups: RunGroup[];
  error: string;
}

/** A section as the panel shows it (``collapsed``: the keys of the folded groups). */
export function runGroup(
  section: RunSection,
  rows: RunRow[],
  collapsed: ReadonlySet<RunGroupKey>
): RunGroup {
  const hidden = section.hidden;
  const plural = hidden === 1 ? 'run' : 'runs';
  return {
    key: section.key,
    title: section.title,
    heading: `${section.title} (${rows.length})`,
    collapsed: collapsed.has(section.key),
    rows,
    hiddenText: hidden > 0 ? `${grouped(hidden)} older finished ${plural} not listed` : ''
  };
}

export interface ViewOptions {
  /** °C below the slowdown threshold where a card turns to "warn" */
  temperatureWarnMargin: number;
}

export const DEFAULT_VIEW_OPTIONS: ViewOptions = { temperatureWarnMargin: 5 };

/** Clock reasons that are not a slowdown worth showing. */
const BENIGN_REASONS = new Set([
  'gpu_idle',
  'applications_clocks_setting',
  'display_clock_setting',
  'sync_boost'
]);
const THERMAL_REASONS = new Set(['sw_thermal_slowdown', 'hw_thermal_slowdown', 'hw_slowdown']);

export function worst(levels: Level[]): Level {
  return levels.reduce<Level>(
    (a, b) => (LEVEL_ORDER.indexOf(b) > LEVEL_ORDER.indexOf(a) ? b : a),
    'ok'
  );
}

export function temperatureLevel(
  temperature: number | null,
  slowdown: number | null,
  margin: number,
  thermalMargin: number | null = null
): Level {
  if (temperature === null) {
    return 'ok';
  }
  if (thermalMargin !== null) {
    // the GPU's own headroom (NVML's thermal margin) wins over the slowdown threshold
    return thermalMargin <= 0 ? 'alarm' : thermalMargin <= margin ? 'warn' : 'ok';
  }
  if (slowdown === null) {
    return 'ok';
  }
  if (temperature >= slowdown) {
    return 'alarm';
  }
  return temperature >= slowdown - margin ? 'warn' : 'ok';
}

/** "slowdown 87 °C · shutdown 97 °C · max operating 89 °C": the limits a GPU reports. */
export function thresholdsText(gpu: GpuSample): string {
  const points: [string, number | null | undefined][] = [
    ['slowdown', gpu.temperature_slowdown],
    ['shutdown', gpu.temperature_shutdown],
    ['max operating', gpu.temperature_max],
    ['memory max', gpu.temperature_memory_max]
  ];
  return points
    .filter((p): p is [string, number] => typeof p[1] === 'number')
    .map(([name, value]) => `${name} ${Math.round(value)} °C`)
    .join(' · ');
}

/** "SM 62 % · tensor 41 % · DRAM 35 %" (GPM), "" on a GPU without it. */
export function activityText(gpu: GpuSample): string {
  const parts: [string, number | null | undefined][] = [
    ['SM', gpu.sm_activity],
    ['tensor', gpu.tensor_activity],
    ['DRAM', gpu.memory_bandwidth]
  ];
  return parts
    .filter((p): p is [string, number] => typeof p[1] === 'number')
    .map(([name, value]) => `${name} ${Math.round(value)} %`)
    .join(' · ');
}

function percentMeter(label: string, value: number | null): Meter {
  return {
    label,
    text: value === null ? 'N/A' : `${Math.round(value)} %`,
    fraction: fraction(value === null ? null : value / 100),
    level: 'ok'
  };
}

function memoryMeter(used: number | null, total: number | null): Meter {
  if (used === null || !total) {
    return { label: 'Memory', text: 'N/A', fraction: null, level: 'ok' };
  }
  const share = used / total;
  return {
    label: 'Memory',
    text: `${gib(used)} / ${gib(total)} GiB`,
    fraction: fraction(share),
    level: share >= 0.95 ? 'warn' : 'ok'
  };
}

function temperatureMeter(gpu: GpuSample, margin: number): Meter {
  const t = gpu.temperature;
  const slowdown = gpu.temperature_slowdown;
  const thermal = gpu.temperature_margin ?? null;
  if (t === null) {
    return { label: 'Temperature', text: 'N/A', fraction: null, level: 'ok' };
  }
  // the margin when the GPU has one ("81 °C · 6 °C to slowdown"), else the threshold
  const limit =
    thermal !== null
      ? ` · ${describeMargin(thermal)}`
      : slowdown === null
        ? ''
        : ` / slowdown ${Math.round(slowdown)} °C`;
  return {
    label: 'Temperature',
    text: `${Math.round(t)} °C${limit}`,
    fraction: slowdown ? fraction(t / slowdown) : null,
    level: temperatureLevel(t, slowdown, margin, thermal),
    tooltip: thresholdsText(gpu)
  };
}

function utilisationMeter(gpu: GpuSample): Meter {
  const meter = percentMeter('Utilisation', gpu.utilization_gpu);
  const activity = activityText(gpu);
  if (activity && gpu.utilization_gpu !== null) {
    meter.text += ` · ${activity}`;
  }
  meter.tooltip = ACTIVITY_TOOLTIP;
  return meter;
}

function powerMeter(draw: number | null, limit: number | null): Meter {
  if (draw === null) {
    return { label: 'Power', text: 'N/A', fraction: null, level: 'ok' };
  }
  return {
    label: 'Power',
    text: limit ? `${Math.round(draw)} / ${Math.round(limit)} W` : `${Math.round(draw)} W`,
    fraction: limit ? fraction(draw / limit) : null,
    level: 'ok'
  };
}

/** Active slowdown reasons ("sw_thermal_slowdown" -> "sw thermal slowdown"), benign ones dropped. */
export function throttleReasons(reasons: string[]): string[] {
  return reasons.filter(r => !BENIGN_REASONS.has(r)).map(r => r.replace(/_/g, ' '));
}

function throttleLevel(reasons: string[]): Level {
  const active = reasons.filter(r => !BENIGN_REASONS.has(r));
  if (active.some(r => THERMAL_REASONS.has(r))) {
    return 'alarm';
  }
  return active.length > 0 ? 'warn' : 'ok';
}

export function gpuCard(gpu: GpuSample, options: ViewOptions = DEFAULT_VIEW_OPTIONS): Card {
  const label =
    gpu.mig_index === null || gpu.mig_index === undefined
      ? `GPU ${gpu.index}`
      : `GPU ${gpu.index} MIG ${gpu.mig_index}`;
  const key = gpu.uuid ?? label;
  if (gpu.lost) {
    return {
      key,
      title: label,
      subtitle: 'lost: the device stopped answering',
      meters: [],
      throttle: [],
      level: 'alarm'
    };
  }
  const meters = [
    utilisationMeter(gpu),
    memoryMeter(gpu.memory_used, gpu.memory_total),
    temperatureMeter(gpu, options.temperatureWarnMargin),
    powerMeter(gpu.power_draw, gpu.power_limit)
  ];
  const reasons = gpu.clock_reasons ?? [];
  return {
    key,
    title: label,
    subtitle: gpu.name ?? '',
    meters,
    throttle: throttleReasons(reasons),
    level: worst([...meters.map(m => m.level), throttleLevel(reasons)])
  };
}

export function hostCard(host: HostSample): Card {
  const cpu = percentMeter('CPU', host.cpu_percent);
  const ram = memoryMeter(host.memory_used, host.memory_total);
  ram.label = 'RAM';
  return {
    key: 'host',
    title: 'Host',
    subtitle: 'no GPU: CPU and RAM',
    meters: [cpu, ram],
    throttle: [],
    level: 'ok'
  };
}

/** The metric a person cares about: validation > test > training, "combined" first, loss first. */
export function bestMetric(metrics: Metrics): { text: string } | null {
  const pick = <T>(obj: Record<string, T>, preferred: string[]): [string, T] | null => {
    for (const name of preferred) {
      if (name in obj) {
        return [name, obj[name]];
      }
    }
    const first = Object.keys(obj)[0];
    return first === undefined ? null : [first, obj[first]];
  };
  const split = pick(metrics ?? {}, ['validation', 'test', 'training']);
  const feature = split && pick(split[1] ?? {}, ['combined']);
  const metric = feature && pick(feature[1] ?? {}, ['loss']);
  if (!split || !feature || !metric) {
    return null;
  }
  const [splitName] = split;
  const [featureName] = feature;
  const [metricName, value] = metric;
  return { text: `best ${splitName} ${featureName} ${metricName} ${formatNumber(value)}` };
}

const HEADLINE_METRICS = [
  'accuracy',
  'mean_absolute_error',
  'root_mean_squared_error',
  'r2',
  'roc_auc'
];

/**
 * The best metric beside the trivial baseline on the same split, as core/baseline.py words it:
 * "test churn accuracy 0.945 · always 'no': 0.865" (null when the run has no baseline yet).
 */
export function baselineText(
  run: Pick<RunSummary, 'best_metrics' | 'baseline' | 'baseline_predictors'>
): string | null {
  const metrics = run.best_metrics ?? {};
  const split = ['test', 'validation', 'training'].find(s => metrics[s] !== undefined);
  if (!split) {
    return null;
  }
  const parts: string[] = [];
  for (const [feature, predictor] of Object.entries(run.baseline_predictors ?? {})) {
    const model = metrics[split]?.[feature] ?? {};
    const base = run.baseline?.[split]?.[feature] ?? {};
    const name = HEADLINE_METRICS.find(
      m => typeof model[m] === 'number' && typeof base[m] === 'number'
    );
    if (name) {
      parts.push(
        `${split} ${feature} ${name} ${formatNumber(model[name])} · ${predictor}: ${formatNumber(base[name])}`
      );
    }
  }
  return parts.length > 0 ? parts.join('; ') : null;
}

/**
 * Why a run is paused, in the words the run itself wrote into status.json (pause_text,
 * from core/status_text.py, the dashboard's and the CLI's wording). A status file from
 * before that field says only "paused".
 */
export function pauseText(run: Pick<RunSummary, 'pause_text'>): string {
  return run.pause_text || 'paused';
}

/**
 * The early-stop line, as the run words it (core/status_words.py): live, the bound and the
 * likely stop ("at most 11,000 steps (early stopping); likely stops near step 2,600 (not
 * before 1,500), ≈ 45 s from now"); ended, why it ended ("stopped
 * early: no validation improvement in 5 evaluations; best at step 2,600"); "" without.
 */
export function earlyStopText(
  run: Pick<RunSummary, 'status' | 'alive' | 'early_stop' | 'end_reason'>
): string {
  const ended = FINAL_STATUSES.has(run.status) || !run.alive;
  if (ended) {
    return run.status === 'interrupted' ? '' : (run.end_reason ?? '');
  }
  return run.early_stop?.text ?? '';
}

/** Where the run will likely stop, as a fraction of the planned total (null: no forecast). */
export function likelyStopFraction(
  run: Pick<RunSummary, 'status' | 'alive' | 'early_stop'>
): number | null {
  const info = run.early_stop;
  if (!info || FINAL_STATUSES.has(run.status) || !run.alive) {
    return null;
  }
  if (info.likely_step === null || !info.upper_bound || info.likely_step >= info.upper_bound) {
    return null;
  }
  return fraction(info.likely_step / info.upper_bound);
}

/**
 * The ETA line: "ETA " and the run's own words (status.json's eta_text, as the dashboard
 * shows them: "ETA ≈ 2 min 45 s (2 min 30 s – 3 min) · done ≈ 14:05"); paused, why; before
 * the first step, how far the data is; ended, how and how long it took (status.json's
 * took_text).
 */
export function etaText(run: RunSummary): string {
  const status = run.status;
  if (status === 'paused') {
    return pauseText(run);
  }
  if (status === 'preprocessing' && run.phase_detail) {
    // before the first step there is no ETA yet: say how far the data is
    return run.phase_detail;
  }
  if (FINAL_STATUSES.has(status)) {
    return run.took_text ? `${status} · ${run.took_text}` : status;
  }
  return run.eta_text ? `ETA ${run.eta_text}` : 'ETA: estimating…';
}

/** "2,100 / 52,500 steps (4 %)", grouped as the run's own texts are. */
function progressText(run: RunSummary): string {
  const step = run.step ?? 0;
  if (!run.total_steps) {
    return `step ${grouped(step)}`;
  }
  const pct = Math.floor((100 * step) / run.total_steps);
  return `${grouped(step)} / ${grouped(run.total_steps)} steps (${pct} %)`;
}

function basename(path: string): string {
  return path.split(/[\\/]/).pop() || path;
}

/** One line: the entry's problems, then which numbers were inf/nan (shown as "N/A"). */
export function noteText(run: RunSummary): string {
  const parts = [...(run.problems ?? [])];
  if (run.write_error) {
    parts.push(`cannot write its files: ${run.write_error}`);
  }
  const nonfinite = run.nonfinite ?? [];
  if (nonfinite.length > 0) {
    parts.push(`inf/nan (shown as N/A): ${nonfinite.join(', ')}`);
  }
  return parts.join('; ');
}

/** The active alarms as the run words them (status.json alarm_texts), else their messages. */
function alarmsText(run: RunSummary, alarms: RunSummary['alarms']): string {
  if (run.alarm_texts) {
    return run.alarm_texts.join('; ');
  }
  return alarms.map(a => a.message || `${a.rule} on GPU ${a.device}`).join('; ');
}

/** "throttled 7 % of the run (thermal 5 %)", and a GPU losing much of the last minute now. */
export function throttleText(run: Pick<RunSummary, 'throttle_text' | 'gpu_slowdown'>): string {
  return [run.gpu_slowdown, run.throttle_text].filter(Boolean).join('; ');
}

function runLevel(level: Level, run: RunSummary, final: boolean): Level {
  const late = !final && (run.deadline?.verdict === 'late' || run.deadline?.verdict === 'at_risk');
  const slowed = !final && Boolean(run.gpu_slowdown);
  const noted = (run.problems ?? []).length > 0;
  return worst([level, late || slowed || noted ? 'warn' : 'ok']);
}

/** "a.ipynb · process 4242": where the run is, and the process a live one runs in. */
function whereText(run: RunSummary, final: boolean): string {
  const place = run.notebook
    ? basename(run.notebook)
    : run.kernel
      ? `kernel ${run.kernel}`
      : 'a script or the CLI';
  return !final && run.pid > 0 ? `${place} · process ${run.pid}` : place;
}

const PAUSABLE = new Set(['training', 'evaluating', 'preprocessing', 'queued']);

export function runRow(
  run: RunSummary,
  // the row no longer counts anything down (the run words its ETA); kept for the callers
  _now: number,
  pending: ReadonlySet<ControlAction> = new Set()
): RunRow {
  const final = FINAL_STATUSES.has(run.status) || !run.alive;
  // an ended run shows how it ended, not the alarms that were active at that moment
  const alarms = final ? [] : (run.alarms ?? []);
  const best = bestMetric(run.best_metrics);
  const versus = baselineText(run);
  const level: Level =
    run.status === 'failed' || run.status === 'interrupted'
      ? 'alarm'
      : alarms.length > 0
        ? 'warn'
        : 'ok';
  return {
    id: run.run_id,
    name: run.name,
    where: whereText(run, final),
    whereTitle: run.notebook ?? '',
    status: run.status,
    progress: run.status === 'completed' ? 1 : fraction(run.progress),
    progressText: progressText(run),
    etaText: etaText(run),
    earlyStopText: earlyStopText(run),
    likelyStop: likelyStopFraction(run),
    bestMetricText: versus ? `best: ${versus}` : best ? best.text : '',
    alarmText: final ? '' : alarmsText(run, alarms),
    throttleText: throttleText(run),
    deadlineText: final ? '' : (run.deadline?.text ?? ''),
    noteText: noteText(run),
    level: runLevel(level, run, final),
    actions: {
      stop: !final && run.status !== 'stopping' && !pending.has('stop'),
      pause: !final && PAUSABLE.has(run.status) && !pending.has('pause'),
      resume: !final && run.status === 'paused' && !pending.has('resume')
    }
  };
}

export function gpuSection(
  reply: GpusReply | null,
  options: ViewOptions = DEFAULT_VIEW_OPTIONS
): Pick<ViewState, 'gpuCards' | 'hostCard' | 'gpuMessage'> {
  if (!reply) {
    return { gpuCards: [], hostCard: null, gpuMessage: 'loading…' };
  }
  const gpuCards = reply.gpus.map(g => gpuCard(g, options));
  const hostCardValue = gpuCards.length === 0 && reply.host ? hostCard(reply.host) : null;
  const gpuMessage =
    gpuCards.length === 0 ? (reply.reason ? `No GPU: ${reply.reason}` : 'No GPU') : '';
  return { gpuCards, hostCard: hostCardValue, gpuMessage };
}

/**
 * Which runs the list shows: this server's kernels' (and other processes' live runs, folded
 * away), live ones, this notebook's, or all (other processes' finished runs too).
 */
export type RunFilter = 'server' | 'live' | 'notebook' | 'all';

/** The groups of the run list, in the order they are shown. */
export type RunGroupKey = 'server' | 'notebook' | 'other-live' | 'other-finished';

export interface RunListOptions {
  filter: RunFilter;
  hideFinished: boolean;
  /** path of the notebook in focus (relative to the server root), for the "notebook" filter */
  notebook: string | null;
  /** the most finished runs a group lists (newest first); the rest are counted */
  finishedLimit: number;
}

export const DEFAULT_RUN_LIST: RunListOptions = {
  filter: 'server',
  hideFinished: false,
  notebook: null,
  finishedLimit: 20
};

/** One group of the run list: its runs in display order and how many the limit left out. */
export interface RunSection {
  key: RunGroupKey;
  title: string;
  runs: RunSummary[];
  /** finished runs beyond ``finishedLimit``, not listed */
  hidden: number;
}

const GROUP_TITLES: Record<RunGroupKey, string> = {
  server: "this server's notebooks",
  notebook: 'this notebook',
  'other-live': 'other processes: live',
  'other-finished': 'other processes: finished'
};

/**
 * The kernel knows its notebook as an absolute path (JPY_SESSION_NAME = the kernel's cwd +
 * the file name), the front end as a path relative to the server root.
 */
function sameNotebook(kernelPath: string | null, relative: string): boolean {
  if (!kernelPath) {
    return false;
  }
  const normal = kernelPath.replace(/\\/g, '/');
  return normal === relative || normal.endsWith(`/${relative}`);
}

/** A run whose process is alive and which has not ended. */
export function isLive(run: RunSummary): boolean {
  return run.alive && !FINAL_STATUSES.has(run.status);
}

/** Live runs first, then newest first (by start time, then id, so rows never swap places). */
function ordered(runs: RunSummary[]): RunSummary[] {
  const rank = (run: RunSummary) => (isLive(run) ? 0 : 1);
  return [...runs].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (b.started_at ?? 0) - (a.started_at ?? 0) ||
      a.run_id.localeCompare(b.run_id)
  );
}

/** A group of ``runs``: every live one, the newest ``limit`` finished ones, the rest counted. */
function section(key: RunGroupKey, runs: RunSummary[], limit: number): RunSection {
  const sorted = ordered(runs);
  const live = sorted.filter(isLive);
  const finished = sorted.filter(run => !isLive(run));
  const kept = finished.slice(0, Math.max(0, limit));
  return {
    key,
    title: GROUP_TITLES[key],
    runs: [...live, ...kept],
    hidden: finished.length - kept.length
  };
}

/**
 * The run list, grouped. Runs of this server's kernels come first (live, then finished,
 * newest first); other processes' live runs follow in their own group; their finished runs
 * only under "all". Each group lists at most ``finishedLimit`` finished runs and counts the
 * rest. Empty groups are left out.
 */
export function runSections(
  runs: RunSummary[],
  options: RunListOptions = DEFAULT_RUN_LIST
): RunSection[] {
  const shown = options.hideFinished ? runs.filter(isLive) : runs;
  const limit = options.finishedLimit;
  if (options.filter === 'notebook') {
    const notebook = options.notebook;
    const mine = shown.filter(run => notebook !== null && sameNotebook(run.notebook, notebook));
    return [section('notebook', mine, limit)].filter(s => s.runs.length + s.hidden > 0);
  }
  const live = options.filter === 'live';
  const mine = shown.filter(run => run.this_server && (!live || isLive(run)));
  const others = shown.filter(run => !run.this_server);
  const sections = [
    section('server', mine, limit),
    section('other-live', others.filter(isLive), limit)
  ];
  if (options.filter === 'all') {
    sections.push(
      section(
        'other-finished',
        others.filter(run => !isLive(run)),
        limit
      )
    );
  }
  return sections.filter(s => s.runs.length + s.hidden > 0);
}
