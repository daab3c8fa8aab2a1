"""Pure logic on the standard library only: events, run state, ETA, alarm policy, series."""
