"""The trained-model handle: predict, evaluate, save; and ``load_model`` for any process.

A saved model is a directory (Ludwig's file names)::

    model_weights.pt             the ECD state dict
    model_hyperparameters.json   the rendered config it was trained with
    training_set_metadata.json   the preprocessing metadata (applied again at predict time)
    ludwig_nb_model.json         the manifest: {"engine": "builtin"} (engines/manifest.py)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ludwig_nb.data.errors import DataError
from ludwig_nb.engines.builtin.device import Precision, TensorData, resolve_device
from ludwig_nb.engines.builtin.evaluation import evaluate_split, forward_all
from ludwig_nb.engines.builtin.image.encoders import weights_in_checkpoint
from ludwig_nb.engines.builtin.model import ECD, Objective, input_stacks, to_data_space
from ludwig_nb.engines.errors import ModelLoadError
from ludwig_nb.engines.manifest import write_manifest

if TYPE_CHECKING:  # pandas loads when a model predicts or evaluates, not when it trains
    import pandas as pd

__all__ = [
    "CONFIG_FILE",
    "METADATA_FILE",
    "WEIGHTS_FILE",
    "BuiltinModel",
    "ModelLoadError",
    "load_model",
]

WEIGHTS_FILE = "model_weights.pt"
CONFIG_FILE = "model_hyperparameters.json"
METADATA_FILE = "training_set_metadata.json"


class BuiltinModel:
    """A trained ECD model with the preprocessing it was trained with.

    Args:
        config: The rendered config it was trained with.
        metadata: The preprocessing fitted on the dataset (every split's rows).
        module: The trained network.
        timings: Seconds spent per activity during fit (setup, data_wait, steps, evaluation, ...).
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        metadata: Mapping[str, Any],
        module: ECD,
        timings: Mapping[str, float] | None = None,
    ):
        self.config = dict(config)
        self.metadata = dict(metadata)
        self.module = module
        #: seconds spent per activity during fit (setup, data_wait, steps, evaluation, ...)
        self.timings = dict(timings or {})

    @property
    def device(self) -> torch.device:
        """The device the model's parameters are on."""
        return next(self.module.parameters()).device

    def _batch_size(self) -> int:
        trainer = self.config.get("trainer") or {}
        size = trainer.get("eval_batch_size")
        return int(size) if isinstance(size, int) and size > 0 else 1024

    def _prepare(self, data: Any, *, outputs: bool) -> tuple[pd.DataFrame, TensorData]:
        from ludwig_nb.data.loading import load_table
        from ludwig_nb.data.value_checks import check_column_names
        from ludwig_nb.engines.builtin.image.feature import prepare_image_columns
        from ludwig_nb.engines.builtin.image.tables import transform_features

        frame = check_column_names(load_table(data), "the data")
        if frame.empty:
            action = "evaluate" if outputs else "predict"
            raise DataError(f"nothing to {action}: the data has no rows; pass at least one")
        frame = prepare_image_columns(self.config, frame, data)  # paths relative to the file
        arrays = transform_features(self.metadata, frame, outputs=outputs)
        return frame, TensorData(arrays, input_stacks(self.config)).place(self.device)

    def predict(self, data: Any) -> pd.DataFrame:
        """Predictions for a DataFrame or a file, one row per input row, with Ludwig's columns.

        ``<out>_predictions`` and, for binary/category/set outputs, ``<out>_probabilities``,
        ``<out>_probability`` and ``<out>_probabilities_<label>``. Raises ``DataError`` for missing
        columns or values that cannot be transformed.
        """
        frame, tensors = self._prepare(data, outputs=False)
        raw, _ = forward_all(
            self.module, tensors, self._batch_size(), Precision(self.device, False)
        )
        columns: dict[str, Any] = {}
        for feature in self.config["output_features"]:
            name, kind = feature["name"], feature["type"]
            meta = self.metadata["features"][name]
            columns.update(
                _columns(name, kind, to_data_space(kind, raw[name], meta), meta, feature)
            )
        import pandas as pd

        return pd.DataFrame(columns, index=frame.index)

    def evaluate(self, data: Any) -> dict[str, dict[str, float]]:
        """Metrics per output feature (and ``combined`` loss) on labelled data."""
        _, tensors = self._prepare(data, outputs=True)
        objective = Objective(self.config, self.metadata)
        return evaluate_split(
            self.module,
            objective,
            tensors,
            self.config,
            self.metadata,
            self._batch_size(),
            Precision(self.device, False),
        )

    def save(self, path: str | Path) -> Path:
        """Write the model directory (see the module docstring); returns its path."""
        target = Path(path)
        target.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().cpu() for k, v in _plain_module(self.module).state_dict().items()}
        torch.save(state, target / WEIGHTS_FILE)
        saved = weights_in_checkpoint(self.config)  # pretrained encoders load from these weights
        (target / CONFIG_FILE).write_text(json.dumps(saved, indent=2, default=str))
        (target / METADATA_FILE).write_text(json.dumps(self.metadata, indent=1, default=str))
        write_manifest(target, "builtin")
        return target


def _plain_module(module: torch.nn.Module) -> torch.nn.Module:
    """The module under ``torch.compile``'s wrapper, if any."""
    return getattr(module, "_orig_mod", module)


def _columns(
    name: str, kind: str, output: np.ndarray, meta: Mapping[str, Any], feature: Mapping[str, Any]
) -> dict[str, Any]:
    if kind in ("number",):
        return {f"{name}_predictions": output}
    if kind == "vector":
        return {f"{name}_predictions": list(output)}
    if kind == "binary":
        threshold = float(feature.get("threshold") or 0.5)
        labels = meta.get("bool2str") or [False, True]
        positive = output >= threshold
        probs = np.stack([1.0 - output, output], axis=1)
        return {
            f"{name}_predictions": np.where(positive, labels[1], labels[0]),
            f"{name}_probabilities_{labels[0]}": probs[:, 0],
            f"{name}_probabilities_{labels[1]}": probs[:, 1],
            f"{name}_probability": probs.max(axis=1),
            f"{name}_probabilities": list(probs),
        }
    classes = list(meta["idx2str"])
    if kind == "set":
        threshold = float(feature.get("threshold") or 0.5)
        picks = [[classes[i] for i in np.flatnonzero(row >= threshold)] for row in output]
        return {
            f"{name}_predictions": picks,
            f"{name}_probabilities": list(output),
            f"{name}_probability": output.max(axis=1) if output.size else output,
        }
    out: dict[str, Any] = {
        f"{name}_predictions": np.asarray(classes, dtype=object)[output.argmax(axis=1)],
        f"{name}_probability": output.max(axis=1),
        f"{name}_probabilities": list(output),
    }
    for i, label in enumerate(classes):
        out[f"{name}_probabilities_{label}"] = output[:, i]
    return out


def load_model(path: str | Path, device: str | None = None) -> BuiltinModel:
    """Load a model saved by :meth:`BuiltinModel.save` (any process).

    ``device``: as for training (default: first GPU if any, else CPU). Raises ``FileNotFoundError``
    for a folder that is not a saved model, and :class:`ModelLoadError` naming the file for one that
    is unreadable, truncated, or whose files do not fit together.
    """
    source = Path(path)
    for name in (WEIGHTS_FILE, CONFIG_FILE, METADATA_FILE):
        if not (source / name).is_file():
            raise FileNotFoundError(f"{source}: not a saved model ({name} missing)")
    config = _read_json(source / CONFIG_FILE)
    metadata = _read_json(source / METADATA_FILE)
    check_metadata_version(source / METADATA_FILE, metadata)
    _check_fit(source, config, metadata)
    try:
        module = ECD(config, metadata)
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise ModelLoadError(
            f"{source / METADATA_FILE} does not fit {CONFIG_FILE} ({type(err).__name__}: "
            f"{err}); the files come from different models or were edited"
        ) from err
    module.load_state_dict(_read_weights(source / WEIGHTS_FILE, module))
    module.to(resolve_device(device)).eval()
    return BuiltinModel(config, metadata, module)


def check_metadata_version(path: Path, metadata: Mapping[str, Any]) -> None:
    """Refuse metadata written before the model followed Ludwig 0.11's layout.

    Raises :class:`ModelLoadError` naming ``path`` and what to do: such a model was built with
    other layers and vocabularies, and its weights do not load into today's network.
    """
    from ludwig_nb.engines.builtin.preprocessing.pipeline import (
        METADATA_VERSION,  # pandas: only here
    )

    version = metadata.get("version")
    if isinstance(version, int) and version < METADATA_VERSION:
        raise ModelLoadError(
            f"{path}: saved by an earlier ludwig_nb (metadata version {version}), whose built-in "
            f"model was not yet Ludwig's network layer for layer; train it again to use it here"
        )


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ModelLoadError(f"{path}: unreadable ({err})") from err
    except json.JSONDecodeError as err:
        raise ModelLoadError(
            f"{path}: not valid JSON (line {err.lineno}, column {err.colno}: {err.msg})"
        ) from err
    if not isinstance(data, dict):
        raise ModelLoadError(f"{path}: holds a {type(data).__name__}, not a JSON object")
    return data


def _check_fit(source: Path, config: Mapping[str, Any], metadata: Mapping[str, Any]) -> None:
    """Every feature of the config has its preprocessing metadata."""
    features = metadata.get("features")
    if not isinstance(features, dict):
        raise ModelLoadError(f"{source / METADATA_FILE}: has no 'features' object")
    for key in ("input_features", "output_features"):
        listed = config.get(key)
        if not isinstance(listed, list) or not listed:
            raise ModelLoadError(f"{source / CONFIG_FILE}: has no {key} list")
        for feature in listed:
            name = feature.get("name") if isinstance(feature, dict) else None
            if not isinstance(features.get(name), dict):
                raise ModelLoadError(
                    f"{source / METADATA_FILE}: no metadata for feature {name!r} of "
                    f"{CONFIG_FILE}; the files come from different models or were edited"
                )


def _read_weights(path: Path, module: ECD) -> dict[str, Any]:
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # truncated, garbage, or not a torch file
        from ludwig_nb.engines.builtin.checkpoint import unreadable_torch_file

        reason = unreadable_torch_file(path)
        raise ModelLoadError(f"{path}: not readable as weights ({reason})") from err
    if not isinstance(state, dict):
        raise ModelLoadError(f"{path}: holds a {type(state).__name__}, not model weights")
    expected = module.state_dict()
    wrong = [
        k
        for k in expected
        if k not in state or tuple(getattr(state[k], "shape", ())) != tuple(expected[k].shape)
    ]
    extra = [k for k in state if k not in expected]
    if wrong or extra:
        first = (wrong or extra)[0]
        raise ModelLoadError(
            f"{path}: weights do not fit {CONFIG_FILE} and {METADATA_FILE} ({len(wrong)} "
            f"missing or of other shape, {len(extra)} unexpected, e.g. {first!r}): a "
            "vocabulary or a size was changed after training"
        )
    return state
