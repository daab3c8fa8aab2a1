import { afterEach, describe, expect, it, vi } from 'vitest';

import { SidebarApi, SidebarModel } from '../src/model';
import { ControlAction, GpusReply, RunsReply } from '../src/types';
import { gpusReply, run } from './fixtures';

class FakeApi implements SidebarApi {
  gpuReplies: Array<GpusReply | Error> = [];
  runReplies: Array<RunsReply | Error> = [];
  controls: Array<[string, ControlAction]> = [];
  controlError: Error | null = null;
  calls = 0;

  async gpus(): Promise<GpusReply> {
    this.calls += 1;
    return this.next(this.gpuReplies, gpusReply());
  }
  async runs(): Promise<RunsReply> {
    return this.next(this.runReplies, { runs: [run()] });
  }
  async control(runId: string, action: ControlAction): Promise<void> {
    this.controls.push([runId, action]);
    if (this.controlError) {
      throw this.controlError;
    }
  }
  private next<T>(queue: Array<T | Error>, fallback: T): T {
    const item = queue.length > 0 ? queue.shift()! : fallback;
    if (item instanceof Error) {
      throw item;
    }
    return item;
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('SidebarModel.refresh', () => {
  it('derives cards and rows from both replies and signals the change', async () => {
    const api = new FakeApi();
    const model = new SidebarModel({ api, clock: () => 1000 });
    const seen: number[] = [];
    model.changed.connect((_, view) => seen.push(view.runs.length));
    await model.refresh();
    expect(model.view.gpuCards[0].title).toBe('GPU 0');
    expect(model.view.runs[0].etaText).toBe('ETA ≈ 5 min (4 min – 6 min) · done ≈ 14:05');
    expect(model.view.error).toBe('');
    expect(seen).toEqual([1]);
  });

  it('keeps what arrived when one request fails, shows the error and rejects (so Poll backs off)', async () => {
    const api = new FakeApi();
    api.gpuReplies.push(new Error('500 Internal Server Error'));
    const model = new SidebarModel({ api, clock: () => 1000 });
    await expect(model.refresh()).rejects.toThrow('GPUs: 500 Internal Server Error');
    expect(model.view.runs).toHaveLength(1);
    expect(model.view.error).toContain('500');
    await model.refresh();
    expect(model.view.error).toBe('');
  });

  it('a run moves from training to stopped between refreshes', async () => {
    const api = new FakeApi();
    api.runReplies.push(
      { runs: [run()] },
      { runs: [run({ status: 'stopped', finished_at: 1010 })] }
    );
    const model = new SidebarModel({ api, clock: () => 1010 });
    await model.refresh();
    expect(model.view.runs[0].actions.stop).toBe(true);
    await model.refresh();
    expect(model.view.runs[0].status).toBe('stopped');
    expect(model.view.runs[0].actions.stop).toBe(false);
  });
});

describe('SidebarModel.control', () => {
  it('sends the request and disables the button until the next refresh', async () => {
    const api = new FakeApi();
    const model = new SidebarModel({ api, clock: () => 1000 });
    await model.refresh();
    await model.control('demo-20261130-080000-abc123', 'stop');
    expect(api.controls).toEqual([['demo-20261130-080000-abc123', 'stop']]);
    expect(model.view.runs[0].actions.stop).toBe(false);
    await model.refresh();
    expect(model.view.runs[0].actions.stop).toBe(true);
  });

  it('shows a failed request and re-enables the button', async () => {
    const api = new FakeApi();
    api.controlError = new Error('409 Conflict');
    const model = new SidebarModel({ api, clock: () => 1000 });
    await model.refresh();
    await model.control('demo-20261130-080000-abc123', 'pause');
    expect(model.view.error).toBe('pause demo-20261130-080000-abc123: 409 Conflict');
    expect(model.view.runs[0].actions.pause).toBe(true);
  });
});

describe('SidebarModel polling', () => {
  it('polls at the interval while visible and stands by while hidden (virtual time)', async () => {
    vi.useFakeTimers();
    const api = new FakeApi();
    const model = new SidebarModel({ api, clock: () => 1000 });
    let hidden = false;
    const poll = model.startPolling({ interval: 1000, isHidden: () => hidden });
    await poll.start();
    await vi.advanceTimersByTimeAsync(3500);
    const visibleCalls = api.calls;
    expect(visibleCalls).toBeGreaterThanOrEqual(3);
    hidden = true;
    await vi.advanceTimersByTimeAsync(5000);
    expect(api.calls - visibleCalls).toBeLessThanOrEqual(1); // the tick in flight, then standby
    const standbyCalls = api.calls;
    hidden = false;
    await vi.advanceTimersByTimeAsync(2500);
    expect(api.calls).toBeGreaterThan(standbyCalls);
    model.dispose();
  });

  it('backs off after failures', async () => {
    vi.useFakeTimers();
    const api = new FakeApi();
    // more failures than a fixed interval could use up: Lumino's backoff draws each wait at
    // random, and with only 10 a run of short draws reached the first success within 20 s
    for (let i = 0; i < 40; i++) {
      api.gpuReplies.push(new Error('network down'));
    }
    const model = new SidebarModel({ api, clock: () => 1000 });
    const poll = model.startPolling({ interval: 1000, isHidden: () => false, max: 30_000 });
    await poll.start();
    await vi.advanceTimersByTimeAsync(20_000);
    expect(poll.state.phase).toBe('rejected');
    expect(poll.state.interval).toBeGreaterThan(1000);
    expect(api.calls).toBeLessThan(20); // a fixed 1 s interval would have made 20
    model.dispose();
  });
});

describe('SidebarModel run groups', () => {
  it("folds other processes' live runs until asked, and keeps their controls", async () => {
    const api = new FakeApi();
    const script = run({ run_id: 'script', notebook: null, kernel: null, this_server: false });
    api.runReplies.push({ runs: [run({ run_id: 'mine' }), script] });
    const model = new SidebarModel({ api, clock: () => 1000 });
    await model.refresh();
    const folded = () => model.view.runGroups.map(g => [g.key, g.collapsed]);
    expect(folded()).toEqual([
      ['server', false],
      ['other-live', true]
    ]);
    expect(model.view.runGroups[1].rows[0].actions.stop).toBe(true);
    model.toggleGroup('other-live');
    expect(folded()).toEqual([
      ['server', false],
      ['other-live', false]
    ]);
    model.toggleGroup('other-live');
    expect(folded()[1]).toEqual(['other-live', true]);
  });
});
