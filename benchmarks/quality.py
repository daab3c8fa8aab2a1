"""Quality: each demo dataset trained by the built-in engine beside scikit-learn baselines.

Same split for everyone (the engine's seeded split). Prints the test metric of our model,
of a linear model (LogisticRegression / Ridge) and of HistGradientBoosting, and the gap to
the better baseline in points (accuracy x 100, or R² x 100 for regression).

    python benchmarks/quality.py [churn cars reviews]

torch runs on one thread here: these models are small, and on a shared 2-core machine
two OpenMP threads made each step ~20x slower (spinning threads under contention).
"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, r2_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from ludwig_nb.config import load_config
from ludwig_nb.core.control import RunControl
from ludwig_nb.data import demo_config, demo_dataset, split_dataset
from ludwig_nb.engines.base import DEFAULT_SEED, TrainJob
from ludwig_nb.engines.builtin import BuiltinEngine
from ludwig_nb.engines.builtin.preprocessing.pipeline import drop_missing_rows


def _columns(config: dict) -> tuple[list[str], list[str], list[str], str, str]:
    numbers = [f["column"] for f in config["input_features"] if f["type"] == "number"]
    cats = [f["column"] for f in config["input_features"] if f["type"] in ("category", "binary")]
    texts = [f["column"] for f in config["input_features"] if f["type"] == "text"]
    out = config["output_features"][0]
    return numbers, cats, texts, out["column"], out["type"]


def _features(numbers: list[str], cats: list[str], texts: list[str], dense: bool):
    parts = []
    if numbers:
        parts.append(("num", make_pipeline(SimpleImputer(), StandardScaler()), numbers))
    if cats:
        parts.append(("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=not dense), cats))
    for column in texts:
        vec = TfidfVectorizer(max_features=2000 if dense else 20000)
        parts.append((column, vec, column))
    return ColumnTransformer(parts, sparse_threshold=0.0 if dense else 0.3)


def _baselines(config: dict, train: pd.DataFrame, test: pd.DataFrame) -> dict[str, float]:
    numbers, cats, texts, target, kind = _columns(config)
    cols = numbers + cats + texts
    train[cats] = train[cats].astype(str)
    test[cats] = test[cats].astype(str)
    scores = {}
    if kind == "number":
        models = {
            "linear (Ridge)": (Ridge(), False),
            "HistGradientBoosting": (HistGradientBoostingRegressor(random_state=0), True),
        }
    else:
        models = {
            "linear (LogisticRegression)": (LogisticRegression(max_iter=2000), False),
            "HistGradientBoosting": (HistGradientBoostingClassifier(random_state=0), True),
        }
    for name, (model, dense) in models.items():
        pipe = make_pipeline(_features(numbers, cats, texts, dense), model)
        pipe.fit(train[cols], train[target].astype(float if kind == "number" else str))
        pred = pipe.predict(test[cols])
        if kind == "number":
            scores[name] = r2_score(test[target], pred)
        else:
            scores[name] = accuracy_score(test[target].astype(str), pred)
    return scores


def _ours(name: str, config: dict) -> tuple[float, float, int]:
    kind = _columns(config)[4]
    frame = pd.read_csv(demo_dataset(name))
    with tempfile.TemporaryDirectory() as tmp:
        job = TrainJob(config, frame, Path(tmp), "quality", name)
        began = time.perf_counter()
        events: list = []
        model = BuiltinEngine().fit(job, events.append, RunControl())
        seconds = time.perf_counter() - began
    split = split_dataset(frame, config["preprocessing"], DEFAULT_SEED)
    test = drop_missing_rows(config, split["test"])
    metrics = model.evaluate(test)[config["output_features"][0]["name"]]
    value = metrics["r2"] if kind == "number" else metrics["accuracy"]
    steps = sum(1 for e in events if e.type == "step_finished")
    return value, seconds, steps


def main(names: list[str]) -> None:
    import torch

    torch.set_num_threads(1)
    logging.basicConfig(level=logging.WARNING)
    print(f"{'dataset':9} {'metric':9} {'ours':>7} {'linear':>7} {'HGB':>7} {'gap':>6}  train")
    for name in names:
        config = load_config(demo_config(name).read_text()).to_dict()
        frame = pd.read_csv(demo_dataset(name))
        split = split_dataset(frame, config["preprocessing"], DEFAULT_SEED)
        train = drop_missing_rows(config, split["training"])
        test = drop_missing_rows(config, split["test"])
        base = _baselines(config, train.copy(), test.copy())
        ours, seconds, steps = _ours(name, config)
        metric = "r2" if _columns(config)[4] == "number" else "accuracy"
        linear, hgb = base.values()
        gap = 100 * (ours - max(linear, hgb))
        print(
            f"{name:9} {metric:9} {ours:7.4f} {linear:7.4f} {hgb:7.4f} {gap:+6.1f}  "
            f"{seconds:.1f} s, {steps} steps"
        )
    np.set_printoptions()


if __name__ == "__main__":
    main(sys.argv[1:] or ["churn", "cars", "reviews"])
