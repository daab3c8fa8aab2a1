"""``nvmlDeviceGetFieldValues``: many readings of one GPU in one driver call.

Each field answers on its own: a field the driver cannot read has its own return code while
the others succeed, and its value comes in whichever C type the driver chose
(``valueType``). Field ids are read from the installed ``pynvml`` by name, so a binding
that predates a field simply leaves it out.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any

__all__ = ["FieldRead", "field_ids", "read_fields"]

#: nvmlValueType_t -> how the c_nvmlValue_t union holds it (native byte order)
_FORMATS = {
    "NVML_VALUE_TYPE_DOUBLE": "=d",
    "NVML_VALUE_TYPE_UNSIGNED_INT": "=I",
    "NVML_VALUE_TYPE_UNSIGNED_LONG": "=Q" if ctypes.sizeof(ctypes.c_ulong) == 8 else "=I",
    "NVML_VALUE_TYPE_UNSIGNED_LONG_LONG": "=Q",
    "NVML_VALUE_TYPE_SIGNED_LONG_LONG": "=q",
    "NVML_VALUE_TYPE_SIGNED_INT": "=i",
    "NVML_VALUE_TYPE_UNSIGNED_SHORT": "=H",
}


class _Layout:
    """Where the answers sit in pynvml's ``c_nvmlFieldValue_t`` (read from the struct itself).

    Reading the returned array's bytes once costs a fraction of pynvml's per-attribute
    ``__getattribute__`` (a Python function per field access).
    """

    def __init__(self, nvml: ModuleType) -> None:
        entry = nvml.c_nvmlFieldValue_t
        self.size = ctypes.sizeof(entry)
        self.type_at = entry.valueType.offset
        self.return_at = entry.nvmlReturn.offset
        self.value_at = entry.value.offset
        self.formats: dict[int, struct.Struct] = {}
        for name, fmt in _FORMATS.items():
            code = getattr(nvml, name, None)
            if isinstance(code, int):
                self.formats[code] = struct.Struct(fmt)


_LAYOUTS: dict[int, _Layout] = {}
_INT = struct.Struct("=i")


def _layout(nvml: ModuleType) -> _Layout:
    layout = _LAYOUTS.get(id(nvml))
    if layout is None:
        layout = _LAYOUTS[id(nvml)] = _Layout(nvml)
    return layout


class FieldRead:
    """One field-values call's answers: ``values`` by id (None: not read) and ``refused`` ids.

    ``refused``: the ids the driver answered NOT_SUPPORTED (or no permission) for: never
    worth asking again on this device.
    """

    def __init__(self, values: Mapping[int, float | None], refused: Iterable[int]) -> None:
        self.values = dict(values)
        self.refused = frozenset(refused)


def field_ids(nvml: ModuleType, names: Iterable[str]) -> dict[str, int]:
    """``{constant name: id}`` for the names the installed bindings define."""
    found: dict[str, int] = {}
    for name in names:
        value = getattr(nvml, name, None)
        if isinstance(value, int):
            found[name] = value
    return found


def read_fields(nvml: ModuleType, handle: Any, ids: Sequence[int]) -> FieldRead:
    """Read ``ids`` of the GPU ``handle`` in one call.

    Raises ``NVMLError`` when the call itself fails (FunctionNotFound on an old driver);
    per-field failures are None in the result.
    """
    unique = list(dict.fromkeys(ids))
    # (id, scope 0) pairs: pynvml unpacks a pair directly, a bare id through a TypeError
    entries = nvml.nvmlDeviceGetFieldValues(handle, [(field, 0) for field in unique])
    layout = _layout(nvml)
    raw = memoryview(entries).cast("B")
    permanent = (nvml.NVML_ERROR_NOT_SUPPORTED, nvml.NVML_ERROR_NO_PERMISSION)
    values: dict[int, float | None] = {}
    refused: list[int] = []
    for k, field in enumerate(unique):
        base = k * layout.size
        code = _INT.unpack_from(raw, base + layout.return_at)[0]
        values[field] = None
        if code == nvml.NVML_SUCCESS:
            kind = layout.formats.get(_INT.unpack_from(raw, base + layout.type_at)[0])
            if kind is not None:  # else a value type newer than these bindings
                values[field] = float(kind.unpack_from(raw, base + layout.value_at)[0])
        elif code in permanent:
            refused.append(field)
    return FieldRead(values, refused)
