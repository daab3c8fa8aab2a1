"""What every NVML reader shares: optional functions and the codes that mean "never again".

A call that the installed nvidia-ml-py lacks raises :class:`MissingFunction` (treated like
the driver's FunctionNotFound); :func:`unsupported_codes` are the return codes after which a
metric is not asked again on that device.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, Protocol

__all__ = ["Call", "MissingFunction", "init_failure", "optional", "unsupported_codes"]

_NO_DRIVER_HINT = "install the NVIDIA driver, or use %gpu_watch --simulate"


class MissingFunction(Exception):
    """The installed nvidia-ml-py predates a call (treated like FunctionNotFound)."""


class Call(Protocol):
    """``call(metric, fn, *args)``: one metric of one device, degrading on its own.

    Returns None when the metric failed (and, for a permanent failure, never calls it again:
    :meth:`gone` is then True).
    """

    def __call__(self, metric: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, or None when ``metric`` failed."""

    def gone(self, metric: str) -> bool:
        """Whether ``metric`` failed for good on this device."""


def optional(nvml: ModuleType, name: str) -> Callable[..., Any]:
    """``nvml.<name>``; raises :class:`MissingFunction` when the bindings lack it."""
    fn = getattr(nvml, name, None)
    if fn is None:
        raise MissingFunction(name)
    return fn  # type: ignore[no-any-return]


def unsupported_codes(nvml: ModuleType) -> tuple[int, ...]:
    """The NVML return codes after which a metric is not asked again on that device."""
    return (
        nvml.NVML_ERROR_NOT_SUPPORTED,
        nvml.NVML_ERROR_NO_PERMISSION,
        nvml.NVML_ERROR_FUNCTION_NOT_FOUND,
        nvml.NVML_ERROR_ARGUMENT_VERSION_MISMATCH,
    )


def init_failure(nvml: ModuleType | None, exc: BaseException) -> str:
    """One line for the user: why NVML gave us nothing (``nvml``: pynvml, once imported)."""
    code = getattr(exc, "value", None)
    if nvml is None or code is None:
        return f"no NVIDIA driver found: NVML failed to start ({exc})"
    if code == nvml.NVML_ERROR_LIBRARY_NOT_FOUND:
        return f"no NVIDIA driver found: libnvidia-ml.so.1 is not installed ({_NO_DRIVER_HINT})"
    if code == nvml.NVML_ERROR_DRIVER_NOT_LOADED:
        return f"no NVIDIA driver found: the driver is not loaded ({_NO_DRIVER_HINT})"
    if code == nvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH:
        return "no NVIDIA driver found: driver/library version mismatch (reboot after an upgrade)"
    return f"no NVIDIA driver found: NVML failed to start ({exc})"
