/**
 * Every reply shape the real server produces (recorded by tests/server/test_handlers.py
 * into server_replies.json: good runs, inf/nan metrics, malformed registry entries and
 * status files, a full disk) goes through the sidebar's own code without an error.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { SidebarApi, SidebarModel } from '../src/model';
import { GpusReply, RunReply, RunsReply } from '../src/types';
import { noteText, runRow } from '../src/view_state';
import { gpusReply } from './fixtures';

const text = readFileSync(join(__dirname, 'server_replies.json'), 'utf-8');
const replies = JSON.parse(text) as { runs: RunsReply; run: RunReply };
const byId = new Map(replies.runs.runs.map(r => [r.run_id, r]));

describe('recorded server replies', () => {
  it('are strict JSON: no NaN or Infinity token', () => {
    expect(text).not.toMatch(/\b(NaN|Infinity)\b/);
    expect(replies.runs.runs.length).toBeGreaterThanOrEqual(9);
  });

  it.each(replies.runs.runs.map(r => [r.run_id]))('run %s becomes a row', runId => {
    const row = runRow(byId.get(runId)!, 1000);
    expect(row.id).toBe(runId);
    expect(typeof row.progressText).toBe('string');
    expect(typeof row.etaText).toBe('string');
  });

  it('a good run has no note, a malformed one is marked and says why', () => {
    expect(noteText(byId.get('good')!)).toBe('');
    for (const id of [
      'pid-text',
      'metrics-list',
      'alarms-object',
      'status-unknown',
      'status-list',
      'status-garbage'
    ]) {
      const row = runRow(byId.get(id)!, 1000);
      expect(row.noteText, id).not.toBe('');
      expect(row.level, id).not.toBe('ok');
    }
    expect(runRow(byId.get('metrics-list')!, 1000).noteText).toContain('latest_metrics is a list');
  });

  it('a late, hot run shows its margin alarm, its throttled time and its deadline', () => {
    const summary = byId.get('late-and-hot')!;
    expect(summary.alarms[0].margin).toBe(3);
    const row = runRow(summary, 1000);
    expect(row.deadlineText).toBe('likely finishes 20 min after your deadline (02:00)');
    // the ETA the run wrote, verbatim: the dashboard's own words
    expect(row.etaText).toBe('ETA ≈ 1 h 20 min (1 h 10 min – 1 h 30 min) · done ≈ 01:20');
    expect(row.throttleText).toContain('throttled 12 % of the run (thermal 12 %)');
    expect(row.throttleText).toContain('GPU 0 throttled 40 % of the last minute');
    expect(row.level).toBe('warn');
    expect(runRow(byId.get('deadline-garbage')!, 1000).noteText).toContain('deadline');
  });

  it('non-finite numbers are shown as N/A and named', () => {
    const row = runRow(byId.get('nonfinite')!, 1000);
    expect(row.noteText).toContain('inf/nan');
    expect(row.noteText).toContain('latest_metrics.validation.y.loss');
    expect(replies.run.events[0].nonfinite).toEqual(['metrics.validation.y.loss']);
  });

  it("a run paused by an alarm shows the run's own words and its early-stop forecast", () => {
    const row = runRow(byId.get('early-stop-paused')!, 1000);
    expect(row.etaText).toBe(
      'paused: GPU 0 at 88 °C, 4 °C under its slowdown point; resumes below 82 °C'
    );
    expect(row.earlyStopText).toBe(
      'at most 11,000 steps (early stopping); likely stops near step 2,479 (not before 2,200)'
    );
    expect(row.likelyStop).toBeCloseTo(2479 / 11000, 6);
    expect(row.alarmText).toBe(''); // the pause text already names the pausing alarm
    expect(row.progressText).toBe('1,200 / 11,000 steps (10 %)');
    expect(row.noteText).toBe('');
  });

  it('a run that stopped early says why, and marks no forecast', () => {
    const row = runRow(byId.get('early-stopped')!, 1000);
    expect(row.earlyStopText).toBe(
      'stopped early: no validation improvement in 5 evaluations; best at step 600'
    );
    expect(row.likelyStop).toBeNull();
    expect(row.etaText).toBe('completed · took 3 s'); // the run's own words for its duration
    const bad = runRow(byId.get('early-stop-list')!, 1000);
    expect(bad.earlyStopText).toBe('');
    expect(bad.noteText).toContain('early_stop is a list');
  });

  it('a run that cannot write its files says so', () => {
    expect(runRow(byId.get('disk-full')!, 1000).noteText).toContain('No space left');
  });

  it('the model shows every run of the recorded list under "all"', async () => {
    const api: SidebarApi = {
      gpus: async (): Promise<GpusReply> => gpusReply(),
      runs: async (): Promise<RunsReply> => replies.runs,
      control: async () => undefined
    };
    const model = new SidebarModel({ api, clock: () => 1000 });
    model.runListOptions = { ...model.runListOptions, filter: 'all' };
    await model.refresh();
    expect(model.view.error).toBe('');
    expect(model.view.runs.map(r => r.id).sort()).toEqual([...byId.keys()].sort());
    // none was started by a kernel of the recording server: by default only the live ones show
    model.runListOptions = { ...model.runListOptions, filter: 'server' };
    expect(model.view.runGroups.map(g => g.key)).toEqual(['other-live']);
  });
});
