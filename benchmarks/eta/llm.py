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
are printed apart: no goal, they show the case where counting steps fails most.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from pathlib import Path

from benchmarks.eta.peers import PEERS
from benchmarks.eta.replay import OURS, Scores, replay
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
    """Ours with tokens (``OURS``), ours without (``STEPS``) and the peers."""
    scores = replay(trace)
    plain = replay(strip_tokens(trace))
    scores.ape[STEPS] = plain.ape[OURS]
    return scores


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
        if kind in GOALS:
            ratio = steps / tok if tok > 0 else float("inf")
            passed = ratio >= GOALS[kind]
            ok = ok and passed
            results.append(
                f"{'PASS' if passed else 'FAIL'}  {kind}: step-count {steps:.1f} % / token-aware "
                f"{tok:.1f} % = {ratio:.2f} (goal >= {GOALS[kind]:g})"
            )
    print()
    print("\n".join(results))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
