from ludwig_nb.engines.builtin.engine import default_threads


def test_default_threads_leave_a_core_for_the_kernel():
    assert default_threads(2, {}) == 1
    assert default_threads(16, {}) == 15
    assert default_threads(1, {}) == 1
    assert default_threads(None, {}) == 1


def test_an_explicit_omp_setting_is_respected():
    assert default_threads(16, {"OMP_NUM_THREADS": "4"}) is None
