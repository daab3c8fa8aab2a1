from ludwig_nb.core.eta.changes import Cusum


def test_cusum_quiet_on_noise_alarms_on_a_shift():
    c = Cusum(k=0.5, h=8.0)
    noise = [0.4, -0.3, 0.2, -0.5, 0.1, 0.0, -0.2, 0.3] * 10
    assert all(c.update(z) is None for z in noise)
    alarms = [c.update(2.0) for _ in range(10)]
    fired = [a for a in alarms if a is not None]
    assert fired
    assert 80 - 1 <= fired[0] <= 80 + 1  # the first shifted observation


def test_cusum_one_outlier_does_not_alarm():
    c = Cusum(k=0.5, h=8.0, clip=3.0)
    assert c.update(50.0) is None  # clipped to 3
    assert all(c.update(0.0) is None for _ in range(20))


def test_cusum_detects_a_drop():
    c = Cusum()
    fired = [c.update(-2.5) for _ in range(6)]
    assert any(f == 0 for f in fired if f is not None)
