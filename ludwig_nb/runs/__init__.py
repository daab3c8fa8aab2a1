"""ludwig_nb.runs."""
