"""CPU seconds of finished child processes, as bash's ``times`` reported them.

The kernel adds a process's user and system time, and those of every descendant it waited
for, to its parent's ``RUSAGE_CHILDREN`` when the parent reaps it: the difference across a
stage is that stage's CPU, whatever it started (a stage that kept two cores busy shows about
twice its wall seconds).
"""

from __future__ import annotations

import resource

__all__ = ["child_cpu_s", "cpu_s"]


def cpu_s(usage: resource.struct_rusage) -> float:
    """User plus system seconds of ``usage``."""
    return usage.ru_utime + usage.ru_stime


def child_cpu_s() -> float:
    """CPU seconds of every child this process has reaped so far (theirs included)."""
    return cpu_s(resource.getrusage(resource.RUSAGE_CHILDREN))
