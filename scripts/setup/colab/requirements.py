"""Print ludwig_nb's runtime requirements (pyproject.toml [project].dependencies), one a line.

Used by scripts/setup/colab_env.sh and scripts/ci/test_colab.sh so that the Colab check
resolves exactly what `pip install ludwig_nb` would, without building the wheel (whose
build step compiles the JupyterLab sidebar).
"""

import sys

import tomllib

with open(sys.argv[1], "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["dependencies"]))
