"""The data layer's small table and config, which the preprocessing tests fit and transform."""

from tests.data.conftest import config, frame

__all__ = ["config", "frame"]
