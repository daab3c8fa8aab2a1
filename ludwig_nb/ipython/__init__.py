"""ludwig_nb.ipython."""
