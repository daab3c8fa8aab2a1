"""ludwig_nb.engines."""
