"""The CI stage runner (``python3 -m scripts.ci``) and the side venvs' background builds."""
