"""The public names: one table per package `__init__` drives `__all__`, lazy loading and `__dir__`; the
`TYPE_CHECKING` imports that static type checkers read name exactly the table's entries."""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGES = ("segmetrics_torch", "segmetrics_torch.metrics")


def _type_checking_imports(module) -> dict[str, str]:
    """``name -> "." + submodule`` of the imports inside the module's ``if TYPE_CHECKING:`` block."""
    tree = ast.parse(Path(module.__file__).read_text())
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.level == 1
                for alias in stmt.names:
                    assert alias.asname == alias.name, "re-export explicitly: `import X as X`"
                    out[alias.name] = "." + stmt.module
    return out


@pytest.mark.parametrize("name", PACKAGES)
def test_type_checking_imports_equal_the_table(name):
    module = importlib.import_module(name)
    assert _type_checking_imports(module) == module._API


@pytest.mark.parametrize("name", PACKAGES)
def test_table_drives_all_getattr_and_dir(name):
    module = importlib.import_module(name)
    assert set(module.__all__) - {"__version__"} == set(module._API)
    assert len(module.__all__) == len(set(module.__all__))
    for public in module._API:
        value = getattr(module, public)
        defining = importlib.import_module(module._API[public], name)
        assert value is getattr(defining, public)
        assert public in getattr(defining, "__all__", [public])
        assert public in dir(module)
    with pytest.raises(AttributeError):
        module.NoSuchName  # noqa: B018


def test_metric_families_export_exactly_the_table():
    from segmetrics_torch import metrics

    for family in set(metrics._API.values()):
        module = importlib.import_module(family, "segmetrics_torch.metrics")
        assert set(module.__all__) == {n for n, f in metrics._API.items() if f == family}


def test_top_level_table_names_every_metric():
    import segmetrics_torch
    from segmetrics_torch import metrics

    assert {n for n, m in segmetrics_torch._API.items() if m == ".metrics"} == set(metrics._API)


def test_importing_the_package_imports_no_torch():
    code = ("import sys, segmetrics_torch, segmetrics_torch.metrics; dir(segmetrics_torch); "
            "print(sorted(m for m in ('torch', 'torchmetrics', 'numba') if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
