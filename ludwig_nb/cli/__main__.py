"""``python -m ludwig_nb.cli``: the ``ludwig-nb`` console script."""

from ludwig_nb.cli.app import entry

entry()
