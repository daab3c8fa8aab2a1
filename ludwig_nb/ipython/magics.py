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

from ludwig_nb.ipython import warmup
from ludwig_nb.ipython.placeholder import Placeholder

__all__ = ["LudwigMagics"]


@magics_class
class LudwigMagics(Magics):
    """Train Ludwig configs from a cell and steer the runs of this kernel."""

    results_dir = Unicode("results", help="Where run directories are created.").tag(config=True)
    frame_rate = Float(4.0, help="Dashboard updates per second (at most).").tag(config=True)
    engine = Unicode(
        "auto",
        help="Default training engine: auto, builtin, ludwig (real Ludwig) or ray (Ray Train).",
    ).tag(config=True)
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
    @argument(
        "--vary", help="With --estimate: one pilot per value, e.g. trainer.batch_size=32,64,128."
    )
    @argument("--results-dir", help="Where the run directory goes (default: results).")
    @argument(
        "--engine",
        help="auto (default: built-in when it can run the config, else Ludwig; Ray Train for "
        "backend: {type: ray}), builtin, ludwig, ray.",
    )
    @argument("--device", help='"cpu", "cuda", "cuda:1"; default: the first GPU, else CPU.')
    @argument("--seed", type=int, help="Random seed (default 42, as in Ludwig).")
    @argument("--threads", type=int, help="CPU threads for training (default: cores - 1).")
    @argument(
        "--profile-steps",
        type=int,
        default=0,
        help="Record N steps with torch.profiler (trace + top ops in the run directory).",
    )
    @cell_magic
    def ludwig_config(self, line: str, cell: str) -> None:
        """Validate the Ludwig config in this cell and train it in the background.

        The live dashboard comes at once (progress, ETA, curves and GPU gauges); the run's
        thread then reads the dataset, and the cell returns once it is read and checked (a
        data mistake is this cell's error), while preprocessing and training go on with the
        kernel free. The run handle is bound to ``--name``. In
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
        with warmup.holding():  # the warm-up (pandas, torch) waits: dashboard, data first
            pending = self._prepare_run(args, cell)
            if pending is None:  # --estimate: shown already
                return
            from ludwig_nb.ui.show import detect_mode

            block = True if args.wait else False if args.background else None  # None: Colab
            if block or (block is None and detect_mode() == "colab"):
                pending.start()
                self._data_checked(pending, None)  # a blocking view shows the run to its end
                self._bind(args, pending.run)
            else:  # the dashboard first, then the dataset is read on the run's thread
                try:
                    view = self._show(pending.run, block=False)
                except BaseException:
                    pending.discard()  # never started: nothing of it stays
                    raise
                pending.start()
                self._data_checked(pending, view)
                self._bind(args, pending.run)
                return
        self._show(pending.run, block=block)  # pumps until the run ends: torch need not wait
        if args.wait:
            pending.run.wait()

    def _show(self, run: Any, *, block: bool | None) -> Any:
        """Show ``run``'s view in the cell (blocking: until the run ends); returns the view."""
        from ludwig_nb.runs.monitoring import sampler_of
        from ludwig_nb.ui.show import show_view

        return show_view(
            run, fps=self.frame_rate, block=block, sampler=sampler_of(run), charts=self.charts
        )

    def _data_checked(self, pending: Any, view: Any) -> None:
        """Wait for the run's thread to read and check the dataset.

        A data mistake is the cell's error, as when it was checked before the thread started:
        the dashboard is taken back and the run removed (``UsageError``). An interrupt while
        waiting stops the run.
        """
        from ludwig_nb.data import DataError
        from ludwig_nb.ui.show import discard_view

        try:
            pending.data_checked()
        except (DataError, OSError, ValueError) as exc:  # each says where
            if view is not None:
                discard_view(view)
            raise UsageError(str(exc)) from None
        except KeyboardInterrupt:
            pending.run.stop("interrupt")
            raise

    def _prepare_run(self, args: Any, cell: str) -> Any:
        """Check the config and the dataset source and prepare the run, behind a placeholder line.

        Returns the ``PendingRun`` (not started), or None after an
        ``--estimate``. Raises ``UsageError`` for a config, dataset or option mistake. Nothing
        here reads the dataset (but ``--estimate``): the run's thread does, once the dashboard
        is up.
        """
        # a config mistake is reported at once, with nothing before it; the placeholder
        # comes next, before the widget libraries (imported by then or not)
        config = _load_cell_config(cell)
        if not args.dataset:
            raise UsageError(
                "--dataset is required: a DataFrame variable, a file path or demo:<name>"
            )
        if args.vary and not args.estimate:
            raise UsageError("--vary needs --estimate (it runs one pilot per value, no full run)")
        placeholder = Placeholder.for_shell(self.shell, args.name or "run")
        try:
            placeholder.say(f"checking the dataset {args.dataset}")
            dataset = self._resolve_dataset(args.dataset)
            if args.estimate:
                placeholder.say(f"reading the dataset {args.dataset} for the estimate")
                self._estimate(config, dataset, args, placeholder)
                return None
            placeholder.say("preparing the run")
            pending = self._prepare(config, dataset, args, args.engine or self.engine)
            import ludwig_nb.ui.dashboard  # noqa: F401  (loaded before the run's thread starts)
        finally:
            placeholder.clear()  # the dashboard or the error takes its place
        return pending

    def _bind(self, args: Any, run: Any) -> None:
        """Bind the run to ``--name`` (and ``_ludwig_run``) once its data is checked."""
        if args.name:
            self._user_ns[args.name] = run
        self._user_ns["_ludwig_run"] = run

    def _prepare(self, config: Any, dataset: Any, args: Any, engine: str) -> Any:
        from ludwig_nb.config import ConfigError
        from ludwig_nb.data import DataError
        from ludwig_nb.engines.base import EngineUnavailable
        from ludwig_nb.runs.api import prepare_run

        try:
            return prepare_run(
                config,
                dataset,
                name=args.name or "run",
                results_dir=args.results_dir or self.results_dir,
                device=args.device,
                engine=engine,
                random_seed=args.seed,
                threads=args.threads,
                profile_steps=args.profile_steps,
            )
        except ConfigError as err:  # the engine cannot run it: at the cell's line numbers
            raise UsageError(str(err.shifted(1))) from None
        except (DataError, EngineUnavailable, OSError, ValueError) as exc:  # each says where
            raise UsageError(str(exc)) from None

    def _estimate(self, config: Any, dataset: Any, args: Any, placeholder: Placeholder) -> None:
        from IPython.display import display

        from ludwig_nb.config import ConfigError
        from ludwig_nb.data import DataError
        from ludwig_nb.engines.base import EngineUnavailable
        from ludwig_nb.runs import estimate

        vary = _parse_vary(args.vary) if args.vary else None
        try:
            prediction = estimate(
                config, dataset, vary=vary, device=args.device, engine=args.engine or self.engine
            )
        except ConfigError as err:
            raise UsageError(str(err.shifted(1))) from None
        except (DataError, EngineUnavailable, ValueError) as exc:
            raise UsageError(str(exc)) from None
        placeholder.clear()
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

    # -- compare ---------------------------------------------------------------------
    @magic_arguments()
    @argument("runs", nargs="+", help="Run names of this kernel, variables or run directories.")
    @line_magic
    def ludwig_compare(self, line: str) -> Any:
        """Compare runs side by side.

        Config diff, metrics with deltas, time, resources and learning curves; the first run is the
        base. Runs are names of this kernel's runs, variables holding run handles, ludwig_nb run
        directories or Ludwig output directories.

        Example::

            %ludwig_compare baseline wider results/old-run-20260101-120000-ab12
        """
        from ludwig_nb.ui.compare_view import compare

        args = parse_argstring(self.ludwig_compare, line)
        sources = [self._resolve_run(spec) for spec in args.runs]
        try:
            return compare(*sources)
        except (FileNotFoundError, ValueError) as exc:
            raise UsageError(str(exc)) from None

    def _resolve_run(self, spec: str) -> Any:
        from ludwig_nb.runs import live

        run = live.find_run(spec)
        if run is not None:
            return run
        value = self._user_ns.get(spec)
        if value is not None and hasattr(value, "directory"):
            return value
        if Path(spec).expanduser().is_dir():
            return Path(spec).expanduser()
        raise UsageError(
            f"{spec!r} is not a run of this kernel, a variable holding a run, or a directory"
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
        from ludwig_nb.search import hyperopt
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
    @magic_arguments()
    @argument("--live", action="store_true", help="Only runs that are training now.")
    @argument("--all", action="store_true", help="Also finished runs of other kernels.")
    @line_magic
    def ludwig_runs(self, line: str) -> Any:
        """Show this kernel's runs, then other kernels' live runs grouped by notebook."""
        from IPython.display import HTML

        from ludwig_nb.ipython.runs_table import runs_table_html

        args = parse_argstring(self.ludwig_runs, line)
        which = "all" if args.all else "live" if args.live else "default"
        return HTML(runs_table_html(which=which))

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


def _parse_vary(text: str) -> dict[str, list[Any]]:
    """``trainer.batch_size=32,64,128`` -> ``{"trainer.batch_size": [32, 64, 128]}``."""
    import yaml

    path, sep, values = text.partition("=")
    if not sep or not path.strip() or not values.strip():
        raise UsageError(f"--vary {text!r}: expected PATH=V1,V2,... e.g. trainer.batch_size=32,64")
    return {path.strip(): [yaml.safe_load(v) for v in values.split(",") if v.strip()]}


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


def _load_cell_config(cell: str) -> Any:
    """Parse the cell; a ConfigError becomes one UsageError at the cell's line numbers."""
    from ludwig_nb.config import ConfigError, load_config

    try:
        return load_config(cell)
    except ConfigError as err:
        raise UsageError(str(err.shifted(1))) from None
