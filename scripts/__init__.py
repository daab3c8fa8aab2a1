"""Scripts that set up, check and build ludwig_nb (see scripts/README.md); not shipped."""
