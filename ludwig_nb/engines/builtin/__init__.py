"""ludwig_nb.engines.builtin."""
