"""Where an LLM's weights come from: a local folder, the Hugging Face cache, or the hub.

Shared by the engines that load causal LMs (the built-in engine and Ludwig). A local folder
and a cached hub id never touch the network; a hub id that is not cached is fetched only when
the hub answers within seconds (:func:`check_base_model` fails fast, with what to do, when it
does not), never by a download that hangs on an unreachable network. Both engines look
before a run's training starts, while ``train()`` still waits for the run's data check, so a
base model that cannot be had is the first thing reported (``BaseModelUnavailable``).
"""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ludwig_nb.engines.base import EngineUnavailable

__all__ = [
    "HUB_HOST",
    "BaseModelSource",
    "BaseModelUnavailable",
    "check_base_model",
    "fetch_base_model",
]

HUB_HOST = "huggingface.co"
_TIMEOUT_S = 3.0


class BaseModelUnavailable(EngineUnavailable):
    """An LLM's ``base_model`` cannot be had here; the message names it and says what to do."""


@dataclasses.dataclass(frozen=True)
class BaseModelSource:
    """Where ``base_model`` loads from.

    ``kind``: "folder" (a local directory), "cache" (a hub id already in the Hugging Face
    cache) or "hub" (a hub id to fetch; the hub answered). ``path``: the folder to load, None
    for "hub" until :func:`fetch_base_model` has fetched it.
    """

    name: str
    kind: str
    path: Path | None


def check_base_model(base_model: str, *, timeout_s: float = _TIMEOUT_S) -> BaseModelSource:
    """Where ``base_model`` (a local folder or a hub id) loads from, found without a download.

    Raises ``BaseModelUnavailable`` saying why and what to do, within about ``timeout_s``
    seconds, when the weights cannot be had (no folder, not cached, and the hub offline or
    unreachable).
    """
    if not base_model:
        raise BaseModelUnavailable(
            "model_type: llm needs base_model (a Hugging Face id or a folder)"
        )
    folder = Path(base_model).expanduser()
    if folder.is_dir():
        return BaseModelSource(base_model, "folder", folder.resolve())
    cached = _cached(base_model)
    if cached is not None:
        return BaseModelSource(base_model, "cache", cached)
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        raise BaseModelUnavailable(
            f"base_model {base_model!r} is not in the local Hugging Face cache and "
            "HF_HUB_OFFLINE is set: download it first, or point base_model at a local folder"
        )
    _reach_hub(base_model, timeout_s)
    return BaseModelSource(base_model, "hub", None)


def _reach_hub(base_model: str, timeout_s: float) -> None:
    endpoint = urlsplit(os.environ.get("HF_ENDPOINT") or f"https://{HUB_HOST}")
    host = endpoint.hostname or HUB_HOST
    port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as err:
        raise BaseModelUnavailable(
            f"the weights of base_model {base_model!r} cannot be fetched: {host} is unreachable "
            f"({err.strerror or err}) and they are not in the local Hugging Face cache; "
            "download them where the hub is reachable, or point base_model at a local folder"
        ) from None


def fetch_base_model(
    source: BaseModelSource, progress: Callable[[int, int], None] | None = None
) -> Path:
    """The local folder of ``source``, downloading a hub model's files first when needed.

    ``progress(done_bytes, total_bytes)`` is called as the download goes (huggingface_hub's
    progress bars, redirected). Raises ``BaseModelUnavailable`` naming the model when the
    download fails.
    """
    if source.path is not None:
        return source.path
    from huggingface_hub import snapshot_download

    try:
        path = snapshot_download(source.name, tqdm_class=_progress_class(progress))
    except Exception as err:  # the hub's many error types: one message for the user
        raise BaseModelUnavailable(f"could not download base_model {source.name!r}: {err}") from err
    return Path(path)


def _progress_class(progress: Callable[[int, int], None] | None) -> Any:
    """A tqdm class that reports to ``progress`` and prints nothing (None: no reports)."""
    from tqdm.auto import tqdm

    class Reporting(tqdm):  # type: ignore[misc]  # tqdm is untyped
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = False
            kwargs["file"] = open(os.devnull, "w")  # noqa: SIM115  # closed in close()
            super().__init__(*args, **kwargs)

        def update(self, n: float | None = 1) -> bool | None:
            out: bool | None = super().update(n)
            if progress is not None and self.total:
                progress(int(self.n), int(self.total))
            return out

        def close(self) -> None:
            super().close()
            self.fp.close()

    return Reporting


def _cached(repo_id: str) -> Path | None:
    """The cached snapshot folder of ``repo_id`` (its config.json is there), else None."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache(repo_id, "config.json")
    return Path(found).parent if isinstance(found, str) else None
