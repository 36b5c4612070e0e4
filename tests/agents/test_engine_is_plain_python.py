"""The engine is plain Python: importing all of it loads no Django (STYLE, SPEC 6)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import agents


def test_importing_every_engine_module_loads_no_django() -> None:
    modules = sorted(
        "agents." + ".".join(path.relative_to(Path(agents.__file__).parent).with_suffix("").parts)
        for path in Path(agents.__file__).parent.rglob("*.py")
        if path.name != "__init__.py"
    )
    code = f"import sys; import {', '.join(modules)}; print('django' in sys.modules)"

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
