"""The feature types the built-in preprocessing handles (no pandas: a cell's cheap checks read it).

The built-in engine's capabilities (engines/builtin/capabilities.py) take them from here and
refuse the rest by name; ``pipeline.py`` implements them.
"""

from __future__ import annotations

__all__ = ["INPUT_TYPES", "OUTPUT_TYPES"]

INPUT_TYPES = ("binary", "number", "category", "text", "set", "bag", "vector", "date", "sequence")
OUTPUT_TYPES = ("binary", "category", "number", "set", "vector")
