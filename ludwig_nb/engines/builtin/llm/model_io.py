"""The trained LLM: predict, evaluate, save, and load in a fresh process.

A saved model folder follows Ludwig's layout where it can::

    model/
      ludwig_nb_model.json          manifest: engine builtin, kind llm
      model_hyperparameters.json    the config that trained it (Ludwig's name)
      training_set_metadata.json    what prediction needs besides the config (length limits)
      base_model.json               the base model: the config's name, the folder it loaded
                                    from, and a fingerprint of its files
      model_weights/                the adapter (PEFT's adapter_config.json and
                                    adapter_model.safetensors, as Ludwig saves it), or the
                                    whole model and tokenizer (full fine-tuning, or an
                                    adapter merged into its base when
                                    adapter.postprocessor.merge_adapter_into_base_model)

The base model is referenced, not copied: loading finds it again (the same folder, or the
hub id in the cache) and refuses a base whose fingerprint changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from ludwig_nb.engines.builtin.llm.data import input_name, output_name, texts
from ludwig_nb.engines.builtin.llm.evaluation import evaluate_encoded
from ludwig_nb.engines.builtin.llm.generation import generate, generation_config

__all__ = ["LlmModel", "base_fingerprint", "load_llm_model"]

WEIGHTS_DIR = "model_weights"
_CHUNK = 1 << 20


class LlmModel:
    """A fine-tuned (or zero-shot) causal LM with its config; see the module docstring.

    Args:
        config: The rendered config it was trained with.
        model: The transformers / PEFT model.
        tokenizer: Its tokenizer.
        base: ``{"name", "path", "fingerprint"}`` of the base model.
        device: Where it runs.
        autocast: The forward passes' autocast context factory (mixed precision).
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        model: Any,
        tokenizer: Any,
        base: Mapping[str, Any],
        device: torch.device,
        autocast: Any = None,
    ) -> None:
        import contextlib

        self.config = dict(config)
        self.model, self.tokenizer = model, tokenizer
        self.base = dict(base)
        self.device = device
        self._autocast = autocast or contextlib.nullcontext
        self.timings: dict[str, float] = {}

    @property
    def _eval_batch_size(self) -> int:
        size = (self.config.get("trainer") or {}).get("eval_batch_size")
        return int(size) if isinstance(size, int) and size > 0 else 8

    def _frame(self, data: Any, *, outputs: bool) -> pd.DataFrame:
        from ludwig_nb.data import load_dataset
        from ludwig_nb.data.sources import missing_column

        loaded = load_dataset(data)
        for frame in loaded.values() if isinstance(loaded, dict) else [loaded]:
            error = missing_column(self.config, list(frame.columns), "the data", outputs)
            if error is not None:
                raise error
        if isinstance(loaded, dict):
            return pd.concat(list(loaded.values()), ignore_index=True)
        return loaded

    def predict(self, data: Any, seed: int = 42) -> pd.DataFrame:
        """Generate an answer for every row of ``data`` with the config's ``generation``.

        Returns Ludwig's columns for the output ``<name>``: ``<name>_predictions`` (the answer's
        tokens), ``<name>_probabilities`` (each token's probability), ``<name>_probability`` (the
        answer's log probability) and ``<name>_response`` (the answer's text). ``seed`` fixes a
        sampled generation. Raises ``DataError`` for a missing column.
        """
        frame = self._frame(data, outputs=False)
        split = texts(self.config, frame, self.tokenizer, with_targets=False)
        torch.manual_seed(seed)
        answers = generate(
            self.model,
            self.tokenizer,
            split.encoded,
            generation_config(self.config.get("generation"), self.tokenizer),
            self._eval_batch_size,
            self.device,
        )
        name = str(self.config["output_features"][0]["name"])
        return pd.DataFrame(
            {
                f"{name}_predictions": answers.tokens,
                f"{name}_probabilities": answers.probabilities,
                f"{name}_probability": answers.log_probability,
                f"{name}_response": answers.texts,
            },
            index=frame.index,
        )

    def evaluate(self, data: Any) -> dict[str, dict[str, float]]:
        """Ludwig's LLM metrics on labelled ``data``: ``{output name: {metric: value}}``."""
        frame = self._frame(data, outputs=True)
        split = texts(self.config, frame, self.tokenizer)
        metrics = evaluate_encoded(
            self.model,
            split.encoded,
            self.tokenizer.pad_token_id,
            self._eval_batch_size,
            self.device,
            self._autocast,
        )
        name = str(self.config["output_features"][0]["name"])
        return {name: metrics, "combined": {"loss": metrics["loss"]}}

    def save(self, path: str | Path) -> Path:
        """Save under ``path`` (see the module docstring); returns the folder."""
        from ludwig_nb.engines.manifest import write_manifest
        from ludwig_nb.store.rundir import write_json_atomic

        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        weights = folder / WEIGHTS_DIR
        merge = _merge_wanted(self.config)
        adapter = bool(self.config.get("adapter")) and not merge
        model = self.model
        if merge and hasattr(model, "merge_and_unload") and not self.config.get("quantization"):
            model = model.merge_and_unload()
            self.model = model
        model.save_pretrained(str(weights))
        if not adapter:
            self.tokenizer.save_pretrained(str(weights))
        write_json_atomic(folder / "model_hyperparameters.json", self.config)
        write_json_atomic(folder / "training_set_metadata.json", _metadata(self.config))
        write_json_atomic(folder / "base_model.json", self.base)
        write_manifest(folder, "builtin", kind="llm", weights=WEIGHTS_DIR, adapter=adapter)
        return folder


def _merge_wanted(config: Mapping[str, Any]) -> bool:
    post = (config.get("adapter") or {}).get("postprocessor") or {}
    return bool(post.get("merge_adapter_into_base_model"))


def _metadata(config: Mapping[str, Any]) -> dict[str, Any]:
    from ludwig_nb.engines.builtin.llm.tokens import length_limits

    prompt, target, whole = length_limits(config)
    return {
        input_name(config): {"max_sequence_length": prompt},
        output_name(config): {"max_sequence_length": target},
        "global_max_sequence_length": whole,
    }


def base_fingerprint(folder: Path) -> str:
    """A fingerprint of a model folder (a hex sha256).

    Over its config and each weight file's name, size, first and last MiB: cheap for a
    many-gigabyte model, and other weights in the same place change it.
    """
    digest = hashlib.sha256()
    config = folder / "config.json"
    if config.is_file():
        digest.update(config.read_bytes())
    for file in sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin")):
        size = file.stat().st_size
        digest.update(f"{file.name}:{size}".encode())
        with open(file, "rb") as handle:
            digest.update(handle.read(_CHUNK))
            handle.seek(max(0, size - _CHUNK))
            digest.update(handle.read(_CHUNK))
    return digest.hexdigest()


def load_llm_model(folder: Path, device: str | None = None) -> LlmModel:
    """Load a model saved by :meth:`LlmModel.save` (raises ``FileNotFoundError``/``ValueError``).

    ``FileNotFoundError`` when the folder or its base model is missing, ``ValueError`` when the
    base model's fingerprint differs from the one it was trained on.
    """
    from ludwig_nb.engines.builtin.device import resolve_device
    from ludwig_nb.engines.builtin.llm.loading import load_base, load_tokenizer

    config = _read(folder / "model_hyperparameters.json")
    base = _read(folder / "base_model.json")
    manifest = _read(folder / "ludwig_nb_model.json")
    weights = folder / str(manifest.get("weights") or WEIGHTS_DIR)
    target = resolve_device(device)
    trust = bool(config.get("trust_remote_code", False))
    if not manifest.get("adapter"):  # the whole model is in the folder
        tokenizer = load_tokenizer(weights, trust)
        model = load_base(weights, config, target, gradient_checkpointing=False)
    else:
        base_path = _find_base(base)
        tokenizer = load_tokenizer(base_path, trust)
        model = _with_adapter(
            load_base(base_path, config, target, gradient_checkpointing=False), weights
        )
    model.eval()
    return LlmModel(config, model, tokenizer, base, target)


def _with_adapter(model: Any, weights: Path) -> Any:
    from peft import PeftModel

    return PeftModel.from_pretrained(model, str(weights), is_trainable=False)


def _find_base(base: Mapping[str, Any]) -> Path:
    """The base model's folder, checked against the fingerprint it was trained on."""
    from ludwig_nb.engines.hub import check_base_model

    path = Path(str(base.get("path") or ""))
    if not path.is_dir():
        source = check_base_model(str(base.get("name") or ""))
        if source.path is None:
            raise FileNotFoundError(
                f"the base model {base.get('name')!r} is not on this machine: "
                "fetch it (or copy its folder) first"
            )
        path = source.path
    expected = base.get("fingerprint")
    if expected and base_fingerprint(path) != expected:
        raise ValueError(
            f"the base model at {path} differs from the one this adapter was trained on "
            "(fingerprint mismatch): point base_model at the original weights"
        )
    return path


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing; not a saved LLM model folder")
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(body, dict):
        raise ValueError(f"{path}: not a JSON object")
    return body
