# mypy: disable-error-code="untyped-decorator,no-untyped-call"
# (IPython's magic_arguments decorators are untyped; the rest of this module is typed.)
"""``%%ludwig_config`` and the run-control magics: thin, declarative, delegating.

Every magic parses its declared arguments, calls library code, and turns a user mistake
(``ConfigError``, ``DataError``, a bad option) into one ``UsageError`` line.
"""

from __future__ import annotations

import html
import shlex
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from traitlets import CaselessStrEnum, Float, Unicode

__all__ = ["LudwigMagics"]


@magics_class
class LudwigMagics(Magics):
    """Train Ludwig configs from a cell and steer the runs of this kernel."""

    results_dir = Unicode("results", help="Where run directories are created.").tag(config=True)
    frame_rate = Float(4.0, help="Dashboard updates per second (at most).").tag(config=True)
    engine = Unicode("builtin", help="Default training engine.").tag(config=True)
    charts = CaselessStrEnum(
        ["auto", "svg", "bqplot"],
        default_value="auto",
        help="Dashboard charts: auto (SVG in Colab unless its custom widget manager is on, "
        "bqplot elsewhere), svg (core widgets only) or bqplot (in Colab: enables the manager).",
    ).tag(config=True)

    @property
    def _user_ns(self) -> dict[str, Any]:
        if self.shell is None:  # only before registration; IPython always sets it
            raise UsageError("ludwig_nb magics need an IPython shell")
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    # -- %%ludwig_config -------------------------------------------------------------
    @magic_arguments()
    @argument("--dataset", "-d", help="A variable, an expression, a file path or demo:<name>.")
    @argument("--name", "-n", help="Variable to bind the run handle to (also the run's name).")
    @argument("--wait", action="store_true", help="Block until the run ends.")
    @argument(
        "--background",
        action="store_true",
        help="Return at once even in Colab (whose cells otherwise block to keep it live).",
    )
    @argument("--estimate", action="store_true", help="Pre-flight time estimate; no full run.")
    @argument("--results-dir", help="Where the run directory goes (default: results).")
    @argument("--engine", help="Training engine (default: builtin).")
    @argument("--device", help='"cpu", "cuda", "cuda:1"; default: the first GPU, else CPU.')
    @argument("--seed", type=int, help="Random seed (default 42, as in Ludwig).")
    @argument("--threads", type=int, help="CPU threads for training (default: cores - 1).")
    @cell_magic
    def ludwig_config(self, line: str, cell: str) -> None:
        """Validate the Ludwig config in this cell and train it in the background.

        The cell returns at once; a live dashboard shows progress, ETA, curves and GPU
        gauges while the kernel stays free. The run handle is bound to ``--name``. In
        Colab the cell blocks while the run trains (Colab draws widget updates only while
        a cell runs); Interrupt stops the run gracefully, ``--background`` returns at once.
        Config mistakes are reported at this cell's line numbers (the magic line is 1).

        Example::

            %%ludwig_config --dataset demo:churn --name churn
            input_features: [{name: tenure, type: number}]
            output_features: [{name: churned, type: binary}]
        """
        args = parse_argstring(self.ludwig_config, line)
        if args.wait and args.background:
            raise UsageError("--wait and --background exclude each other: pick one")
        engine = args.engine or self.engine
        config = _load_cell_config(cell, engine)
        if not args.dataset:
            raise UsageError(
                "--dataset is required: a DataFrame variable, a file path or demo:<name>"
            )
        dataset = self._resolve_dataset(args.dataset)
        if args.estimate:
            self._estimate(config, dataset, args)
            return
        run = self._train(config, dataset, args, engine)
        if args.name:
            self._user_ns[args.name] = run
        self._user_ns["_ludwig_run"] = run
        from ludwig_nb.ui import show_run

        block = True if args.wait else False if args.background else None  # None: Colab blocks
        show_run(run, fps=self.frame_rate, block=block, sampler=run.sampler, charts=self.charts)
        if args.wait:
            run.wait()

    def _train(self, config: Any, dataset: Any, args: Any, engine: str) -> Any:
        from ludwig_nb.data import DataError
        from ludwig_nb.runs import train

        try:
            return train(
                config,
                dataset,
                name=args.name or "run",
                results_dir=args.results_dir or self.results_dir,
                device=args.device,
                engine=engine,
                random_seed=args.seed,
                threads=args.threads,
            )
        except (DataError, FileNotFoundError, ValueError) as exc:
            raise UsageError(str(exc)) from None

    def _estimate(self, config: Any, dataset: Any, args: Any) -> None:
        from IPython.display import display

        from ludwig_nb.data import DataError
        from ludwig_nb.runs import estimate

        try:
            prediction = estimate(config, dataset, device=args.device)
        except (DataError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        display(prediction)

    def _resolve_dataset(self, spec: str) -> Any:
        """A name in the namespace, an expression over it, ``demo:<name>``, or a path."""
        spec = spec.strip()
        if spec.startswith("demo:"):
            from ludwig_nb.data import demo_dataset

            try:
                return demo_dataset(spec.removeprefix("demo:"))
            except (KeyError, ValueError) as exc:
                raise UsageError(str(exc).strip("'\"")) from None
        if spec in self._user_ns:
            return self._user_ns[spec]
        unquoted = shlex.split(spec)[0] if spec[:1] in "\"'" else spec
        if Path(unquoted).expanduser().exists():
            return str(Path(unquoted).expanduser())
        try:
            return eval(spec, self._user_ns)
        except Exception:
            pass
        raise UsageError(
            f"--dataset {spec!r} is neither a variable, an expression nor an existing file"
        )

    # -- %%ludwig_hyperopt -----------------------------------------------------------
    @magic_arguments()
    @argument("--dataset", "-d", help="A variable, an expression, a file path or demo:<name>.")
    @argument("--name", "-n", help="Search name and variable to bind the Search to.")
    @argument("--wait", action="store_true", help="Block until the search ends.")
    @argument("--results-dir", help="Where the search directory goes (default: results).")
    @argument("--device", help='"cpu", "cuda", "cuda:1"; default: the first GPU, else CPU.')
    @argument("--seed", type=int, help="Training seed of every trial (default 42).")
    @cell_magic
    def ludwig_hyperopt(self, line: str, cell: str) -> None:
        """Search the ``hyperopt:`` section of the Ludwig config in this cell.

        Trials train one after another in the background (each an ordinary run); a live
        panel shows the trial table, the curves, the best so far and when the search will
        be done, with Stop/Pause for the search and for a trial. Re-running the cell with
        the same ``--name`` resumes the search; finished trials are not rerun. With
        ``--wait`` the cell blocks and Interrupt stops the search gracefully.
        """
        from ludwig_nb.config import ConfigError
        from ludwig_nb.data import DataError
        from ludwig_nb.runs import hyperopt
        from ludwig_nb.ui.search_panel import show_search

        args = parse_argstring(self.ludwig_hyperopt, line)
        if not args.dataset:
            raise UsageError(
                "--dataset is required: a DataFrame variable, a file path or demo:<name>"
            )
        dataset = self._resolve_dataset(args.dataset)
        try:
            search = hyperopt(
                cell,
                dataset,
                name=args.name or "search",
                results_dir=args.results_dir or self.results_dir,
                device=args.device,
                random_seed=args.seed,
            )
        except ConfigError as err:
            raise UsageError(str(err.shifted(1))) from None
        except (DataError, FileNotFoundError, ValueError) as exc:
            raise UsageError(str(exc)) from None
        self._user_ns[args.name or "search"] = search
        self._user_ns["_ludwig_search"] = search
        show_search(search, fps=self.frame_rate, block=bool(args.wait))

    # -- run control -----------------------------------------------------------------
    @line_magic
    def ludwig_runs(self, line: str) -> Any:
        """Show the runs of this kernel and those registered on this machine."""
        from IPython.display import HTML

        from ludwig_nb.ipython.runs_table import runs_table_html

        return HTML(runs_table_html())

    @magic_arguments()
    @argument("name", nargs="?", help="Run name or id (default: the latest run).")
    @argument("--all", action="store_true", help="Stop every active run of this kernel.")
    @line_magic
    def ludwig_stop(self, line: str) -> None:
        """Stop a run gracefully at the next step (its model and best checkpoint stay)."""
        from ludwig_nb.runs import live

        args = parse_argstring(self.ludwig_stop, line)
        runs = live.active_runs() if args.all else [_find(args.name)]
        for run in runs:
            run.stop()
        print(f"stop requested for {len(runs)} run(s)" if args.all else f"stopping {runs[0].name}")

    @magic_arguments()
    @argument("name", nargs="?", help="Run name or id (default: the latest run).")
    @line_magic
    def ludwig_pause(self, line: str) -> None:
        """Pause a run at the next step boundary (``%ludwig_resume`` continues it)."""
        run = _find(parse_argstring(self.ludwig_pause, line).name)
        run.pause()
        print(f"pausing {run.name}")

    @magic_arguments()
    @argument("name", nargs="?", help="Run name or id (default: the latest run).")
    @line_magic
    def ludwig_resume(self, line: str) -> None:
        """Resume a paused run."""
        run = _find(parse_argstring(self.ludwig_resume, line).name)
        run.resume()
        print(f"resuming {run.name}")


def _find(name: str | None) -> Any:
    from ludwig_nb.runs import live

    if name is None:
        runs = live.all_runs()
        if not runs:
            raise UsageError("no runs in this kernel yet")
        return runs[-1]
    run = live.find_run(name)
    if run is None:
        names = ", ".join(html.escape(r.name) for r in live.all_runs()) or "none"
        raise UsageError(f"no run named {name!r} in this kernel (runs: {names})")
    return run


def _load_cell_config(cell: str, engine: str) -> Any:
    """Parse the cell; a ConfigError becomes one UsageError at the cell's line numbers."""
    from ludwig_nb.config import ConfigError, load_config

    try:
        return load_config(cell, engine=engine)
    except ConfigError as err:
        raise UsageError(str(err.shifted(1))) from None
