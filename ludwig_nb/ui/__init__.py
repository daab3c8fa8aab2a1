"""ludwig_nb.ui."""
