"""Write notebooks/05_colab.ipynb (the Colab walkthrough) from the cell sources below.

    python scripts/build/colab_notebook.py        # write the notebook (no outputs)
    python scripts/build/execute_notebooks.py notebooks/05_colab.ipynb   # store reference outputs

Kept apart from scripts/build/notebooks.py so the two can change independently. Cells whose
output depends on the platform (Colab or not, GPU or not) carry ``nbval-ignore-output``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

PATH = Path(__file__).resolve().parents[2] / "notebooks" / "05_colab.ipynb"
# PLACEHOLDER: the repository's public URL is not known yet; replace OWNER/REPO here and
# in README.md when it is (the notebook and the badge point at this file on `main`).
REPO_URL = "https://github.com/OWNER/REPO"
COLAB_URL = "https://colab.research.google.com/github/OWNER/REPO/blob/main/notebooks/05_colab.ipynb"


def md(text: str) -> nbformat.NotebookNode:
    return new_markdown_cell(text.strip())


def code(text: str, ignore: bool = False) -> nbformat.NotebookNode:
    return new_code_cell(text.strip(), metadata={"tags": ["nbval-ignore-output"]} if ignore else {})


CELLS = [
    md(f"""
# ludwig_nb in Google Colab

[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({COLAB_URL})

Train a Ludwig config from a cell and watch the GPU while it trains, in Colab's own kernel.
For a GPU: *Runtime → Change runtime type → T4 GPU* (L4 and A100 work the same way).

What is different in Colab, and why:

* **The install keeps Colab's kernel stack.** ludwig_nb accepts Colab's pinned IPython 7.34,
  ipykernel 6.17.1, ipywidgets 7.7.1, jupyter-server 2.14 and tornado 6.5.1, so the install
  below upgrades none of them (no runtime restart).
* **Core widgets only.** Colab renders the built-in ipywidgets 7 widgets; custom widgets need
  its CDN widget manager. So the charts are drawn in the kernel as SVG. To use bqplot
  instead, run `%pip install 'bqplot>=0.12.47,<0.13'` (bqplot 0.13 needs ipywidgets 8) and
  `%config LudwigMagics.charts = "bqplot"` (this enables Colab's custom widget manager,
  which loads widget code from Google's CDN).
* **A training cell blocks.** Colab draws widget updates only while a cell runs, so the
  training cell stays busy while the model trains (in its own thread) and keeps the
  dashboard live; *Interrupt* stops the run gracefully, and the cell ends with a static
  summary. `--background` returns at once instead (see the end).

(`OWNER/REPO` in the links is a placeholder until the repository's public address is set.)
"""),
    code(f"""
# Install ludwig_nb into Colab's kernel (skipped where it is already installed).
import importlib.util

if importlib.util.find_spec("ludwig_nb") is None:
    %pip install -q "ludwig_nb @ git+{REPO_URL}.git"
"""),
    code("%load_ext ludwig_nb"),
    md("""
## The GPU

Utilisation, memory, temperature against the card's slowdown and shutdown levels, power
against its limit, and the reasons the clocks are held back (power cap, thermal slowdown),
read through NVML: Colab's own resource panel shows none of the last three. Without a GPU
runtime it says why and shows the host's CPU and RAM.
"""),
    code("%gpu_watch --history 5m", ignore=True),
    md("""
## Train

The cell blocks while the run trains and ends as the run's summary. Press *Interrupt* to stop
it early: it stops at the next step and keeps the model trained so far.
"""),
    code(
        """
%%ludwig_config --dataset demo:churn --name churn
input_features:
  - {name: international_plan, type: binary}
  - {name: voice_mail_plan, type: binary}
  - {name: total_day_minutes, type: number}
  - {name: total_eve_minutes, type: number}
  - {name: number_customer_service_calls, type: number}
output_features:
  - {name: churn, type: binary}
combiner: {type: concat, num_fc_layers: 2, output_size: 64}
trainer: {epochs: 8, batch_size: 64, learning_rate: 0.002}
""",
        ignore=True,
    ),
    code("churn.wait().status"),
    md("""
## Keep the notebook free while it trains

`--background` returns at once. In Colab that dashboard does not move while no cell runs;
`run.wait()` blocks until the end and returns the handle, and `ludwig_nb.show(run)` in any
later cell shows the live dashboard again, caught up from the start.
"""),
    code(
        """
%%ludwig_config --dataset demo:churn --name churn_bg --background
input_features:
  - {name: international_plan, type: binary}
  - {name: voice_mail_plan, type: binary}
  - {name: total_day_minutes, type: number}
  - {name: total_eve_minutes, type: number}
  - {name: number_customer_service_calls, type: number}
output_features:
  - {name: churn, type: binary}
combiner: {type: concat, num_fc_layers: 2, output_size: 64}
trainer: {epochs: 4, batch_size: 64, learning_rate: 0.002}
""",
        ignore=True,
    ),
    code(
        """
import ludwig_nb

ludwig_nb.show(churn_bg)  # blocks in Colab until the run ends, live
""",
        ignore=True,
    ),
    code("churn_bg.wait().status"),
    code("%gpu_watch --stop"),
    md(
        "The notebook's check: the background run trained every planned step, completed, and "
        "beats always answering 'no' on its test split (rows it never trained on)."
    ),
    code("""
assert churn_bg.status == "completed" and churn_bg.step == churn_bg.total_steps > 0, churn_bg
test_rows = churn_bg.splits["test"]
assert churn_bg.splits["training"].index.intersection(test_rows.index).empty
accuracy = churn_bg.model.evaluate(test_rows)["churn"]["accuracy"]
always_no = churn_bg.state.baseline["test"]["churn"]["accuracy"]
assert accuracy > always_no + 0.02, (accuracy, always_no)
"""),
]


def main() -> None:
    nb = new_notebook(cells=CELLS)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["accelerator"] = "GPU"  # Colab: open with a GPU runtime
    nb.metadata["colab"] = {"provenance": [], "gpuType": "T4"}
    nbformat.write(nb, PATH)
    print("wrote", PATH)


if __name__ == "__main__":
    main()
