"""The side venvs (Colab's pins, real Ludwig, Ray), built in the background while the main
stages run, and waited for just before the stage that needs each.

    python3 -m scripts.ci.envs start [NAME...]      # start the builds not running or done
    python3 -m scripts.ci.envs wait NAME [CMD...]   # wait for NAME's build, then run CMD
    python3 -m scripts.ci.envs stop                 # end the builds still running

Each build is ``scripts/setup/<name>_env.sh`` as it is (its cache key and cache directory,
``LUDWIG_NB_ENV_CACHE``, unchanged), writing its own log; a cached venv costs seconds. The
builds are pip installs (unpacking, byte-compiling: CPU as well as disk), so they form lanes:
the names of one lane build one after the other, the lanes side by side
(``LUDWIG_NB_ENV_LANES``, default ``"colab,ray ludwig"``: the biggest build, Ludwig's 6.9 GB, on
a lane of its own beside the two smaller ones). A lane is a process group of its own that
outlives the command that started it (``setup.sh`` starts them, the test stages wait).

State (logs, pids, exit codes, seconds, CPU seconds) lives in ``LUDWIG_NB_ENV_STATE``
(default ``artifacts/env-builds`` in the clone). ``wait`` on a name no ``start`` launched
returns at once: the stage's own script then builds or reuses the venv in the foreground.
Standard library only: ``setup.sh`` starts the builds before the project's venv exists.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from scripts.ci.usage import child_cpu_s

__all__ = ["ALL", "EnvBuilds", "main"]

ROOT = Path(__file__).resolve().parents[2]
ALL = ("colab", "ludwig", "ray")
DEFAULT_LANES = "colab,ray ludwig"
_TAIL_LINES = 40


class EnvBuilds:
    """The builds' state directory and what can be done with it.

    Args:
        state: Where each build keeps ``NAME.pid`` (its lane's process group), ``NAME.log``,
            ``NAME.rc``, ``NAME.seconds`` and ``NAME.cpu``.
        root: The clone (its ``scripts/setup/<name>_env.sh`` build the venvs).
        lanes: Lanes separated by spaces, the names of a lane by commas.
        ci: Under CI a build that failed stays failed (its stage shows why); by hand, a
            second ``start`` builds it again.
        sleep: Waits this many seconds between looks at a running build (a parameter, so
            tests need not wait).
    """

    def __init__(
        self,
        state: Path,
        *,
        root: Path = ROOT,
        lanes: str = DEFAULT_LANES,
        ci: bool = False,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.state, self.root, self.lanes, self.ci, self.sleep = state, root, lanes, ci, sleep

    def _file(self, name: str, kind: str) -> Path:
        return self.state / f"{name}.{kind}"

    def _read(self, name: str, kind: str) -> str | None:
        try:
            return self._file(name, kind).read_text().strip()
        except OSError:
            return None

    def script(self, name: str) -> Path:
        """The script that builds (or finds) the venv ``name``."""
        return self.root / "scripts" / "setup" / f"{name}_env.sh"

    def running(self, name: str) -> bool:
        """``name``'s build has no exit code yet and its lane's process group is alive."""
        pid = self._read(name, "pid")
        return pid is not None and self._read(name, "rc") is None and _group_alive(int(pid))

    def built(self, name: str) -> bool:
        """A finished build of ``name`` succeeded and its venv is still there."""
        if self._read(name, "rc") != "0":
            return False
        log = (self._read(name, "log") or "").splitlines()
        return bool(log) and (Path(log[-1]) / ".complete").is_file()

    def start(self, names: Sequence[str] = ALL) -> list[list[str]]:
        """Start a lane for each lane's names that are neither running nor built.

        Returns:
            The chains started, one list of names per lane.
        """
        self.state.mkdir(parents=True, exist_ok=True)
        chains = []
        for lane in self.lanes.split():
            chain = [n for n in lane.split(",") if n in names and self._wants_build(n)]
            if not chain:
                continue
            for name in chain:
                for kind in ("rc", "seconds", "cpu", "pid"):
                    self._file(name, kind).unlink(missing_ok=True)
            argv = [sys.executable, "-m", "scripts.ci.envs", "_lane", str(self.state)]
            pid = _detached([*argv, str(self.root), *chain])
            for name in chain:  # written here, so that `wait` never finds a gap
                self._file(name, "pid").write_text(f"{pid}\n")
            logs = f"{self.state}/<name>.log"
            print(f"envs: building {' '.join(chain)} in the background (logs: {logs})", flush=True)
            chains.append(chain)
        return chains

    def _wants_build(self, name: str) -> bool:
        if not self.script(name).is_file() or self.running(name) or self.built(name):
            return False
        # a build that failed earlier in this CI run stays failed (its stage shows why)
        return not (self.ci and self._read(name, "rc") is not None)

    def wait(self, name: str, out: Callable[[str], None] = print) -> int:
        """Wait for ``name``'s build; 0 when it succeeded (or none was started), else 1.

        A failed build, or a lane that ended without writing its exit code, prints the last
        lines of the build's log.
        """
        pid = self._read(name, "pid")
        if pid is None:
            return 0
        t0 = time.monotonic()
        while self._read(name, "rc") is None:
            if not _group_alive(int(pid)):
                self.sleep(1.0)  # the lane may have written its exit code as it ended
                if self._read(name, "rc") is None:
                    out(f"envs: the build of {name} ended without an exit code; its log's tail:")
                    out(self._tail(name))
                    return 1
            self.sleep(1.0)
        rc = self._read(name, "rc")
        out(
            f"envs: the build of {name} ended in the background after "
            f"{self._read(name, 'seconds') or '?'} s ({self._read(name, 'cpu') or '?'} CPU s), "
            f"exit {rc}; waited {time.monotonic() - t0:.0f} s for it here"
        )
        if rc != "0":
            out(f"envs: the build of {name} failed (exit {rc}); the last lines of its log:")
            out(self._tail(name))
            return 1
        return 0

    def _tail(self, name: str) -> str:
        return "\n".join((self._read(name, "log") or "").splitlines()[-_TAIL_LINES:])

    def stop(self) -> list[str]:
        """End the lanes of the builds still running; returns their names."""
        stopped = []
        for name in ALL:
            if self.running(name):
                pid = int(self._read(name, "pid") or 0)
                print(f"envs: stopping the unfinished build of {name} (group {pid})", flush=True)
                _kill_group(pid)
                stopped.append(name)
        return stopped

    def summary(self) -> list[tuple[str, str, str, str]]:
        """(name, seconds, CPU seconds, exit code) of each build that finished."""
        return [
            (name, seconds, self._read(name, "cpu") or "-", self._read(name, "rc") or "?")
            for name in ALL
            if (seconds := self._read(name, "seconds")) is not None
        ]

    def lane(self, names: Sequence[str]) -> None:
        """Build ``names`` one after the other (the lane process runs this)."""
        for name in names:
            t0, cpu0 = time.monotonic(), child_cpu_s()
            with self._file(name, "log").open("wb") as log:
                rc = subprocess.call(
                    ["bash", str(self.script(name))], stdout=log, stderr=subprocess.STDOUT
                )
            self._file(name, "cpu").write_text(f"{child_cpu_s() - cpu0:.0f}\n")
            self._file(name, "seconds").write_text(f"{time.monotonic() - t0:.0f}\n")
            self._file(name, "rc").write_text(f"{rc}\n")  # last: it says the build is over


def _detached(argv: Sequence[str]) -> int:
    """Start ``argv`` in a process group of its own, not a child of this process.

    Returns:
        The group's id (a ``sh`` leads the new session, starts ``argv`` in the background
        and exits: the lane outlives whoever started it, `stop` ends its whole group, and
        its CPU never counts as a stage's).
    """
    shell = '"$@" </dev/null >/dev/null 2>&1 &'
    starter = subprocess.Popen(["sh", "-c", shell, "sh", *argv], cwd=ROOT, start_new_session=True)
    starter.wait()
    return starter.pid


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)


def from_environment(sleep: Callable[[float], None] = time.sleep) -> EnvBuilds:
    """The builds as the environment configures them (``LUDWIG_NB_ENV_STATE``, ``_LANES``)."""
    state = os.environ.get("LUDWIG_NB_ENV_STATE") or str(ROOT / "artifacts" / "env-builds")
    return EnvBuilds(
        Path(state),
        lanes=os.environ.get("LUDWIG_NB_ENV_LANES") or DEFAULT_LANES,
        ci=os.environ.get("CI") == "true",
        sleep=sleep,
    )


def main(argv: Sequence[str]) -> int:
    """The command line (see the module's docstring); returns the exit status."""
    usage = "usage: python3 -m scripts.ci.envs start [NAME...] | wait NAME [CMD...] | stop"
    if not argv:
        print(usage, file=sys.stderr)
        return 2
    command, args = argv[0], list(argv[1:])
    if command == "_lane":  # STATE ROOT NAME...: what `start` runs in the background
        EnvBuilds(Path(args[0]), root=Path(args[1])).lane(args[2:])
        return 0
    builds = from_environment()
    if command == "start":
        unknown = [n for n in args if n not in ALL]
        if unknown:
            print(
                f"envs: no such venv {', '.join(unknown)} (known: {', '.join(ALL)})",
                file=sys.stderr,
            )
            return 2
        builds.start(args or ALL)
        return 0
    if command == "wait" and args:
        rc = builds.wait(args[0], out=lambda line: print(line, file=sys.stderr, flush=True))
        if rc == 0 and len(args) > 1:
            sys.stdout.flush()
            os.execvp(args[1], args[1:])  # the stage itself, in this process's place
        return rc
    if command == "stop":
        builds.stop()
        return 0
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
