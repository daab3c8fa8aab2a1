import pytest


@pytest.fixture(scope="session")
def ip_session():
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython()  # a TerminalInteractiveShell singleton; no tty needed
    shell.run_line_magic("load_ext", "ludwig_nb")
    return shell


@pytest.fixture
def ip(ip_session, tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    ip_session.reset(new_session=False)
    ip_session.run_line_magic("config", f"LudwigMagics.results_dir = {str(tmp_path / 'results')!r}")
    return ip_session
