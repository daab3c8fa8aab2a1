/**
 * A reopened notebook's run outputs, refreshed from the run directory.
 *
 * When a notebook is saved, the server's pre-save hook (ludwig_nb/server/notebook_fallback.py)
 * replaces each ludwig_nb dashboard widget by a readable snapshot of its run and records the
 * status it shows in the output's metadata (`{"ludwig_nb": {"run_id", "directory", "status"}}`).
 * A run saved while live goes on (or its kernel dies) after the save, so once the notebook is
 * opened again its snapshot is stale. `SnapshotRefresher` finds every such output whose
 * recorded status is not final, asks the server for the run's current snapshot
 * (GET /ludwig-nb/runs/<id>/snapshot, from status.json) and puts it in place: at once when the
 * status changed (it ended, paused, was interrupted), at most every `liveInterval` ms while
 * the run is still live. Outputs that still hold a live widget are left to the widget.
 *
 * A page reloaded while a run trains loads the saved snapshot, yet the kernel still holds the
 * dashboard's widget model (the output's metadata names it: `model_id`), and the widget
 * manager recreates the kernel's models on reconnect. So when the notebook's kernel still
 * has that widget (`liveWidgets`: its open `jupyter.widget` comms), the refresher puts the
 * widget view back in the output (marked `reattached`) and the live dashboard goes on
 * updating. A reattached widget is watched like a snapshot: when its run ends, or its model
 * is gone from the kernel (restarted), the run's current snapshot takes its place.
 *
 * The notebook model is reached through the narrow interfaces below (JupyterLab's
 * INotebookModel, ICodeCellModel and IOutputAreaModel satisfy them), so this module needs no
 * @jupyterlab/notebook dependency and is tested with plain objects.
 */

import { FINAL_STATUSES, RunStatus, SnapshotReply } from './types';

export const WIDGET_MIMETYPE = 'application/vnd.jupyter.widget-view+json';
export const METADATA_KEY = 'ludwig_nb';

/** What the refresher reads of an output (IOutputModel). */
export interface OutputLike {
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** What it needs of a cell's outputs (IOutputAreaModel). */
export interface OutputsLike {
  readonly length: number;
  get(index: number): OutputLike;
  set(
    index: number,
    value: { output_type: string; data: Record<string, unknown>; metadata: Record<string, unknown> }
  ): void;
}

/** What it needs of a notebook model (INotebookModel: cells of ICellModel). */
export interface NotebookLike {
  readonly cells: {
    readonly length: number;
    get(index: number): { readonly type: string; readonly outputs?: OutputsLike };
  };
}

export interface SnapshotApi {
  snapshot(runId: string): Promise<SnapshotReply>;
}

/**
 * The widget model ids that `notebook`'s kernel holds (its open `jupyter.widget` comms; a
 * comm id is its model's id); null when unknown (no kernel, or no answer in time).
 */
export type LiveWidgets = (notebook: NotebookLike) => Promise<ReadonlySet<string> | null>;

/** A saved snapshot output that may be out of date. */
export interface StaleSnapshot {
  outputs: OutputsLike;
  index: number;
  runId: string;
  /** the status it shows (null: saved without one, e.g. the bundle's own fallback) */
  status: string | null;
  meta: Record<string, unknown>;
  /** the dashboard widget's model id recorded at display time (null: none recorded) */
  modelId: string | null;
  /** a widget view this refresher put back (watched until its run ends) */
  reattached: boolean;
}

function runMeta(output: OutputLike): Record<string, unknown> | null {
  const meta = output.metadata?.[METADATA_KEY];
  if (!meta || typeof meta !== 'object' || Array.isArray(meta)) {
    return null;
  }
  const record = meta as Record<string, unknown>;
  return typeof record.run_id === 'string' && record.run_id ? record : null;
}

/**
 * Every ludwig_nb snapshot output whose recorded status is not final, and every widget view
 * put back by the refresher (`reattached`); a widget view shown by the kernel is left alone.
 */
export function staleSnapshots(notebook: NotebookLike): StaleSnapshot[] {
  const found: StaleSnapshot[] = [];
  for (let c = 0; c < notebook.cells.length; c++) {
    const outputs = notebook.cells.get(c).outputs;
    if (!outputs) {
      continue;
    }
    for (let i = 0; i < outputs.length; i++) {
      const output = outputs.get(i);
      const meta = runMeta(output);
      const reattached = meta?.reattached === true;
      if (!meta || (WIDGET_MIMETYPE in (output.data ?? {}) && !reattached)) {
        continue;
      }
      const status = typeof meta.status === 'string' ? meta.status : null;
      if (status !== null && FINAL_STATUSES.has(status as RunStatus)) {
        continue;
      }
      const modelId = typeof meta.model_id === 'string' && meta.model_id ? meta.model_id : null;
      found.push({
        outputs,
        index: i,
        runId: meta.run_id as string,
        status,
        meta,
        modelId,
        reattached
      });
    }
  }
  return found;
}

export interface RefresherOptions {
  api: SnapshotApi;
  /** milliseconds; a clock so that tests drive time */
  clock?: () => number;
  /** ms between refreshes of a snapshot whose run is still live (its status unchanged) */
  liveInterval?: number;
  /** ms before asking again about a run the server does not know (404) */
  retryInterval?: number;
  /** the kernel's widget models, to put a live dashboard back (absent: never put back) */
  liveWidgets?: LiveWidgets;
}

/** Refreshes stale run snapshots in open notebooks; call `refresh` on a timer. */
export class SnapshotRefresher {
  constructor(options: RefresherOptions) {
    this._api = options.api;
    this._clock = options.clock ?? (() => Date.now());
    this._liveInterval = options.liveInterval ?? 10_000;
    this._retryInterval = options.retryInterval ?? 30_000;
    this._liveWidgets = options.liveWidgets ?? null;
  }

  /** How many widget views were put back in total. */
  get reattached(): number {
    return this._reattached;
  }

  /** How many outputs were replaced in total (for tests and the console). */
  get replaced(): number {
    return this._replaced;
  }

  /** Look at every notebook once; resolves when the replies are in. Never throws. */
  async refresh(notebooks: Iterable<NotebookLike>): Promise<void> {
    const found = [...notebooks].map(nb => ({ nb, stale: staleSnapshots(nb) }));
    const stale = found.flatMap(f => f.stale);
    const live = new Map<OutputsLike, ReadonlySet<string> | null>();
    await Promise.all(
      found
        .filter(f => f.stale.some(s => s.modelId !== null))
        .map(async f => {
          const ids = await this._askLive(f.nb);
          f.stale.forEach(s => live.set(s.outputs, ids));
        })
    );
    const now = this._clock();
    const wanted = new Set(
      stale.map(s => s.runId).filter(id => (this._askAfter.get(id) ?? 0) <= now)
    );
    const replies = new Map<string, SnapshotReply>();
    await Promise.all(
      [...wanted].map(async runId => {
        try {
          replies.set(runId, await this._api.snapshot(runId));
        } catch {
          this._askAfter.set(runId, now + this._retryInterval); // not (or no longer) in the registry
        }
      })
    );
    for (const item of stale) {
      const reply = replies.get(item.runId);
      const ids = live.get(item.outputs) ?? null;
      if (this._reattach(item, reply, ids)) {
        continue;
      }
      if (!reply) {
        continue;
      }
      if (!item.reattached) {
        this._apply(item, reply, now, false);
      } else if (reply.final || this._gone(item, ids)) {
        this._apply(item, reply, now, true); // the widget gives way to the run's snapshot
      }
    }
  }

  private async _askLive(nb: NotebookLike): Promise<ReadonlySet<string> | null> {
    if (!this._liveWidgets) {
      return null;
    }
    try {
      return await this._liveWidgets(nb);
    } catch {
      return null;
    }
  }

  /** Whether the kernel is known to no longer hold the output's widget model. */
  private _gone(item: StaleSnapshot, ids: ReadonlySet<string> | null): boolean {
    return ids !== null && item.modelId !== null && !ids.has(item.modelId);
  }

  /**
   * Put the live widget back in a snapshot's place when the kernel holds its model and the
   * run has not ended; true if it did.
   */
  private _reattach(
    item: StaleSnapshot,
    reply: SnapshotReply | undefined,
    ids: ReadonlySet<string> | null
  ): boolean {
    if (item.reattached || item.modelId === null || !ids?.has(item.modelId) || reply?.final) {
      return false;
    }
    const current = item.outputs.get(item.index);
    const view = { version_major: 2, version_minor: 0, model_id: item.modelId };
    item.outputs.set(item.index, {
      output_type: 'display_data',
      data: { ...current.data, [WIDGET_MIMETYPE]: view },
      metadata: { ...current.metadata, [METADATA_KEY]: { ...item.meta, reattached: true } }
    });
    this._reattached += 1;
    return true;
  }

  private _apply(item: StaleSnapshot, reply: SnapshotReply, now: number, force: boolean): void {
    const key = `${item.runId}`;
    const changed = reply.status !== item.status;
    const due = now - (this._lastReplace.get(key) ?? -Infinity) >= this._liveInterval;
    const current = item.outputs.get(item.index);
    const same = current.data['text/plain'] === reply.bundle['text/plain'];
    if (!force && ((same && !changed) || (!changed && !due))) {
      return;
    }
    const meta = { ...item.meta };
    delete meta.reattached; // a snapshot again, no longer a widget
    item.outputs.set(item.index, {
      output_type: 'display_data',
      data: { ...reply.bundle },
      metadata: { ...current.metadata, [METADATA_KEY]: { ...meta, status: reply.status } }
    });
    this._lastReplace.set(key, now);
    this._replaced += 1;
  }

  private _api: SnapshotApi;
  private _clock: () => number;
  private _liveInterval: number;
  private _retryInterval: number;
  private _askAfter = new Map<string, number>();
  private _lastReplace = new Map<string, number>();
  private _replaced = 0;
  private _reattached = 0;
  private _liveWidgets: LiveWidgets | null;
}
