"""The built-in engine's per-feature preprocessing (Ludwig's rules), saved as model metadata.

Fitted on the rows of every split (as Ludwig fits) and applied to any frame (pipeline.py:
``fit_preprocessing``, ``transform_frame``, ``kept_rows``, ``drop_missing_rows``), one module per
kind of feature (numeric.py, vocab.py, structured.py), the feature types it handles
(feature_types.py, no pandas: a cell's cheap checks read it) and the inverse of a number's
normalisation (number_scale.py, numpy only). Importing the package imports none of them.
"""
