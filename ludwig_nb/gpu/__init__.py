"""ludwig_nb.gpu."""
