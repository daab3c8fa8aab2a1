"""``DataError``: a dataset that cannot be trained on, said in one line."""

from __future__ import annotations

__all__ = ["DataError", "DataWarning"]


class DataError(ValueError):
    """The dataset is missing, unreadable or does not fit the config.

    The message is one line that names the file, column or split at fault and, where it
    can, what to do (e.g. the closest column name).
    """


class DataWarning(UserWarning):
    """The dataset trains, but probably not as meant.

    The dataset trains, but probably not as meant (an input with no values, an input that reads the
    target, a target with more classes than the vocabulary keeps).
    """
