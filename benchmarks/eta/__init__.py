"""ETA benchmark: synthetic and recorded traces replayed through ours and the peers'."""
