/**
 * The sidebar's model: fetches from the server, keeps the latest replies, derives the
 * view state and polls (Lumino Poll with backoff, standing by while the panel is hidden).
 * It knows nothing about the DOM; the server is reached through an injected `SidebarApi`.
 */

import { Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { ControlAction, GpusReply, RunsReply } from './types';
import {
  DEFAULT_RUN_LIST,
  DEFAULT_VIEW_OPTIONS,
  RunGroupKey,
  RunListOptions,
  ViewOptions,
  ViewState,
  gpuSection,
  runGroup,
  runRow,
  runSections
} from './view_state';

/** How the model reaches the server (ServerConnection in the app, a fake in tests). */
export interface SidebarApi {
  gpus(): Promise<GpusReply>;
  runs(): Promise<RunsReply>;
  control(runId: string, action: ControlAction): Promise<void>;
}

export interface SidebarModelOptions {
  api: SidebarApi;
  /** wall-clock seconds; a parameter so tests control time */
  clock?: () => number;
  view?: ViewOptions;
}

export interface PollOptions {
  /** milliseconds between refreshes */
  interval: number;
  /** true while nobody can see the panel: the poll stands by */
  isHidden: () => boolean;
  /** the longest backoff after failures, milliseconds */
  max?: number;
}

export class SidebarModel {
  constructor(options: SidebarModelOptions) {
    this._api = options.api;
    this._clock = options.clock ?? (() => Date.now() / 1000);
    this._viewOptions = options.view ?? DEFAULT_VIEW_OPTIONS;
    this._view = this._derive();
  }

  /** Emitted with the new view state after every refresh or option change. */
  get changed(): ISignal<this, ViewState> {
    return this._changed;
  }

  get view(): ViewState {
    return this._view;
  }

  get poll(): Poll | null {
    return this._poll;
  }

  set viewOptions(options: ViewOptions) {
    this._viewOptions = options;
    this._publish();
  }

  /**
   * Fetch GPUs and runs together. A failure is shown (view.error) and re-thrown, so that
   * the Poll backs off; a partial success still updates the part that arrived.
   */
  async refresh(): Promise<void> {
    const [gpus, runs] = await Promise.allSettled([this._api.gpus(), this._api.runs()]);
    const failures: string[] = [];
    if (gpus.status === 'fulfilled') {
      this._gpus = gpus.value;
    } else {
      failures.push(`GPUs: ${errorText(gpus.reason)}`);
    }
    if (runs.status === 'fulfilled') {
      this._runs = runs.value;
      this._pending.clear();
    } else {
      failures.push(`runs: ${errorText(runs.reason)}`);
    }
    this._error = failures.join('; ');
    this._publish();
    if (failures.length > 0) {
      throw new Error(this._error);
    }
  }

  /** Ask the server to stop / pause / resume a run; the button stays disabled until the next refresh. */
  async control(runId: string, action: ControlAction): Promise<void> {
    const pending = this._pending.get(runId) ?? new Set<ControlAction>();
    pending.add(action);
    this._pending.set(runId, pending);
    this._publish();
    try {
      await this._api.control(runId, action);
    } catch (reason) {
      pending.delete(action);
      this._error = `${action} ${runId}: ${errorText(reason)}`;
      this._publish();
      return;
    }
    if (this._poll) {
      void this._poll.refresh();
    }
  }

  /** Start polling (idempotent for the same interval; a new interval replaces the poll). */
  startPolling(options: PollOptions): Poll {
    this._poll?.dispose();
    this._poll = new Poll({
      factory: () => this.refresh(),
      frequency: { interval: options.interval, backoff: true, max: options.max ?? 30_000 },
      standby: () => options.isHidden() || 'when-hidden',
      name: 'ludwig-nb:sidebar'
    });
    return this._poll;
  }

  dispose(): void {
    this._poll?.dispose();
    this._poll = null;
    Signal.clearData(this);
  }

  private _publish(): void {
    this._view = this._derive();
    this._changed.emit(this._view);
  }

  private _derive(): ViewState {
    const now = this._clock();
    const sections = runSections(this._runs?.runs ?? [], this._runList);
    const runGroups = sections.map(section =>
      runGroup(
        section,
        section.runs.map(r => runRow(r, now, this._pending.get(r.run_id))),
        this._collapsed
      )
    );
    const runs = runGroups.flatMap(group => group.rows);
    return { ...gpuSection(this._gpus, this._viewOptions), runs, runGroups, error: this._error };
  }

  /** Fold or unfold a group of the run list (other processes' live runs start folded). */
  toggleGroup(key: RunGroupKey): void {
    if (!this._collapsed.delete(key)) {
      this._collapsed.add(key);
    }
    this._publish();
  }

  /** Which runs to list and in what order (filter, hide finished, the focused notebook). */
  get runListOptions(): RunListOptions {
    return this._runList;
  }

  set runListOptions(options: RunListOptions) {
    this._runList = options;
    this._publish();
  }

  private _runList: RunListOptions = DEFAULT_RUN_LIST;
  private _collapsed = new Set<RunGroupKey>(['other-live']);
  private _api: SidebarApi;
  private _clock: () => number;
  private _viewOptions: ViewOptions;
  private _gpus: GpusReply | null = null;
  private _runs: RunsReply | null = null;
  private _error = '';
  private _pending = new Map<string, Set<ControlAction>>();
  private _view: ViewState;
  private _poll: Poll | null = null;
  private _changed = new Signal<this, ViewState>(this);
}

function errorText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
