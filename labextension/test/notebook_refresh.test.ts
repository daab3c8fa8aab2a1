/**
 * Reopened notebooks: saved run snapshots that were not final are replaced by the run's
 * current snapshot; live widgets, final snapshots and other outputs are left alone.
 */
import { describe, expect, it } from 'vitest';

import {
  LiveWidgets,
  NotebookLike,
  OutputLike,
  OutputsLike,
  SnapshotApi,
  SnapshotRefresher,
  WIDGET_MIMETYPE,
  staleSnapshots
} from '../src/notebook_refresh';
import { SnapshotReply } from '../src/types';

class Outputs implements OutputsLike {
  constructor(public items: OutputLike[]) {}
  get length(): number {
    return this.items.length;
  }
  get(index: number): OutputLike {
    return this.items[index];
  }
  set(
    index: number,
    value: { output_type: string; data: Record<string, unknown>; metadata: Record<string, unknown> }
  ): void {
    this.items[index] = { type: value.output_type, data: value.data, metadata: value.metadata };
  }
}

function snapshotOutput(
  runId: string,
  status: string | undefined,
  text = `${runId}: ${status}`
): OutputLike {
  const meta: Record<string, unknown> = { run_id: runId, directory: `/results/${runId}` };
  if (status !== undefined) {
    meta.status = status;
  }
  return {
    type: 'display_data',
    data: { 'text/plain': text, 'text/html': `<div>${text}</div>` },
    metadata: { ludwig_nb: meta }
  };
}

function notebook(...cells: OutputLike[][]): { nb: NotebookLike; outputs: Outputs[] } {
  const outputs = cells.map(items => new Outputs(items));
  const all = [
    ...outputs.map(o => ({ type: 'code', outputs: o as OutputsLike })),
    { type: 'markdown' }
  ];
  return { nb: { cells: { length: all.length, get: (i: number) => all[i] } }, outputs };
}

function reply(runId: string, status: SnapshotReply['status'], text: string): SnapshotReply {
  return {
    run_id: runId,
    status,
    final: ['completed', 'stopped', 'failed', 'interrupted'].includes(status),
    bundle: {
      'text/plain': text,
      'text/html': `<div class="ludwig-nb-snapshot" data-status="${status}">${text}</div>`
    }
  };
}

function api(replies: Record<string, SnapshotReply | Error>): SnapshotApi & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    snapshot: async (runId: string) => {
      asked.push(runId);
      const found = replies[runId];
      if (!found || found instanceof Error) {
        throw found ?? new Error('404');
      }
      return found;
    }
  };
}

describe('stale snapshots', () => {
  it('are the saved snapshots whose status was not final', () => {
    const widget: OutputLike = {
      type: 'display_data',
      data: { [WIDGET_MIMETYPE]: { model_id: 'm' }, 'text/plain': 'live' },
      metadata: { ludwig_nb: { run_id: 'live-widget' } }
    };
    const other: OutputLike = { type: 'stream', data: {}, metadata: {} };
    const { nb } = notebook(
      [snapshotOutput('a', 'training'), snapshotOutput('b', 'completed')],
      [widget, other, snapshotOutput('c', undefined), snapshotOutput('d', 'paused')]
    );
    expect(staleSnapshots(nb).map(s => [s.runId, s.status])).toEqual([
      ['a', 'training'],
      ['c', null],
      ['d', 'paused']
    ]);
  });
});

describe('the refresher', () => {
  it('puts the final snapshot of a run that ended since the save in place', async () => {
    const { nb, outputs } = notebook([snapshotOutput('a', 'training')]);
    const done = reply(
      'a',
      'completed',
      'a: completed, step 3,100 / 3,100\nstopped early: no validation improvement in 5 evaluations'
    );
    const refresher = new SnapshotRefresher({ api: api({ a: done }), clock: () => 0 });
    await refresher.refresh([nb]);
    const out = outputs[0].get(0);
    expect(out.data['text/plain']).toBe(done.bundle['text/plain']);
    expect(out.data['text/html']).toContain('data-status="completed"');
    expect(out.data[WIDGET_MIMETYPE]).toBeUndefined();
    expect((out.metadata.ludwig_nb as Record<string, unknown>).status).toBe('completed');
    expect((out.metadata.ludwig_nb as Record<string, unknown>).directory).toBe('/results/a');
    expect(refresher.replaced).toBe(1);
    // once final it is never asked about again
    const again = api({ a: done });
    await new SnapshotRefresher({ api: again }).refresh([nb]);
    expect(again.asked).toEqual([]);
  });

  it('refreshes a live run at most every liveInterval, a status change at once', async () => {
    let now = 0;
    const replies: Record<string, SnapshotReply> = {
      a: reply('a', 'training', 'a: training, step 10')
    };
    const { nb, outputs } = notebook([snapshotOutput('a', 'training', 'a: training, step 5')]);
    const refresher = new SnapshotRefresher({
      api: api(replies),
      clock: () => now,
      liveInterval: 10_000
    });
    await refresher.refresh([nb]);
    expect(outputs[0].get(0).data['text/plain']).toBe('a: training, step 10');
    replies.a = reply('a', 'training', 'a: training, step 20');
    now = 2_000;
    await refresher.refresh([nb]);
    expect(outputs[0].get(0).data['text/plain']).toBe('a: training, step 10'); // not due yet
    replies.a = reply('a', 'paused', 'a: paused by you, step 20');
    now = 4_000;
    await refresher.refresh([nb]);
    expect(outputs[0].get(0).data['text/plain']).toBe('a: paused by you, step 20'); // status changed
    replies.a = reply('a', 'interrupted', 'a: interrupted, step 20');
    now = 5_000;
    await refresher.refresh([nb]);
    expect(outputs[0].get(0).data['text/plain']).toBe('a: interrupted, step 20');
    expect(refresher.replaced).toBe(3);
  });

  it('leaves an output alone when the server does not know the run, and asks again later', async () => {
    let now = 0;
    const missing = api({});
    const { nb, outputs } = notebook([snapshotOutput('gone', 'training')]);
    const before = outputs[0].get(0);
    const refresher = new SnapshotRefresher({
      api: missing,
      clock: () => now,
      retryInterval: 30_000
    });
    await refresher.refresh([nb]);
    now = 10_000;
    await refresher.refresh([nb]);
    expect(missing.asked).toEqual(['gone']);
    expect(outputs[0].get(0)).toBe(before);
    now = 31_000;
    await refresher.refresh([nb]);
    expect(missing.asked).toEqual(['gone', 'gone']);
  });
});

/** A saved live snapshot that names its dashboard's widget model. */
function liveSnapshot(runId: string, modelId: string, text = `${runId}: training`): OutputLike {
  const out = snapshotOutput(runId, 'training', text);
  (out.metadata.ludwig_nb as Record<string, unknown>).model_id = modelId;
  return out;
}

function kernelHolds(ids: string[] | null): LiveWidgets & { asked: number } {
  const fn = async () => {
    fn.asked += 1;
    return ids === null ? null : new Set(ids);
  };
  fn.asked = 0;
  return fn;
}

describe('a reloaded page whose kernel still runs the run', () => {
  const training = reply('a', 'training', 'a: training, step 40');

  it('gets the live dashboard back in place of the snapshot', async () => {
    const { nb, outputs } = notebook([liveSnapshot('a', 'model-1')]);
    const live = kernelHolds(['model-1', 'other']);
    const refresher = new SnapshotRefresher({ api: api({ a: training }), liveWidgets: live });
    await refresher.refresh([nb]);
    const out = outputs[0].get(0);
    expect(out.data[WIDGET_MIMETYPE]).toEqual({
      version_major: 2,
      version_minor: 0,
      model_id: 'model-1'
    });
    expect(out.data['text/html']).toContain('a: training'); // the fallback stays beside it
    expect((out.metadata.ludwig_nb as Record<string, unknown>).reattached).toBe(true);
    expect(refresher.reattached).toBe(1);
    // still live: the widget is left to update itself
    await refresher.refresh([nb]);
    expect(outputs[0].get(0)).toBe(out);
    expect(refresher.reattached).toBe(1);
    expect(refresher.replaced).toBe(0);
  });

  it('keeps the snapshot when the kernel does not hold the model (restarted) or is unknown', async () => {
    for (const ids of [['someone-else'], null]) {
      const { nb, outputs } = notebook([liveSnapshot('a', 'model-1', 'a: training, step 40')]);
      const refresher = new SnapshotRefresher({
        api: api({ a: training }),
        liveWidgets: kernelHolds(ids)
      });
      await refresher.refresh([nb]);
      expect(outputs[0].get(0).data[WIDGET_MIMETYPE]).toBeUndefined();
      expect(refresher.reattached).toBe(0);
    }
  });

  it('never puts back a widget whose run has ended, nor one without a recorded model', async () => {
    const done = reply('a', 'completed', 'a: completed, step 100 / 100');
    const { nb, outputs } = notebook(
      [liveSnapshot('a', 'model-1')],
      [snapshotOutput('b', 'training')]
    );
    const refresher = new SnapshotRefresher({
      api: api({ a: done, b: reply('b', 'training', 'b: training, step 3') }),
      liveWidgets: kernelHolds(['model-1'])
    });
    await refresher.refresh([nb]);
    expect(outputs[0].get(0).data['text/plain']).toBe('a: completed, step 100 / 100');
    expect(outputs[0].get(0).data[WIDGET_MIMETYPE]).toBeUndefined();
    expect(outputs[1].get(0).data[WIDGET_MIMETYPE]).toBeUndefined();
    expect(refresher.reattached).toBe(0);
  });

  it('gives the widget back to the snapshot when its run ends or its model is gone', async () => {
    const replies: Record<string, SnapshotReply> = { a: training, b: training };
    const { nb, outputs } = notebook(
      [liveSnapshot('a', 'model-a')],
      [liveSnapshot('b', 'model-b')]
    );
    let ids = ['model-a', 'model-b'];
    const refresher = new SnapshotRefresher({
      api: api(replies),
      liveWidgets: async () => new Set(ids)
    });
    await refresher.refresh([nb]);
    expect(refresher.reattached).toBe(2);
    replies.a = reply('a', 'completed', 'a: completed, step 100 / 100');
    // a's run ended (its model is still held); b trains on
    replies.b = reply('b', 'training', 'b: training, step 50');
    await refresher.refresh([nb]);
    const a = outputs[0].get(0);
    expect(a.data[WIDGET_MIMETYPE]).toBeUndefined();
    expect(a.data['text/plain']).toBe('a: completed, step 100 / 100');
    expect(a.metadata.ludwig_nb).not.toHaveProperty('reattached');
    expect(outputs[1].get(0).data[WIDGET_MIMETYPE]).toBeDefined(); // b's model is still held
    ids = []; // b's model is gone from the kernel (restarted) before the server says so
    await refresher.refresh([nb]);
    expect(outputs[1].get(0).data['text/plain']).toBe('b: training, step 50');
    expect(outputs[1].get(0).data[WIDGET_MIMETYPE]).toBeUndefined();
  });

  it('asks the kernel only about notebooks with a recorded model', async () => {
    const { nb } = notebook([snapshotOutput('b', 'training')]);
    const live = kernelHolds(['x']);
    await new SnapshotRefresher({
      api: api({ b: reply('b', 'training', 'b: training') }),
      liveWidgets: live
    }).refresh([nb]);
    expect(live.asked).toBe(0);
  });
});
