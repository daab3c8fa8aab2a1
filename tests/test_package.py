"""The package itself: cheap import, stdlib-only core, the Jupyter entry points."""

import ast
import subprocess
import sys
from pathlib import Path

import ludwig_nb

PACKAGE = Path(ludwig_nb.__file__).parent


def test_import_is_cheap_no_torch_no_nvml_no_threads():
    code = (
        "import sys, threading; before = threading.active_count(); import ludwig_nb; "
        "import ludwig_nb.core.events, ludwig_nb.core.state, ludwig_nb.config; "
        "heavy = [m for m in ('torch', 'pynvml', 'ipywidgets', 'bqplot', 'pandas') "
        "if m in sys.modules]; "
        "print(heavy, threading.active_count() - before)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] 0"


def test_the_run_layer_loads_no_search_module_and_the_search_loads_neither_optuna_nor_ray():
    code = (
        "import sys; from ludwig_nb.runs import train; "
        "before = sorted(m for m in sys.modules if m.startswith('ludwig_nb.search')); "
        "import ludwig_nb; hyperopt = ludwig_nb.hyperopt; "
        "from ludwig_nb.search import Search; "
        "heavy = [m for m in ('optuna', 'ray', 'torch', 'pandas') if m in sys.modules]; "
        "print(before, Search.__module__, hyperopt.__module__, heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "ludwig_nb.search.handle", "ludwig_nb.search.api", "[]"]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_core_uses_only_the_standard_library():
    allowed = set(sys.stdlib_module_names) | {"ludwig_nb", "__future__"}
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(_imports(path) - allowed)
        for path in (PACKAGE / "core").glob("*.py")
        if _imports(path) - allowed
    }
    assert offenders == {}


def test_core_never_imports_upper_layers():
    offenders = []
    for path in (PACKAGE / "core").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            module = (node.module or "") if isinstance(node, ast.ImportFrom) else ""
            if module.startswith("ludwig_nb.") and not module.startswith("ludwig_nb.core"):
                offenders.append(f"{path.name}: {module}")
    assert offenders == []


def test_jupyter_entry_points():
    assert ludwig_nb._jupyter_labextension_paths() == [{"src": "labextension", "dest": "ludwig-nb"}]
    assert ludwig_nb._jupyter_server_extension_points() == [{"module": "ludwig_nb"}]


def test_unknown_attribute_is_an_attribute_error():
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ludwig_nb.nope


def test_core_touches_no_file_and_starts_no_thread():
    io_modules = {"os", "pathlib", "tempfile", "shutil", "io", "subprocess", "socket", "glob"}
    offenders = {}
    for path in PACKAGE.joinpath("core").rglob("*.py"):
        text = path.read_text()
        found = sorted(_imports(path) & io_modules)
        found += [call for call in ("open(", "Thread(", "Timer(") if call in text]
        if found:
            offenders[str(path.relative_to(PACKAGE))] = found
    assert offenders == {}
