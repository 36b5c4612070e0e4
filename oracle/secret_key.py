"""The SECRET_KEY that signs sessions: the operator's, which must be set when Oracle is
served over HTTPS (the same on every machine), else one generated once and kept."""

from __future__ import annotations

import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured


def secret_key(configured: str, *, https: bool, var_dir: Path) -> str:
    """SECRET_KEY: the operator's (required over HTTPS), else the one kept under `var_dir`."""
    if configured:
        return configured
    if https:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when ORACLE_HTTPS is on (for example: "
            "python -c 'import secrets; print(secrets.token_urlsafe(50))')."
        )
    # A key generated once and kept (owner-only) so sessions survive restarts.
    key_file = var_dir / "dev-secret-key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()
