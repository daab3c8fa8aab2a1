"""``nvmlDeviceGetFieldValues``: many readings of one GPU in one driver call.

Each field answers on its own: a field the driver cannot read has its own return code while
the others succeed, and its value comes in whichever C type the driver chose
(``valueType``). Field ids are read from the installed ``pynvml`` by name, so a binding
that predates a field simply leaves it out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any

__all__ = ["FieldRead", "field_ids", "read_fields"]

#: nvmlValueType_t -> the member of the c_nvmlValue_t union holding it
_MEMBERS = {
    "NVML_VALUE_TYPE_DOUBLE": "dVal",
    "NVML_VALUE_TYPE_UNSIGNED_INT": "uiVal",
    "NVML_VALUE_TYPE_UNSIGNED_LONG": "ulVal",
    "NVML_VALUE_TYPE_UNSIGNED_LONG_LONG": "ullVal",
    "NVML_VALUE_TYPE_SIGNED_LONG_LONG": "sllVal",
    "NVML_VALUE_TYPE_SIGNED_INT": "siVal",
    "NVML_VALUE_TYPE_UNSIGNED_SHORT": "usVal",
}


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


def _decode(nvml: ModuleType, entry: Any) -> float | None:
    for type_name, member in _MEMBERS.items():
        if getattr(nvml, type_name, None) == entry.valueType:
            return float(getattr(entry.value, member))
    return None  # a value type newer than these bindings


def read_fields(nvml: ModuleType, handle: Any, ids: Sequence[int]) -> FieldRead:
    """Read ``ids`` of the GPU ``handle`` in one call.

    Raises ``NVMLError`` when the call itself fails (FunctionNotFound on an old driver);
    per-field failures are None in the result.
    """
    unique = list(dict.fromkeys(ids))
    entries = nvml.nvmlDeviceGetFieldValues(handle, unique)
    permanent = (nvml.NVML_ERROR_NOT_SUPPORTED, nvml.NVML_ERROR_NO_PERMISSION)
    values: dict[int, float | None] = {}
    refused: list[int] = []
    for field, entry in zip(unique, entries, strict=True):
        if entry.nvmlReturn == nvml.NVML_SUCCESS:
            values[field] = _decode(nvml, entry)
        else:
            values[field] = None
            if entry.nvmlReturn in permanent:
                refused.append(field)
    return FieldRead(values, refused)
