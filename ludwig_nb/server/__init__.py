"""ludwig_nb.server."""
