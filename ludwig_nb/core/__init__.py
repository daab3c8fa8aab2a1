"""Pure logic on the standard library only: events, run state, ETA, alarm policy, series.

Nothing here starts a thread or touches a file (the run directory on disk is ``store``'s).
"""
