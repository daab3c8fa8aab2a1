"""Pre-flight prediction vs the actual run time, for configs of different shapes.

    python benchmarks/preflight.py [--quick]

Early stopping is off in these configs: with it the prediction is an upper bound (the
plan without early stopping) and the comparison would measure when the model converged.

For each config: ``ludwig_nb.estimate`` (a short pilot), then the real run; prints the
predicted total with its 80 % interval, the actual time, the error and whether the actual
time fell inside the interval. The full runs train on the bundled demo datasets.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from pathlib import Path

import pandas as pd

import ludwig_nb
from ludwig_nb.core.eta.constants import PILOT_RELATIVE_SD
from ludwig_nb.data import demo_dataset

CONFIGS = {
    "churn-mlp (tabular, binary)": (
        "churn",
        """
input_features:
  - {name: state, type: category}
  - {name: total_day_minutes, type: number}
  - {name: total_eve_minutes, type: number}
  - {name: number_customer_service_calls, type: number}
  - {name: international_plan, type: binary}
output_features:
  - {name: churn, type: binary}
combiner: {type: concat, num_fc_layers: 2, output_size: 64}
trainer: {epochs: EPOCHS, batch_size: 32, early_stop: -1, eval_batch_size: 1024}
""",
    ),
    "reviews-cnn (text, category)": (
        "reviews",
        """
input_features:
  - name: review
    type: text
    encoder: {type: parallel_cnn, embedding_size: 32, num_filters: 32, output_size: 64}
    preprocessing: {max_sequence_length: 96, most_common: 4000}
output_features:
  - {name: score, type: category}
trainer: {epochs: EPOCHS, batch_size: 64, early_stop: -1, eval_batch_size: 512}
""",
    ),
    "cars-regression (small, many evals)": (
        "cars",
        """
input_features:
  - {name: Cylinders, type: number}
  - {name: Horsepower, type: number}
  - {name: Weight_in_lbs, type: number}
  - {name: Year, type: number}
  - {name: Origin, type: category}
output_features:
  - {name: Miles_per_Gallon, type: number}
combiner: {type: concat, num_fc_layers: 1, output_size: 32}
trainer:
  {epochs: EPOCHS, batch_size: 8, checkpoints_per_epoch: 2, early_stop: -1, eval_batch_size: 256}
""",
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer epochs")
    args = parser.parse_args()
    epochs = (
        {"churn": 3, "reviews": 2, "cars": 15}
        if args.quick
        else {"churn": 8, "reviews": 4, "cars": 40}
    )
    print(f"{'config':38s} {'predicted':>10s} {'interval':>17s} {'actual':>8s} {'error':>7s} in")
    errors = []
    inside_count = 0
    log_errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, (demo, text) in CONFIGS.items():
            config = text.replace("EPOCHS", str(epochs[demo]))
            df = pd.read_csv(demo_dataset(demo))
            prediction = ludwig_nb.estimate(config, df)
            start = time.time()
            run = ludwig_nb.train(
                config,
                df,
                name=demo,
                results_dir=tmp,
                wait=True,
                registry_dir=Path(tmp) / "registry",
            )
            actual = run.state.finished_at - run.state.started_at
            assert run.status == "completed", run.state.error
            error = (prediction.total_s - actual) / actual
            errors.append(abs(error))
            log_errors.append(math.log(prediction.total_s / actual))
            inside = prediction.low_s <= actual <= prediction.high_s
            inside_count += inside
            print(
                f"{label:38s} {prediction.total_s:9.1f}s "
                f"{prediction.low_s:7.1f}–{prediction.high_s:7.1f}s {actual:7.1f}s "
                f"{error:+7.1%} {'yes' if inside else 'no'}   (wall {time.time() - start:.1f}s)"
            )
    print(f"mean absolute error {sum(errors) / len(errors):.1%}")
    rms = math.sqrt(sum(e * e for e in log_errors) / len(log_errors))
    print(
        f"inside the 80 % interval: {inside_count} of {len(errors)} (goal: about 80 %); "
        f"the errors' relative sd {rms:.2f} (ln predicted/actual) against the pilot's "
        f"PILOT_RELATIVE_SD {PILOT_RELATIVE_SD:.2f}; load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
