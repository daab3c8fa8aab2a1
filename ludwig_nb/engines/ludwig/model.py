"""The trained-model handle of ``engine: ludwig``.

Predict, evaluate and save through ``LudwigModel``; ``load_ludwig_model`` for any process
(``LudwigModel.load``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ludwig_nb.engines.ludwig.metrics import scalar_metrics
from ludwig_nb.engines.manifest import write_manifest

__all__ = ["LudwigTrainedModel", "load_ludwig_model"]


class LudwigTrainedModel:
    """A trained Ludwig model.

    ``ludwig_model`` is the ``LudwigModel`` itself (for Ludwig's own API: ``collect_weights``,
    ``visualize``...); ``directory`` where it is saved.
    """

    def __init__(self, model: Any, directory: Path | None = None) -> None:
        self.ludwig_model = model
        self.directory = directory
        self.config = dict(getattr(model, "config", {}) or {})

    def predict(self, data: Any) -> pd.DataFrame:
        """Ludwig's predictions for a DataFrame or a file.

        Columns ``<out>_predictions``, ``<out>_probabilities``, ...; one row per input row. Raises
        ``DataError`` for a missing column.
        """
        frame = self._frame(data, outputs=False)
        predictions, _ = self.ludwig_model.predict(
            dataset=frame, skip_save_predictions=True, skip_save_unprocessed_output=True
        )
        return pd.DataFrame(predictions).set_index(frame.index)

    def evaluate(self, data: Any) -> dict[str, dict[str, float]]:
        """Ludwig's metrics on labelled data.

        ``{feature | "combined": {metric: value}}`` (scalars only). Raises ``DataError`` for a
        missing column.
        """
        frame = self._frame(data, outputs=True)
        stats, _, _ = self.ludwig_model.evaluate(
            dataset=frame,
            skip_save_predictions=True,
            skip_save_eval_stats=True,
            skip_save_unprocessed_output=True,
            collect_predictions=False,
        )
        return scalar_metrics(stats)

    def save(self, path: str | Path) -> Path:
        """``LudwigModel.save`` into ``path`` (Ludwig's layout) plus our manifest."""
        target = Path(path)
        target.mkdir(parents=True, exist_ok=True)
        self.ludwig_model.save(str(target))
        write_manifest(target, "ludwig")
        return target

    def _frame(self, data: Any, *, outputs: bool) -> pd.DataFrame:
        from ludwig_nb.data.loading import check_columns, load_table

        frame = load_table(data)
        check_columns(self.config, frame, outputs=outputs)
        return frame


def load_ludwig_model(folder: Path) -> LudwigTrainedModel:
    """``LudwigModel.load(folder)`` on the CPU-or-GPU Ludwig picks.

    Raises ``FileNotFoundError`` when ``folder`` is not a saved Ludwig model.
    """
    import logging

    if not (folder / "model_hyperparameters.json").is_file():
        raise FileNotFoundError(
            f"{folder}: not a saved Ludwig model (no model_hyperparameters.json)"
        )
    from ludwig.api import LudwigModel

    model = LudwigModel.load(str(folder), logging_level=logging.WARNING, backend="local")
    return LudwigTrainedModel(model, folder)
