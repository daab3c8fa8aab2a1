"""Write the example notebooks in notebooks/ from the cell sources below.

    python scripts/build/notebooks.py            # write the .ipynb files (no outputs)
    python scripts/build/execute_notebooks.py    # run them and store reference outputs

The notebooks are tested twice (tests/notebooks/): with nbclient, which fails on a magic's
UsageError, and with nbval against their stored outputs (notebooks/nbval.cfg sanitises
what legitimately varies; cells whose output is a measurement carry the
``nbval-ignore-output`` tag).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[2] / "notebooks"


def md(text: str) -> nbformat.NotebookNode:
    return new_markdown_cell(text.strip())


def code(text: str, ignore: bool = False, raises: bool = False) -> nbformat.NotebookNode:
    tags = (["nbval-ignore-output"] if ignore else []) + (["raises-exception"] if raises else [])
    return new_code_cell(text.strip(), metadata={"tags": tags} if tags else {})


QUICKSTART = [
    md("""
# ludwig_nb quickstart: telecom churn

Train a Ludwig config from a cell. The cell returns at once; the dashboard below it shows
progress, the time-to-completion estimate, loss and metric curves, and GPU (or host) gauges,
while the kernel stays free for other cells.
"""),
    code("%load_ext ludwig_nb"),
    code("""
import pandas as pd
from ludwig_nb.data import demo_dataset

churn_df = pd.read_csv(demo_dataset("churn"))
churn_df.shape
"""),
    md("A config error is reported at the cell's own line, with a suggestion (no traceback):"),
    code(
        """
%%ludwig_config --dataset churn_df --name broken
input_features:
  - {name: total_day_minutes, type: number}
output_features:
  - {name: churn, type: binary}
trainer: {epochs: 2, batch_sise: 64}
""",
        raises=True,
    ),
    md(
        "The real run: 40 epochs of a small MLP, with early stopping after 10 evaluations "
        "without improvement on the validation split."
    ),
    code(
        """
%%ludwig_config --dataset churn_df --name churn
input_features:
  - {name: international_plan, type: binary}
  - {name: voice_mail_plan, type: binary}
  - {name: total_day_minutes, type: number}
  - {name: total_eve_minutes, type: number}
  - {name: total_night_minutes, type: number}
  - {name: total_intl_minutes, type: number}
  - {name: total_intl_calls, type: number}
  - {name: number_customer_service_calls, type: number}
output_features:
  - {name: churn, type: binary}
combiner: {type: concat, num_fc_layers: 2, output_size: 128, dropout: 0.1}
trainer: {epochs: 40, batch_size: 64, learning_rate: 0.002, early_stop: 10, eval_batch_size: 1024}
preprocessing:
  split: {type: stratify, column: churn, probabilities: [0.7, 0.1, 0.2]}
""",
        ignore=True,
    ),
    md("The kernel is free while it trains. Wait for the end, then look at the results:"),
    code("churn.wait().status"),
    code("churn.history.tail(3)", ignore=True),
    md(
        "Score the model on the run's own test split: `churn.splits` holds the rows of each "
        "split exactly as the run cut them (with `churn_df`'s row labels), so these are rows "
        "the model never trained on."
    ),
    code(
        """
test_rows = churn.splits["test"]
test_metrics = churn.model.evaluate(test_rows)
always_no = churn.state.baseline["test"]["churn"]["accuracy"]  # the trivial baseline
round(test_metrics["churn"]["accuracy"], 3), round(always_no, 3)
""",
        ignore=True,
    ),
    code("""
predictions = churn.model.predict(test_rows.head(5))
list(predictions.columns)
"""),
    code("%ludwig_runs", ignore=True),
    md(
        "The notebook's check: the run completed, its test rows are not among its training "
        "rows, and it beats the trivial baseline on them."
    ),
    code("""
assert churn.splits["training"].index.intersection(test_rows.index).empty, "test rows were trained on"
accuracy = test_metrics["churn"]["accuracy"]
assert churn.status == "completed" and accuracy > always_no + 0.05, (churn.status, accuracy, always_no)
"""),
]

TEXT = [
    md("""
# Text classification: food reviews

A `text` input with Ludwig's default `parallel_cnn` encoder against a bag-of-embeddings
`embed` encoder, on 2,500 Amazon fine-food reviews (is the review "great"?).
"""),
    code("%load_ext ludwig_nb"),
    code("""
import pandas as pd
from ludwig_nb.data import demo_dataset

reviews = pd.read_csv(demo_dataset("reviews"))
reviews.score.value_counts().to_dict()
"""),
    code(
        """
%%ludwig_config --dataset reviews --name cnn --wait
input_features:
  - name: review
    type: text
    encoder: {type: parallel_cnn, embedding_size: 32, num_filters: 32, output_size: 64}
    preprocessing: {max_sequence_length: 128, most_common: 5000}
output_features:
  - {name: score, type: category}
trainer: {epochs: 10, batch_size: 64, learning_rate: 0.002, eval_batch_size: 512}
""",
        ignore=True,
    ),
    code(
        """
%%ludwig_config --dataset reviews --name bag --wait
input_features:
  - name: review
    type: text
    encoder: {type: embed, embedding_size: 64}
    preprocessing: {max_sequence_length: 128, most_common: 5000}
output_features:
  - {name: score, type: category}
trainer: {epochs: 10, batch_size: 64, learning_rate: 0.005, eval_batch_size: 512}
""",
        ignore=True,
    ),
    code("cnn.status, bag.status"),
    md(
        "Both runs share the config's seed, so they cut the same splits: score each on the "
        'test split (`run.splits["test"]`, rows neither model trained on), beside always '
        "answering the most frequent score."
    ),
    code(
        """
test_rows = cnn.splits["test"]
always = cnn.state.baseline["test"]["score"]["accuracy"]
{"always the most frequent": round(always, 3)} | {name: round(run.model.evaluate(test_rows)["score"]["accuracy"], 3) for name, run in [("parallel_cnn", cnn), ("embed", bag)]}
""",
        ignore=True,
    ),
    md("Six test reviews drawn at random (not picked), with the true score beside the prediction:"),
    code(
        """
shown = test_rows.sample(6, random_state=0)[["review", "score"]]
shown.assign(predicted=cnn.model.predict(shown)["score_predictions"].to_numpy())
""",
        ignore=True,
    ),
    md(
        "The notebook's check: both runs completed, the test rows were not trained on, and each "
        "run beats always predicting the most frequent score on the test split."
    ),
    code("""
assert cnn.splits["training"].index.intersection(test_rows.index).empty, "test rows were trained on"
for run in (cnn, bag):
    best = run.state.best_metrics["test"]["score"]["accuracy"]
    always = run.state.baseline["test"]["score"]["accuracy"]
    assert run.status == "completed" and best > always, (run.name, run.status, best, always)
"""),
]

GPU = [
    md("""
# GPU watch and temperature alarms

`%gpu_watch` shows the GPUs on their own: utilisation, memory, temperature against the card's
own slowdown threshold, power against its limit, throttle reasons, a timeline and an alarm log.
On a machine without an NVIDIA driver it says why and shows the host CPU/RAM instead.

Below, a **simulated GPU** (its temperature follows the load the run puts on it) lets an alarm
pause a real training run when the card gets hot and resume it once it has cooled, on any machine.
"""),
    code("%load_ext ludwig_nb"),
    code(
        "watch = %gpu_watch --simulate --interval 0.5 --alarm slowdown-5 --action warn", ignore=True
    ),
    code("""
import pandas as pd
from ludwig_nb.data import demo_dataset

cars = pd.read_csv(demo_dataset("cars"))
"""),
    code(
        """
%%ludwig_config --dataset cars --name hot
input_features:
  - {name: Cylinders, type: number}
  - {name: Displacement, type: number}
  - {name: Horsepower, type: number}
  - {name: Weight_in_lbs, type: number}
  - {name: Acceleration, type: number}
  - {name: Year, type: number}
  - {name: Origin, type: category}
output_features:
  - {name: Miles_per_Gallon, type: number}
combiner: {type: concat, num_fc_layers: 2, output_size: 64}
trainer: {epochs: 100000, batch_size: 16, learning_rate: 0.001, early_stop: -1, eval_batch_size: 512}
gpu_watch:
  simulate: demo
  interval: 0.25
  alarms:
    - {metric: temperature, threshold: slowdown-5, clear_below: slowdown-10, consecutive: 2, action: pause}
""",
        ignore=True,
    ),
    md(
        "The run trains until the card crosses 82 °C (slowdown - 5); the alarm pauses it, the "
        "card cools below 77 °C (slowdown - 10) and the run resumes. Wait for that, then stop it:"
    ),
    code("""
import time

deadline = time.monotonic() + 180
while time.monotonic() < deadline and not any(e.type == "resumed" for e in hot.events):
    time.sleep(0.5)
hot.stop()
kinds = [e.type for e in hot.wait().events]
[k for k in kinds if k in ("alarm_raised", "paused", "alarm_cleared", "resumed")][:4]
"""),
    code("hot.status"),
    code("watch.close()", ignore=True),
    md(
        "The notebook's check: the alarm paused the run, the cooled card resumed it, in that "
        "order, and the stop ended it."
    ),
    code("""
order = [k for k in kinds if k in ("alarm_raised", "paused", "alarm_cleared", "resumed")][:4]
assert order == ["alarm_raised", "paused", "alarm_cleared", "resumed"] and hot.status == "stopped", (order, hot.status)
"""),
]

ETA = [
    md("""
# Time to completion, and a pre-flight estimate

`--estimate` runs a short pilot (past warm-up, one evaluation, one checkpoint) and predicts the
whole run's time with an interval and a breakdown, without starting the run.
"""),
    code("%load_ext ludwig_nb"),
    code("""
import pandas as pd
from ludwig_nb.data import demo_dataset

churn_df = pd.read_csv(demo_dataset("churn"))
CONFIG = '''
input_features:
  - {name: international_plan, type: binary}
  - {name: voice_mail_plan, type: binary}
  - {name: total_day_minutes, type: number}
  - {name: total_eve_minutes, type: number}
  - {name: total_intl_minutes, type: number}
  - {name: total_intl_calls, type: number}
  - {name: number_customer_service_calls, type: number}
output_features:
  - {name: churn, type: binary}
combiner: {type: concat, num_fc_layers: 2, output_size: 64}
trainer: {epochs: 30, batch_size: 32, early_stop: -1, eval_batch_size: 1024}
'''
"""),
    code(
        """
import ludwig_nb

prediction = ludwig_nb.estimate(CONFIG, churn_df)
prediction
""",
        ignore=True,
    ),
    code(
        """
run = ludwig_nb.train(CONFIG, churn_df, name="timed", wait=True)
elapsed = run.state.finished_at - run.state.started_at
inside = prediction.low_s <= elapsed <= prediction.high_s
print(
    f"predicted {prediction.total_s:.1f} s ({prediction.low_s:.1f} – {prediction.high_s:.1f} s), "
    f"took {elapsed:.1f} s: error {(prediction.total_s - elapsed) / elapsed:+.0%}, "
    f"{'inside' if inside else 'outside'} the 80 % interval"
)
""",
        ignore=True,
    ),
    code("run.status"),
    md(
        "The notebook's check: the run trained every step the pre-flight planned, and the model "
        "beats the trivial baseline. The time itself is compared above, not asserted: an 80 % "
        "interval misses one run in five by design, and a machine busy with other work slows a "
        "run the pilot did not see."
    ),
    code("""
accuracy = run.state.best_metrics["test"]["churn"]["accuracy"]
always_no = run.state.baseline["test"]["churn"]["accuracy"]
assert run.status == "completed" and run.step == run.total_steps == prediction.schedule.total_steps
assert accuracy > always_no, (accuracy, always_no)
"""),
]

IMAGES = [
    md("""
# Images beside a tabular feature: handwritten digits

An `image` input (Ludwig's default `stacked_cnn` encoder) next to a `number` input, fused by
the concat combiner, trained by the built-in engine offline. The images are scikit-learn's bundled
digits written as PNG files (no download); the CSV lists their paths relative to itself.
"""),
    code("%load_ext ludwig_nb"),
    code("""
import pandas as pd
from ludwig_nb.data.image_datasets import write_digits

csv = write_digits("digits", size=32)  # 1,797 PNG files and digits/digits.csv
table = pd.read_csv(csv)
table.head(3)
"""),
    code(
        """
from PIL import Image

Image.open(csv.parent / table.image[0]).resize((96, 96))
""",
        ignore=True,
    ),
    md(
        "Every image is checked before the run starts (a missing or truncated file is named with "
        "its row). Decoded once, the images stay in memory as bytes; random flips and rotations "
        "apply to the training batches only. The dashboard shows images/s and the share of each "
        "step spent waiting for data."
    ),
    code(
        """
%%ludwig_config --dataset csv --name digits --wait
input_features:
  - name: image
    type: image
    encoder: {type: stacked_cnn, output_size: 64}
    augmentation:
      - {type: random_rotate, degree: 10}
  - {name: ink, type: number}
output_features:
  - {name: label, type: category}
trainer: {epochs: 8, batch_size: 64, learning_rate: 0.002, eval_batch_size: 1024}
""",
        ignore=True,
    ),
    code("digits.status"),
    code(
        """
test = digits.state.best_metrics["test"]["label"]["accuracy"]
always = digits.state.baseline["test"]["label"]["accuracy"]
round(test, 3), round(always, 3)
""",
        ignore=True,
    ),
    md(
        "Predictions take paths the same way (relative to the CSV they come in); here five "
        "rows of the run's test split, which it never trained on:"
    ),
    code("""
new = digits.splits["test"].tail(5).copy()
new["image"] = [str(csv.parent / p) for p in new["image"]]
digits.model.predict(new)[["label_predictions", "label_probability"]].shape
"""),
    code(
        """
timings = digits.model.timings
f"data wait: {100 * timings['data_wait'] / timings['steps']:.1f} % of the training steps"
""",
        ignore=True,
    ),
    md("The notebook's check: the run completed and beats always predicting the most frequent digit."),
    code("""
assert digits.status == "completed" and test > always + 0.3, (digits.status, test, always)
"""),
]

NOTEBOOKS = {
    "01_quickstart.ipynb": QUICKSTART,
    "02_text_classification.ipynb": TEXT,
    "03_gpu_watch_and_alarms.ipynb": GPU,
    "04_eta_and_preflight.ipynb": ETA,
    "06_images.ipynb": IMAGES,
}


def main() -> None:
    ROOT.mkdir(exist_ok=True)
    for name, cells in NOTEBOOKS.items():
        nb = new_notebook(cells=cells)
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        nb.metadata["language_info"] = {"name": "python"}
        nbformat.write(nb, ROOT / name)
        print("wrote", ROOT / name)


if __name__ == "__main__":
    main()
