"""The token-aware ETA on recorded language-model traces: ``python -m benchmarks.eta.llm``.

Replays each trace of ``traces/llm/`` (``record_llm.py``: a plain transformers loop on
this machine's CPU) three ways: ours as a run sends it (steps with their padded tokens, a
``EpochPlanned`` per epoch: the token-aware ETA), ours with the tokens stripped (the
step-count ETA every ordinary run gets), and the peers' replicas (``peers.py``; the
"average since start" of fastprogress and the HF notebook bar / Keras among them). Prints
the MAPE of the remaining time at 10/25/50/75 % of each run and pooled per kind of trace,
and the ratios against the goals:

* where lengths vary (``varied``, ``accum``): step-count MAPE / token-aware MAPE >= 2;
* where they do not (``fixed``): the token-aware MAPE no worse than the step-count one.

``grouped`` traces (rows ordered by length within groups, as ``group_by_length`` does)
are printed apart: no goal, they show the case where counting steps fails most. The MAPE
over every 5 % from 10 to 90 % (``dense``) is printed too, for information: four points
per run make a noisy figure on a handful of traces.

``--synthetic``: the same comparison on generated runs whose step time is known to be
``(a + b x padded tokens) x noise`` (batches of 4 rows of log-normal lengths, as the
recorded traces; AR(1) noise on log time of 3 % "GPU-like" and 10 %; a compile spike and a
warm-up ramp; an evaluation after each epoch), 20 seeds each: what the method gives when the
machine's own noise does not swamp the tokens, as this shared CPU's did.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import statistics
import sys
from pathlib import Path

from benchmarks.eta.peers import PEERS
from benchmarks.eta.replay import COVER, OURS, Scores, replay
from benchmarks.eta.scenarios import Trace
from benchmarks.eta.traces import TRACES_DIR, load_traces
from ludwig_nb.core import events as ev

LLM_TRACES = TRACES_DIR / "llm"
STEPS = "step-count"
PEER_NAMES = tuple(cls.name for cls in PEERS)
SHORT = {
    OURS: "tokens",
    STEPS: "steps",
    "tqdm": "tqdm",
    "fastprogress": "fastpr",
    "hf_notebook/keras": "hf/keras",
    "rich": "rich",
    "detectron2": "d2",
    "composer": "composer",
}
KINDS = ("varied", "fixed", "grouped")
GOALS = {"varied": 2.0, "fixed": 1.0}


def strip_tokens(trace: Trace) -> Trace:
    """The same run as an ordinary run sends it: no token counts, no token plan."""
    events = tuple(
        dataclasses.replace(e, tokens=None, padded_tokens=None)
        if isinstance(e, ev.StepFinished)
        else e
        for e in trace.events
        if not isinstance(e, ev.EpochPlanned)
    )
    return dataclasses.replace(trace, events=events)


def kind_of(path: Path) -> str:
    """``varied``, ``fixed`` or ``grouped``, from the trace's meta file (else its name)."""
    meta = path.with_suffix(".meta.json")
    if meta.exists():
        return str(json.loads(meta.read_text(encoding="utf-8"))["recipe"]["padding"])
    return next((k for k in KINDS if k in path.stem), "varied")


def score(trace: Trace) -> Scores:
    """Ours with tokens (``OURS``), ours without (``STEPS``) and the peers.

    ``post`` is used for the dense MAPE (every 5 % from 10 to 90 %) of ours both ways.
    """
    scores = replay(trace)
    plain = replay(strip_tokens(trace))
    scores.ape[STEPS] = plain.ape[OURS]
    scores.post = {OURS: _dense(trace), STEPS: _dense(strip_tokens(trace))}
    return scores


def _dense(trace: Trace) -> list[float]:
    """Our absolute percentage errors at every 5 % from 10 to 90 % of the run."""
    from ludwig_nb.core.eta import EtaTracker

    total = max(e.step for e in trace.events if isinstance(e, ev.StepFinished)) + 1
    at = {max(1, math.ceil(f * total)) for f in COVER}
    end = trace.events[-1].time
    tracker, out = EtaTracker(), []
    for event in trace.events:
        tracker.observe(event)
        if isinstance(event, ev.StepFinished) and event.step + 1 in at:
            mine = tracker.estimate(event.time)
            truth = end - event.time
            out.append(1.0 if mine is None or truth <= 0 else abs(mine.remaining_s / truth - 1))
    return out


def synthetic(seed: int, noise: float, share: float, steps_per_epoch: int = 250) -> Trace:
    """A generated run: step time ``(a + b x padded tokens)`` x AR(1) log-normal noise.

    ``share``: the per-token part of a step of mean tokens; seconds are those of a small GPU
    fine-tune (0.2 s for a mean step).
    """
    rng = random.Random(f"llm:{seed}:{noise}:{share}")
    rows = 4 * steps_per_epoch
    lengths = [min(512, max(8, int(math.exp(rng.gauss(4.55, 0.75))))) for _ in range(rows)]
    mean_padded = 4 * statistics.fmean(max(rng.sample(lengths, 4)) for _ in range(2000))
    b = 0.2 * share / mean_padded
    a = 0.2 * (1.0 - share)
    epochs = 3
    total = epochs * steps_per_epoch
    info = ev.ScheduleInfo(
        total_steps=total,
        steps_per_epoch=steps_per_epoch,
        epochs=epochs,
        epoch_starts=tuple(range(0, total, steps_per_epoch)),
        evaluations_after=tuple(range(steps_per_epoch - 1, total, steps_per_epoch)),
        batch_size=4,
        evaluation_batches=20,
    )
    t = 1.79e9
    events: list[ev.Event] = [ev.RunStarted(t, "synthetic", "synthetic", "synthetic", "gpu", info)]
    level, step = 0.0, 0
    for epoch in range(epochs):
        rng.shuffle(lengths)
        padded = [4 * max(lengths[i : i + 4]) for i in range(0, rows, 4)]
        events.append(ev.EpochPlanned(t, epoch=epoch, first_step=step, padded_tokens=tuple(padded)))
        for tokens in padded:
            level = 0.5 * level + rng.gauss(0.0, noise * math.sqrt(0.75))
            d = (a + b * tokens) * math.exp(level)
            d *= 8.0 if step == 0 else 1.0 + 0.5 * max(0.0, 1.0 - step / 30.0)
            events.append(ev.StepFinished(t + d, step, epoch, t, 4, 1.0, padded_tokens=tokens))
            t, step = t + d, step + 1
        cost = 20 * 0.2 * 0.4 * (1.5 if epoch == 0 else 1.0) * rng.uniform(0.95, 1.05)
        events.append(ev.EvaluationFinished(t + cost, step - 1, epoch, t, {}))
        t += cost
    return Trace(name=f"synthetic-{seed}", events=tuple(events))


def _synthetic_report(seeds: int) -> None:
    print(f"\nsynthetic runs ({seeds} seeds each): MAPE at 10/25/50/75 % (%)")
    heads = f"{'tokens':>7s} {'steps':>7s} {'hf/keras':>8s}  {'steps/tok':>9s}"
    print(f"{'noise, token share':26s} {heads}")
    for noise in (0.03, 0.10):
        for share in (0.9, 0.6):
            pooled = Scores()
            for seed in range(seeds):
                pooled.extend(score(synthetic(seed, noise, share)))
            tok, steps = _pct(pooled.ape[OURS]), _pct(pooled.ape[STEPS])
            peer = _pct(pooled.ape["hf_notebook/keras"])
            label = f"{noise:.0%} noise, share {share:.1f}"
            print(f"{label:26s} {tok:7.1f} {steps:7.1f} {peer:8.1f}  {steps / tok:9.2f}")


def _pct(values: list[float]) -> float:
    return 100.0 * statistics.fmean(values) if values else float("nan")


def _row(label: str, s: Scores) -> tuple[float, float]:
    names = (OURS, STEPS, *PEER_NAMES)
    mape = {n: _pct(s.ape.get(n, [])) for n in names}
    best_peer = min(mape[n] for n in PEER_NAMES)
    cells = " ".join(f"{mape[n]:7.1f}" for n in names)
    ratio = mape[STEPS] / mape[OURS] if mape[OURS] > 0 else float("inf")
    peer_ratio = best_peer / mape[OURS] if mape[OURS] > 0 else float("inf")
    print(f"{label:26s} {cells}  {ratio:6.2f} {peer_ratio:6.2f}")
    return mape[OURS], mape[STEPS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", default=str(LLM_TRACES), help="folder of events.ndjson")
    parser.add_argument("--synthetic", action="store_true", help="also generated runs")
    parser.add_argument("--seeds", type=int, default=20, help="of each synthetic setting")
    args = parser.parse_args(argv)
    folder = Path(args.traces)
    traces = load_traces(folder)
    if not traces:
        print(f"no traces in {folder}: record them with python -m benchmarks.eta.record_llm")
        return 1
    print("MAPE of the remaining time at 10/25/50/75 % (%); steps/tok = step-count MAPE /")
    print("token-aware MAPE; peer/tok = best peer's MAPE / token-aware MAPE")
    header = " ".join(f"{SHORT[n]:>7s}" for n in (OURS, STEPS, *PEER_NAMES))
    print(f"{'trace':26s} {header}  {'steps/tok':>6s} {'peer/tok':>6s}")
    pooled = {k: Scores() for k in KINDS}
    for trace in traces:
        s = score(trace)
        _row(trace.name, s)
        pooled[kind_of(folder / f"{trace.name}.ndjson")].extend(s)
    print("-" * 112)
    ok = True
    results = []
    for kind in KINDS:
        if not pooled[kind].ape:
            continue
        tok, steps = _row(f"{kind} (pooled)", pooled[kind])
        dense_tok, dense_steps = _pct(pooled[kind].post[OURS]), _pct(pooled[kind].post[STEPS])
        print(
            f"{'':26s} dense (every 5 %): token-aware {dense_tok:.1f} %, step-count "
            f"{dense_steps:.1f} %, ratio {dense_steps / dense_tok:.2f}"
        )
        if kind in GOALS:
            ratio = steps / tok if tok > 0 else float("inf")
            passed = ratio >= GOALS[kind]
            ok = ok and passed
            results.append(
                f"{'PASS' if passed else 'FAIL'}  {kind}: step-count {steps:.1f} % / token-aware "
                f"{tok:.1f} % = {ratio:.2f} (goal >= {GOALS[kind]:g})"
            )
    if args.synthetic:
        _synthetic_report(args.seeds)
    print()
    print("\n".join(results))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
