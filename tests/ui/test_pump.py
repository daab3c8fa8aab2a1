import threading

from ludwig_nb.ui.pump import Pump


class CountingView:
    def __init__(self, close_after=None, fail=False):
        self.frames = []
        self.close_after = close_after
        self.fail = fail

    def refresh(self, now):
        if self.fail:
            raise RuntimeError("broken view")
        self.frames.append(now)

    @property
    def closed(self):
        return self.close_after is not None and len(self.frames) >= self.close_after


def test_a_frame_refreshes_every_view_and_drops_closed_ones():
    pump = Pump(fps=4, clock=lambda: 0.0)
    keep, done = CountingView(), CountingView(close_after=1)
    pump.add(keep)
    pump.add(done)
    pump.frame(1.0)
    pump.frame(2.0)
    assert keep.frames == [1.0, 2.0] and done.frames == [1.0]
    assert pump.views == [keep]


def test_a_broken_view_is_removed_and_does_not_stop_the_others():
    pump = Pump(clock=lambda: 0.0)
    good, bad = CountingView(), CountingView(fail=True)
    pump.add(bad)
    pump.add(good)
    pump.frame(1.0)
    assert pump.views == [good] and good.frames == [1.0]


class VirtualClock:
    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def test_thread_mode_paces_frames_at_the_frame_rate_on_virtual_time():
    clock = VirtualClock()
    pump = Pump(fps=4, clock=clock, sleep=clock.sleep)
    view = CountingView(close_after=5)
    finished = threading.Event()
    original = view.refresh

    def refresh(now):
        original(now)
        if view.closed:
            finished.set()

    view.refresh = refresh
    pump.add(view)
    pump.start()
    assert finished.wait(5)
    pump.stop()
    assert view.frames == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_main_thread_mode_runs_until_done_and_interrupt_becomes_a_stop():
    clock = VirtualClock()
    pump = Pump(fps=2, clock=clock, sleep=clock.sleep)
    view = CountingView()
    pump.add(view)
    state = {"stopped": False, "raised": False}

    def done():
        if clock.now >= 1.0 and not state["raised"]:
            state["raised"] = True
            raise KeyboardInterrupt
        return state["stopped"] and clock.now >= 2.0

    pump.run_until(done, on_interrupt=lambda: state.update(stopped=True))
    assert state["stopped"] and view.frames[-1] >= 2.0
    assert all(b - a >= 0.5 for a, b in zip(view.frames, view.frames[1:-1], strict=False))
