import { describe, expect, it } from 'vitest';

import { formatNumber } from '../src/format';
import {
  ACTIVITY_TOOLTIP,
  baselineText,
  DEFAULT_RUN_LIST,
  RunGroupKey,
  RunListOptions,
  RunSection,
  runGroup,
  runSections,
  pauseText,
  bestMetric,
  etaText,
  gpuCard,
  gpuSection,
  runRow,
  temperatureLevel
} from '../src/view_state';
import { gpu, gpusReply, run } from './fixtures';

describe('GPU cards', () => {
  it('shows utilisation, memory, temperature against slowdown, and power', () => {
    const card = gpuCard(gpu());
    const text = Object.fromEntries(card.meters.map(m => [m.label, m.text]));
    expect(text).toEqual({
      Utilisation: '87 %',
      Memory: '40.0 / 80.0 GiB',
      Temperature: '60 °C / slowdown 87 °C',
      Power: '350 / 700 W'
    });
    expect(card.level).toBe('ok');
    expect(card.title).toBe('GPU 0');
  });

  it.each([
    [60, 'ok'],
    [82, 'warn'],
    [87, 'alarm'],
    [95, 'alarm']
  ] as const)('temperature %d °C against slowdown 87 °C is %s', (t, level) => {
    expect(temperatureLevel(t, 87, 5)).toBe(level);
    expect(gpuCard(gpu({ temperature: t })).level).toBe(level);
  });

  it('reads the thermal margin when the GPU has one, the thresholds in the tooltip', () => {
    const card = gpuCard(gpu({ temperature: 81, temperature_margin: 6, temperature_max: 87 }));
    const temp = card.meters.find(m => m.label === 'Temperature')!;
    expect(temp.text).toBe('81 °C · 6 °C to slowdown');
    expect(temp.tooltip).toBe('slowdown 87 °C · shutdown 92 °C · max operating 87 °C');
    expect(temp.level).toBe('ok');
    const hot = gpuCard(gpu({ temperature: 86, temperature_margin: 1 }));
    expect(hot.meters.find(m => m.label === 'Temperature')!.level).toBe('warn'); // 1 ≤ 5
    const past = gpuCard(gpu({ temperature: 90, temperature_margin: -3 }));
    expect(past.meters.find(m => m.label === 'Temperature')!.text).toBe(
      '90 °C · 3 °C past slowdown'
    );
    expect(past.level).toBe('alarm');
    // the margin wins: an H100 at 85 °C with 2 °C of margin is warm, whatever slowdown says
    expect(temperatureLevel(85, 89, 5, 2)).toBe('warn');
    expect(temperatureLevel(60, null, 5, 0)).toBe('alarm');
  });

  it('shows GPM activity beside utilisation and explains both in the tooltip', () => {
    const busy = gpuCard(gpu({ sm_activity: 62.4, tensor_activity: 41, memory_bandwidth: 35 }));
    const util = busy.meters.find(m => m.label === 'Utilisation')!;
    expect(util.text).toBe('87 % · SM 62 % · tensor 41 % · DRAM 35 %');
    expect(util.tooltip).toBe(ACTIVITY_TOOLTIP);
    expect(ACTIVITY_TOOLTIP).toContain('any kernel ran');
    const older = gpuCard(gpu()).meters.find(m => m.label === 'Utilisation')!;
    expect(older.text).toBe('87 %'); // no GPM: simply absent
  });

  it('missing metrics read N/A, one at a time', () => {
    const card = gpuCard(gpu({ power_draw: null, temperature_slowdown: null }));
    const power = card.meters.find(m => m.label === 'Power')!;
    const temp = card.meters.find(m => m.label === 'Temperature')!;
    expect(power.text).toBe('N/A');
    expect(temp.text).toBe('60 °C');
    expect(card.meters.find(m => m.label === 'Utilisation')!.text).toBe('87 %');
  });

  it('lists active throttle reasons and colours thermal ones as alarms', () => {
    const idle = gpuCard(gpu({ clock_reasons: ['gpu_idle'] }));
    expect(idle.throttle).toEqual([]);
    const power = gpuCard(gpu({ clock_reasons: ['sw_power_cap'] }));
    expect(power.throttle).toEqual(['sw power cap']);
    expect(power.level).toBe('warn');
    const hot = gpuCard(gpu({ clock_reasons: ['gpu_idle', 'hw_thermal_slowdown'] }));
    expect(hot.throttle).toEqual(['hw thermal slowdown']);
    expect(hot.level).toBe('alarm');
  });

  it('a lost GPU is an alarm with no meters', () => {
    const card = gpuCard(gpu({ lost: true }));
    expect(card.level).toBe('alarm');
    expect(card.meters).toEqual([]);
  });

  it('falls back to a host card when there is no GPU', () => {
    const section = gpuSection(
      gpusReply({
        gpus: [],
        available: false,
        reason: 'NVML library not found',
        host: {
          time: 1,
          cpu_percent: 12.4,
          memory_used: 8 * 1024 ** 3,
          memory_total: 32 * 1024 ** 3
        }
      })
    );
    expect(section.gpuCards).toEqual([]);
    expect(section.gpuMessage).toBe('No GPU: NVML library not found');
    expect(section.hostCard!.meters.map(m => m.text)).toEqual(['12 %', '8.0 / 32.0 GiB']);
  });

  it('does not show the host card when GPUs are present', () => {
    const section = gpuSection(
      gpusReply({ host: { time: 1, cpu_percent: 5, memory_used: 1, memory_total: 2 } })
    );
    expect(section.hostCard).toBeNull();
    expect(section.gpuCards).toHaveLength(1);
  });
});

describe('run rows', () => {
  it("shows progress and status.json's ETA text verbatim, as the dashboard words it", () => {
    const row = runRow(run(), 1000);
    expect(row.progressText).toBe('25 / 100 steps (25 %)');
    expect(row.progress).toBe(0.25);
    expect(row.etaText).toBe('ETA ≈ 5 min (4 min – 6 min) · done ≈ 14:05');
    // the sidebar words nothing itself: whatever the run wrote is what it shows, at any time
    for (const words of [
      '≈ 2 min 45 s (2 min 30 s – 3 min) · done ≈ 14:05 · adjusting…',
      'warming up… ≤ 19 s',
      'something the sidebar never wrote'
    ]) {
      expect(runRow(run({ eta_text: words }), 1000).etaText).toBe(`ETA ${words}`);
      expect(runRow(run({ eta_text: words }), 99999).etaText).toBe(`ETA ${words}`);
    }
  });

  it('says "estimating" before the first estimate', () => {
    expect(runRow(run({ eta: null, eta_text: null }), 1000).etaText).toBe('ETA: estimating…');
    expect(runRow(run({ eta: null, eta_text: '' }), 1000).etaText).toBe('ETA: estimating…');
  });

  it('offers Stop and Pause while training, Resume while paused, nothing when final', () => {
    expect(runRow(run(), 0).actions).toEqual({ stop: true, pause: true, resume: false });
    expect(runRow(run({ status: 'paused', pause_reason: 'user' }), 0).actions).toEqual({
      stop: true,
      pause: false,
      resume: true
    });
    expect(runRow(run({ status: 'stopped', finished_at: 1000 }), 0).actions).toEqual({
      stop: false,
      pause: false,
      resume: false
    });
    expect(runRow(run({ status: 'interrupted', alive: false }), 0).level).toBe('alarm');
  });

  it('disables a button while its request is pending', () => {
    expect(runRow(run(), 0, new Set(['stop'])).actions.stop).toBe(false);
  });

  it("names a finished run and how long it took, in the run's words", () => {
    const ended = run({ status: 'stopped', finished_at: 1020, started_at: 900 });
    expect(runRow({ ...ended, took_text: 'took 2 min' }, 2000).etaText).toBe(
      'stopped · took 2 min'
    );
    expect(runRow({ ...ended, took_text: null }, 2000).etaText).toBe('stopped');
  });

  it('keeps the run name as given (the panel sets it as text)', () => {
    expect(runRow(run({ name: '<img src=x onerror=alert(1)>' }), 0).name).toBe(
      '<img src=x onerror=alert(1)>'
    );
  });

  it('shows alarms by message', () => {
    const alarm = {
      rule: 'temperature',
      device: 0,
      value: 84,
      threshold: 82,
      action: 'warn',
      message: 'GPU 0 at 84 °C',
      time: 1
    };
    const row = runRow(run({ alarms: [alarm] }), 0);
    expect(row.alarmText).toBe('GPU 0 at 84 °C');
    expect(row.level).toBe('warn');
    const ended = runRow(run({ alarms: [alarm], status: 'stopped' }), 0);
    expect(ended.alarmText).toBe('');
    expect(ended.level).toBe('ok');
  });
});

describe('best metric', () => {
  it('prefers validation, combined, loss', () => {
    const metrics = {
      training: { combined: { loss: 0.1 } },
      validation: { label: { accuracy: 0.91 }, combined: { loss: 0.3125 } }
    };
    expect(bestMetric(metrics)!.text).toBe('best validation combined loss 0.3125');
  });

  it('falls back to the first feature and metric', () => {
    expect(bestMetric({ test: { label: { accuracy: 0.9 } } })!.text).toBe(
      'best test label accuracy 0.9'
    );
    expect(bestMetric({})).toBeNull();
  });
});

describe('baseline beside the best metric', () => {
  const withBaseline = run({
    status: 'completed',
    best_metrics: {
      test: { churn: { accuracy: 0.945, loss: 0.18 } },
      validation: { churn: { accuracy: 0.95 } }
    },
    baseline: { test: { churn: { accuracy: 0.865 } }, validation: { churn: { accuracy: 0.86 } } },
    baseline_predictors: { churn: "always 'no'" }
  });

  it('puts the baseline on the same split as the metric', () => {
    expect(baselineText(withBaseline)).toBe("test churn accuracy 0.945 · always 'no': 0.865");
    expect(runRow(withBaseline, 1000).bestMetricText).toBe(
      "best: test churn accuracy 0.945 · always 'no': 0.865"
    );
  });

  it('falls back to the plain best metric without a baseline', () => {
    const plain = run({ best_metrics: { validation: { combined: { loss: 0.25 } } } });
    expect(baselineText(plain)).toBeNull();
    expect(runRow(plain, 1000).bestMetricText).toBe('best validation combined loss 0.25');
  });
});

describe('formatting', () => {
  it('formats numbers with 4 significant digits', () => {
    expect(formatNumber(0.123456)).toBe('0.1235');
    expect(formatNumber(null)).toBe('N/A');
    expect(formatNumber(1234567)).toBe('1.23e+6');
  });
});

describe('where a run comes from', () => {
  it('shows the notebook file name and keeps the full path for the tooltip', () => {
    const row = runRow(run({ notebook: '/home/me/projects/train.ipynb' }), 0);
    expect(row.where).toBe('train.ipynb · process 42');
    expect(row.whereTitle).toBe('/home/me/projects/train.ipynb');
  });

  it('falls back to the kernel id', () => {
    expect(runRow(run({ notebook: null, kernel: 'abc' }), 0).where).toBe('kernel abc · process 42');
  });
});

describe('run list', () => {
  const runs = [
    run({ run_id: 'c', name: 'old', notebook: 'b.ipynb', status: 'completed', started_at: 100 }),
    run({ run_id: 'b', name: 'other', notebook: 'b.ipynb', status: 'training', started_at: 300 }),
    run({ run_id: 'a', name: 'mine', notebook: 'a.ipynb', status: 'training', started_at: 400 }),
    run({
      run_id: 'd',
      name: 'dead',
      notebook: 'a.ipynb',
      status: 'interrupted',
      alive: false,
      started_at: 50
    }),
    run({ run_id: 'e', name: 'newest', notebook: 'a.ipynb', status: 'failed', started_at: 500 }),
    // other processes: a live script, a live run of another server's kernel, finished ones
    run({ run_id: 's1', notebook: null, kernel: null, this_server: false, started_at: 10 }),
    run({ run_id: 's2', kernel: 'k-9', this_server: false, started_at: 20 }),
    ...[1, 2, 3, 4, 5].map(i =>
      run({
        run_id: `f${i}`,
        notebook: null,
        kernel: null,
        this_server: false,
        status: 'completed',
        started_at: i
      })
    )
  ];
  const options = (more: Partial<RunListOptions> = {}): RunListOptions => ({
    ...DEFAULT_RUN_LIST,
    ...more
  });
  const ids = (more: Partial<RunListOptions> = {}) =>
    runSections([...runs], options(more)).map(s => [s.key, s.runs.map(r => r.run_id), s.hidden]);

  it("lists this server's runs first, live first then newest first, others' live runs after", () => {
    expect(DEFAULT_RUN_LIST.filter).toBe('server');
    expect(ids()).toEqual([
      ['server', ['a', 'b', 'e', 'c', 'd'], 0],
      ['other-live', ['s2', 's1'], 0]
    ]);
    // the order does not depend on the server's
    expect(runSections([...runs].reverse(), options())).toEqual(runSections([...runs], options()));
  });

  it('lists the finished runs of other processes only under "all", newest first, limited', () => {
    expect(ids({ filter: 'all', finishedLimit: 3 })).toEqual([
      ['server', ['a', 'b', 'e', 'c', 'd'], 0],
      ['other-live', ['s2', 's1'], 0],
      ['other-finished', ['f5', 'f4', 'f3'], 2]
    ]);
    // the limit counts this server's finished runs too, never its live ones
    expect(ids({ finishedLimit: 1 })[0]).toEqual(['server', ['a', 'b', 'e'], 2]);
    expect(ids({ finishedLimit: 0 })[0]).toEqual(['server', ['a', 'b'], 3]);
  });

  it('filters live / this notebook and hides finished runs', () => {
    expect(ids({ filter: 'live' })).toEqual([
      ['server', ['a', 'b'], 0],
      ['other-live', ['s2', 's1'], 0]
    ]);
    expect(ids({ filter: 'notebook', notebook: 'b.ipynb' })).toEqual([['notebook', ['b', 'c'], 0]]);
    expect(ids({ filter: 'notebook', notebook: 'b.ipynb', hideFinished: true })).toEqual([
      ['notebook', ['b'], 0]
    ]);
    expect(ids({ filter: 'all', hideFinished: true })).toEqual([
      ['server', ['a', 'b'], 0],
      ['other-live', ['s2', 's1'], 0]
    ]);
    expect(ids({ filter: 'notebook' })).toEqual([]);
    const absolute = [run({ run_id: 'x', notebook: '/srv/root/work/a.ipynb' })];
    const notebook = (path: string) =>
      runSections(absolute, options({ filter: 'notebook', notebook: path })).length;
    expect(notebook('work/a.ipynb')).toBe(1);
    expect(notebook('a.ipynb')).toBe(1);
    expect(notebook('b/a.ipynb')).toBe(0);
  });

  it('heads each group with its count and says how many runs the limit left out', () => {
    const [server, others, finished] = runSections(
      [...runs],
      options({ filter: 'all', finishedLimit: 1 })
    );
    const rows = (section: RunSection) => section.runs.map(r => runRow(r, 1000));
    const collapsed = new Set<RunGroupKey>(['other-live']);
    const head = runGroup(server, rows(server), collapsed);
    expect(head.heading).toBe("this server's notebooks (3)");
    expect(head.hiddenText).toBe('2 older finished runs not listed');
    expect(head.collapsed).toBe(false);
    expect(runGroup(others, rows(others), collapsed).collapsed).toBe(true);
    expect(runGroup(finished, rows(finished), collapsed).hiddenText).toBe(
      '4 older finished runs not listed'
    );
  });

  it('names the process and notebook of every live run', () => {
    const [, others] = runSections([...runs], options());
    expect(others.runs.map(r => runRow(r, 1000).where)).toEqual([
      'train.ipynb · process 42',
      'a script or the CLI · process 42'
    ]);
    expect(others.runs.map(r => runRow(r, 1000).actions.stop)).toEqual([true, true]);
    expect(runRow(runs[0], 1000).where).toBe('b.ipynb'); // finished: no process any more
  });
});

describe('throttled time and deadlines', () => {
  it('says what throttling cost and how the deadline looks, and warns when late', () => {
    const hot = run({
      status: 'training',
      throttle_text: 'throttled 12 % of the run (thermal 12 %)',
      gpu_slowdown: 'GPU 0 throttled 40 % of the last minute (thermal 40 %)',
      deadline: {
        at: 7200,
        label: 'your deadline',
        action: 'checkpoint',
        verdict: 'late',
        text: 'likely finishes 20 min after your deadline (02:00)'
      }
    });
    const row = runRow(hot, 1000);
    expect(row.throttleText).toBe(
      'GPU 0 throttled 40 % of the last minute (thermal 40 %); throttled 12 % of the run (thermal 12 %)'
    );
    expect(row.deadlineText).toBe('likely finishes 20 min after your deadline (02:00)');
    expect(row.level).toBe('warn');
    const fine = runRow(
      run({
        status: 'training',
        deadline: { ...hot.deadline!, verdict: 'ok', text: 'finishes before your deadline' }
      }),
      1000
    );
    expect(fine.level).toBe('ok');
    const done = runRow(run({ ...hot, status: 'completed', gpu_slowdown: '' }), 1000);
    expect(done.deadlineText).toBe(''); // an ended run has no deadline to meet
    expect(done.throttleText).toBe('throttled 12 % of the run (thermal 12 %)');
  });
});

describe('pause in words', () => {
  it("shows the run's own wording, never the rule", () => {
    const alarm = {
      rule: 'temperature>=slowdown-5',
      device: 0,
      value: 88,
      threshold: 83,
      action: 'pause',
      message: 'GPU 0 at 88°C (alarm at 83°C): pause',
      time: 1
    };
    const words = 'paused: GPU 0 at 88 °C, 4 °C under its slowdown point; resumes below 78 °C';
    const paused = run({
      status: 'paused',
      pause_reason: 'alarm:temperature>=slowdown-5',
      alarms: [alarm],
      pause_text: words
    });
    expect(pauseText(paused)).toBe(words);
    expect(etaText(paused)).toBe(words);
    // a status.json from before pause_text: no rule text either
    const old = run({
      status: 'paused',
      pause_reason: 'alarm:temperature>=slowdown-5',
      alarms: [alarm],
      pause_text: null
    });
    expect(etaText(old)).toBe('paused');
  });
});

describe('data phase in words', () => {
  it('shows how far the data is before the first step, and the ETA after', () => {
    const words = 'feature 2 of 4 (total_day_minutes) · 3,500 rows';
    expect(etaText(run({ status: 'preprocessing', phase_detail: words, eta: null }))).toBe(words);
    // an older status.json without the field still reads as before
    expect(
      etaText(run({ status: 'preprocessing', phase_detail: null, eta: null, eta_text: null }))
    ).toBe('ETA: estimating…');
    // once training, the ETA wins over a stale detail
    expect(etaText(run({ status: 'training', phase_detail: words }))).not.toBe(words);
  });
});

describe('alarms and counts in words', () => {
  it("shows the run's alarm lines, none once it has ended, and groups big counts", () => {
    const alarm = {
      rule: 'temperature>=slowdown-5',
      device: 0,
      value: 86,
      threshold: 82,
      action: 'warn',
      message: 'GPU 0 at 86°C (alarm at 82°C): warn',
      time: 1
    };
    const words = ['GPU 0 at 86°C (alarm at 82°C) · warning only'];
    expect(runRow(run({ alarms: [alarm], alarm_texts: words }), 1000).alarmText).toBe(words[0]);
    expect(runRow(run({ alarms: [alarm], alarm_texts: null }), 1000).alarmText).toBe(alarm.message);
    expect(
      runRow(run({ status: 'completed', alarms: [alarm], alarm_texts: words }), 1000).alarmText
    ).toBe('');
    expect(runRow(run({ step: 2100, total_steps: 52500 }), 1000).progressText).toBe(
      '2,100 / 52,500 steps (4 %)'
    );
  });
});

describe('early stopping', () => {
  const early = {
    patience: 5,
    metric: 'accuracy',
    upper_bound: 11000,
    likely_step: 2600,
    earliest_step: 1500,
    likely_remaining_s: 40,
    text: 'at most 11,000 steps (early stopping); likely stops near step 2,600 (not before 1,500)'
  };

  it("shows the run's bound and forecast as it words them, and marks the likely stop", () => {
    const bound = '≤ 5 min (4 min – 6 min) · done ≈ 14:05';
    const summary = run({
      total_steps: 11000,
      step: 1000,
      progress: 1000 / 11000,
      early_stop: early,
      eta_text: bound
    });
    const row = runRow(summary, 1000);
    expect(row.earlyStopText).toBe(early.text);
    expect(row.etaText).toBe(`ETA ${bound}`);
    expect(row.likelyStop).toBeCloseTo(2600 / 11000, 6);
  });

  it('without early stopping the ETA is not a bound', () => {
    const row = runRow(run(), 1000);
    expect(row.earlyStopText).toBe('');
    expect(row.etaText).toMatch(/^ETA ≈ 5 min/);
    expect(row.likelyStop).toBeNull();
  });

  it('a forecast that runs to the end marks nothing', () => {
    const toEnd = { ...early, likely_step: 11000, text: '≤ 11,000 steps · likely runs to the end' };
    expect(runRow(run({ early_stop: toEnd }), 1000).likelyStop).toBeNull();
  });

  it('an ended run says why it ended; an interrupted one does not repeat a dead forecast', () => {
    const reason = 'stopped early: no validation improvement in 5 evaluations; best at step 2,600';
    const done = run({
      status: 'completed',
      end_reason: reason,
      early_stop: { ...early, text: reason }
    });
    expect(runRow(done, 1000).earlyStopText).toBe(reason);
    expect(runRow(done, 1000).likelyStop).toBeNull();
    const dead = run({ status: 'interrupted', alive: false, early_stop: early });
    expect(runRow(dead, 1000).earlyStopText).toBe('');
  });
});
