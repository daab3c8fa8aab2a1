"""Fail fast when an LLM's weights cannot be had.

A local folder, the Hugging Face cache, or a hub that answers within seconds; never a download that
hangs on an unreachable network.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["HUB_HOST", "check_base_model"]

HUB_HOST = "huggingface.co"
_TIMEOUT_S = 3.0


def check_base_model(base_model: str, *, timeout_s: float = _TIMEOUT_S) -> None:
    """Return when ``base_model`` (a local folder or a hub id) can be loaded.

    Else raise ``RuntimeError`` saying why and what to do, within about ``timeout_s`` seconds.
    """
    if not base_model:
        raise RuntimeError("model_type: llm needs base_model (a Hugging Face id or a folder)")
    if Path(base_model).expanduser().is_dir():
        return
    if _cached(base_model):
        return
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        raise RuntimeError(
            f"base_model {base_model!r} is not in the local Hugging Face cache and "
            "HF_HUB_OFFLINE is set: download it first, or point base_model at a local folder"
        )
    endpoint = urlsplit(os.environ.get("HF_ENDPOINT") or f"https://{HUB_HOST}")
    host = endpoint.hostname or HUB_HOST
    port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as err:
        raise RuntimeError(
            f"the weights of base_model {base_model!r} cannot be fetched: {host} is unreachable "
            f"({err.strerror or err}) and they are not in the local Hugging Face cache; "
            "download them where the hub is reachable, or point base_model at a local folder"
        ) from None


def _cached(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    found = try_to_load_from_cache(repo_id, "config.json")
    return isinstance(found, str)
