"""The WebSocket's origin rule: the site's own address (scheme, host and port) or a
trusted origin; another port, scheme or host is another site."""

from __future__ import annotations

import pytest

from chat.origin import same_origin


@pytest.mark.parametrize(
    ("origin", "scheme", "host", "allowed"),
    [
        ("http://localhost:8000", "ws", "localhost:8000", True),
        ("http://localhost:9999", "ws", "localhost:8000", False),  # another port
        ("https://localhost:8000", "ws", "localhost:8000", False),  # another scheme
        ("http://evil.example:8000", "ws", "localhost:8000", False),
        ("https://oracle.example.com", "wss", "oracle.example.com", True),
        ("https://oracle.example.com", "wss", "oracle.example.com:443", True),  # default port
        ("http://oracle.example.com", "ws", "oracle.example.com:80", True),
        ("", "ws", "localhost:8000", False),  # no origin: not a browser page of ours
        ("null", "ws", "localhost:8000", False),
        ("http://localhost:99999", "ws", "localhost:8000", False),  # no such port
    ],
)
def test_only_the_sites_own_origin_opens_the_socket(
    origin: str, scheme: str, host: str, allowed: bool
) -> None:
    assert same_origin(origin, scheme, host) is allowed


def test_a_trusted_origin_is_let_in_behind_a_proxy(settings: object) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://oracle.example.com"]  # type: ignore[attr-defined]
    assert same_origin("https://oracle.example.com", "ws", "127.0.0.1:8000")
    assert not same_origin("https://other.example.com", "ws", "127.0.0.1:8000")
