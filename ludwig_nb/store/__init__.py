"""Persistence: the run directory and the run registry on disk.

Atomic writes, ``events.ndjson`` read back in pages, ``status.json``, control files
(rundir.py), the registry of live and recent runs (registry.py), and making a run's
directory with OS errors said in one line (directories.py). Standard library and ``core``
only: the kernel writes through it and the Jupyter server reads through it.
"""
