"""ludwig_nb.data."""
