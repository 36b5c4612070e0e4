"""A new engineer opens no module of the product over 300 lines (issue 24): Python
outside tests, migrations and `bench/`, and the pages' own scripts (not the vendored
ones). A module that grows past it is split by what its parts answer."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOST = 300
NOT_THE_PRODUCT = {".git", ".venv", ".venv-bench", "var", "tests", "bench", "node_modules"}


def _modules() -> list[Path]:
    found = list(ROOT.glob("*.py")) + list((ROOT / "static" / "js").rglob("*.js"))
    for folder in ROOT.iterdir():
        if folder.is_dir() and folder.name not in NOT_THE_PRODUCT:
            if folder.name.startswith(".") or folder.name.endswith(".egg-info"):
                continue
            found += [path for path in folder.rglob("*.py") if "migrations" not in path.parts]
    return found


def test_no_module_of_the_product_is_over_300_lines() -> None:
    modules = _modules()
    long = {
        str(path.relative_to(ROOT)): lines
        for path in modules
        if (lines := len(path.read_text().splitlines())) > MOST
    }

    assert any(path.name == "chat.js" for path in modules)  # the scripts are read
    assert long == {}
