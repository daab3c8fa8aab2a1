"""Hindsight: what a finished run's history says about the model it kept, in sentences.

Ludwig's defaults fail quietly in known ways, and so does any engine that follows them. A binary
output is validated by ``roc_auc``, which stops improving once the ranking is right, long before
the decision threshold is: the run keeps that early checkpoint, which may predict one class for
every row, while validation loss and accuracy went on improving. A number output with the default
single linear layer and an unscaled target ends worse than predicting the mean. A category
output validated by accuracy can stand still for the early-stopping patience while the loss is
still falling, and training stops with a model that was still learning. Nothing here
changes what the config means: :class:`Hindsight` follows a run's evaluations and, at its end,
says what happened and which key to change. Pure: it reads events, never a clock or a file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ludwig_nb.core import events as ev

__all__ = ["Hindsight"]

_DEFAULT_METRIC = {
    "binary": "roc_auc",
    "category": "accuracy",
    "number": "mean_squared_error",
    "set": "jaccard",
    "vector": "mean_squared_error",
}
#: relative change below which two metric values count as the same
_TOLERANCE = 1e-3
#: relative fall of the held-out loss over the early-stopping patience that counts as "still
#: learning" (5 %: a converged model's loss still drifts down 1-2 % over five evaluations)
_STILL_LEARNING = 0.05
#: how much better the last evaluation must be than the kept model, on both loss (relative)
#: and accuracy (absolute), for "the kept model was passed over" to be worth a warning: a
#: 1 % lower loss and one more validation row right is noise, not a lost model
_PASSED_OVER_LOSS = 0.05
_PASSED_OVER_ACCURACY = 0.01
#: evaluations over which the loss must still fall for "it underfit"
_TAIL = 3
#: a regression's error, as a multiple of always predicting the mean, that is worth a warning
#: however its loss moved (r2 of -1 or below)
_FAR_WORSE = 2.0


@dataclasses.dataclass(frozen=True)
class _Evaluation:
    epoch: int  # 1-based: the epoch the evaluation closed (or fell in)
    held_out: Mapping[str, Any]  # {feature: {metric: value}} of validation (else test/training)
    training: Mapping[str, Any]  # the training split's metrics
    improved: bool


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _metric(metrics: Mapping[str, Any], feature: str, name: str) -> float | None:
    values = metrics.get(feature)
    return _number(values.get(name)) if isinstance(values, Mapping) else None


def _fmt(value: float) -> str:
    return f"{value:.4g}"


class Hindsight:
    """Follows a run's evaluations; :meth:`warnings` words what went wrong with the kept model.

    Args:
        config: The rendered config (output features, ``trainer.validation_field`` and
            ``validation_metric`` as Ludwig defines them, ``trainer.epochs``).
    """

    def __init__(self, config: Mapping[str, Any] | None) -> None:
        config = config or {}
        trainer = config.get("trainer") or {}
        outputs = config.get("output_features") or []
        self.kinds = {str(f.get("name")): str(f.get("type")) for f in outputs}
        first = str(outputs[0].get("name")) if outputs else ""
        self.field = str(trainer.get("validation_field") or first)
        kind = self.kinds.get(self.field, "")
        self.metric = str(trainer.get("validation_metric") or _DEFAULT_METRIC.get(kind, "loss"))
        self.epochs = trainer.get("epochs")
        self.history: list[_Evaluation] = []
        self.baseline: Mapping[str, Any] = {}
        self.predictors: Mapping[str, str] = {}
        self.held_out_split = "validation"

    def observe(self, event: ev.Event) -> None:
        """Record an evaluation or the trivial baseline; other events are ignored."""
        if isinstance(event, ev.BaselineComputed):
            self.baseline, self.predictors = event.metrics, event.predictors
        elif isinstance(event, ev.EvaluationFinished):
            metrics = event.metrics
            split = next((s for s in ("validation", "test", "training") if s in metrics), "")
            self.held_out_split = split or self.held_out_split
            self.history.append(
                _Evaluation(
                    epoch=event.epoch + 1,
                    held_out=metrics.get(split) or {},
                    training=metrics.get("training") or {},
                    improved=event.improved,
                )
            )

    @property
    def _split(self) -> str:
        """The held-out split the evaluations report (what the baseline is compared on)."""
        return self.held_out_split

    def warnings(self) -> tuple[str, ...]:
        """Each problem with the kept (best) model, as a sentence with what to change."""
        if not self.history:
            return ()
        kept = next((e for e in reversed(self.history) if e.improved), self.history[0])
        found: list[str] = []
        for feature, kind in self.kinds.items():
            if kind in ("binary", "category"):
                found.extend(self._one_class(feature, kind, kept))
            if kind == "number":
                found.extend(self._underfit(feature, kept))
        found.extend(self._passed_over(kept) or self._stalled(kept))
        return tuple(found)

    def _one_class(self, feature: str, kind: str, kept: _Evaluation) -> list[str]:
        held = kept.held_out
        if kind == "binary":
            recall, specificity = (_metric(held, feature, m) for m in ("recall", "specificity"))
            if recall == 0.0 or specificity == 0.0:
                side = "false" if recall == 0.0 else "true"
                return [
                    f"{feature}: the model kept (epoch {kept.epoch}) predicts {side} for every "
                    f"{self._split} row ({'recall' if side == 'false' else 'specificity'} 0): it "
                    f"learned the ranking but not where to draw the line."
                    + self._metric_advice(feature)
                ]
            return []
        accuracy = _metric(held, feature, "accuracy")
        base = _metric(self.baseline.get(self._split) or {}, feature, "accuracy")
        if accuracy is None or base is None or abs(accuracy - base) > 1e-9:
            return []
        always = self.predictors.get(feature, "the most frequent class")
        return [
            f"{feature}: the model kept (epoch {kept.epoch}) scores exactly what {always} scores "
            f"(accuracy {_fmt(accuracy)}): it very likely predicts that one class for every row."
            + self._metric_advice(feature)
        ]

    def _metric_advice(self, feature: str) -> str:
        if feature != self.field or self.metric in ("loss", "accuracy"):
            return ""
        return f" It was kept for its {self.metric}; set `trainer.validation_metric: loss`."

    def _passed_over(self, kept: _Evaluation) -> list[str]:
        """The kept model is clearly worse on loss and accuracy than the last evaluation."""
        feature, last = self.field, self.history[-1]
        if self.metric in ("loss", "accuracy") or last is kept:
            return []
        losses = [_metric(e.held_out, feature, "loss") for e in self.history]
        kept_loss, last_loss = _metric(kept.held_out, feature, "loss"), losses[-1]
        kept_acc = _metric(kept.held_out, feature, "accuracy")
        last_acc = _metric(last.held_out, feature, "accuracy")
        if None in (kept_loss, last_loss, kept_acc, last_acc):
            return []
        assert kept_loss is not None and last_loss is not None
        assert kept_acc is not None and last_acc is not None
        if not (
            last_loss <= kept_loss * (1 - _PASSED_OVER_LOSS)
            and last_acc >= kept_acc + _PASSED_OVER_ACCURACY
        ):
            return []
        lowest = min(
            (e for e, v in zip(self.history, losses, strict=True) if v is not None),
            key=lambda e: _metric(e.held_out, feature, "loss") or 0.0,
        )
        return [
            f"{feature}: best by {self.metric} at epoch {kept.epoch} (the model kept: "
            f"{self._split} loss {_fmt(kept_loss)}, accuracy {_fmt(kept_acc)}); loss kept "
            f"improving to epoch {lowest.epoch} (the last evaluation, epoch {last.epoch}: "
            f"loss {_fmt(last_loss)}, accuracy {_fmt(last_acc)}). Set "
            f"`trainer.validation_metric: loss` to keep the model with the lowest loss."
        ]

    def _stalled(self, kept: _Evaluation) -> list[str]:
        """The validation metric stood still after the kept model while the loss kept falling."""
        feature, last = self.field, self.history[-1]
        if self.metric == "loss" or last is kept:
            return []
        after = self.history[self.history.index(kept) :]
        values = [_metric(e.held_out, feature, self.metric) for e in after]
        kept_loss = _metric(kept.held_out, feature, "loss")
        last_loss = _metric(last.held_out, feature, "loss")
        if None in values or kept_loss is None or last_loss is None:
            return []
        first = float(values[0] or 0.0)
        flat = all(
            abs(float(v or 0.0) - first) <= _TOLERANCE * max(1.0, abs(first)) for v in values
        )
        if not flat or last_loss >= kept_loss * (1 - _STILL_LEARNING):
            return []
        ended = f"stopped at epoch {last.epoch} of {self.epochs}" if self.epochs else "ended"
        return [
            f"{feature}: {self.metric} stayed at {_fmt(first)} from epoch {kept.epoch} to epoch "
            f"{last.epoch} while {self._split} loss kept falling ({_fmt(kept_loss)} to "
            f"{_fmt(last_loss)}): training {ended} with the model of epoch {kept.epoch}, which "
            f"was still learning. Set `trainer.validation_metric: loss` (or raise "
            f"`trainer.early_stop`) to train until the loss stops improving."
        ]

    def _underfit(self, feature: str, kept: _Evaluation) -> list[str]:
        """A regression worse than the mean baseline while its loss still fell.

        Or far worse (twice the baseline's error), however its loss moved.
        """
        mse = _metric(kept.held_out, feature, "mean_squared_error")
        base = _metric(self.baseline.get(self._split) or {}, feature, "mean_squared_error")
        r2 = _metric(kept.held_out, feature, "r2")
        if mse is not None and base is not None:
            worse, far = mse > base, mse >= _FAR_WORSE * base
        else:
            worse = r2 is not None and r2 < 0
            far = r2 is not None and r2 <= 1 - _FAR_WORSE
        if not worse:
            return []
        score = f"r2 {_fmt(r2)}" if r2 is not None else f"mean_squared_error {_fmt(mse or 0.0)}"
        scale = f"`preprocessing: {{normalization: zscore}}` on '{feature}'"
        falling = self._falling(feature)
        if falling is not None:
            split, first, last = falling
            longer = f"trainer.epochs above {self.epochs}" if self.epochs else "more trainer.epochs"
            return [
                f"{feature}: the model ends worse than always predicting the training mean "
                f"({self._split} {score}) while its {split} loss was still falling "
                f"({_fmt(first)} to {_fmt(last)} over its last {_TAIL} evaluations): it "
                f"underfit. Train longer ({longer}), raise trainer.learning_rate, or scale the "
                f"target: {scale}."
            ]
        if not far:
            return []
        return [
            f"{feature}: the model ends far worse than always predicting the training mean "
            f"({self._split} {score}), and its loss had stopped falling: its predictions are "
            f"off in scale, which more epochs at this learning rate will not fix. Scale the "
            f"target: {scale}, or raise trainer.learning_rate."
        ]

    def _falling(self, feature: str) -> tuple[str, float, float] | None:
        """(split, first, last) of a loss that fell by 1 % or more over the last evaluations.

        The held-out loss first (evaluated whole, so smooth), else the training loss (a mean
        over the epoch's batches, which can wobble while the model still improves).
        """
        tail = self.history[-_TAIL:]
        held_out, training = [e.held_out for e in tail], [e.training for e in tail]
        for split, metrics in ((self._split, held_out), ("training", training)):
            values = [v for v in (_metric(m, feature, "loss") for m in metrics) if v is not None]
            if len(values) == _TAIL and values[-1] < values[0] * (1 - 0.01):
                return split, values[0], values[-1]
        return None
