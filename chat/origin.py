"""The WebSocket's origin check: a page may open the conversation socket only from the
site itself. Channels' `AllowedHostsOriginValidator` compares the origin's host with
ALLOWED_HOSTS and ignores its scheme and port, so another site served on another port
of the same host (`http://localhost:9999`) could open it with the user's cookie.

Here the origin must be the address the socket was asked for (its scheme, host and
port, default ports left out) or one of CSRF_TRUSTED_ORIGINS (a proxy that rewrites
the Host header), as Django's own CSRF check asks of a form's origin; and its host
must be in ALLOWED_HOSTS, as before.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import AllowedHostsOriginValidator, WebsocketDenier
from django.conf import settings

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
WEB_SCHEME = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


def _address(scheme: str, netloc: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a web address, http or https; None if it is not one."""
    try:
        parts = urlsplit(f"{scheme}://{netloc}")
        port = parts.port or DEFAULT_PORTS.get(scheme)
    except ValueError:
        return None
    if not parts.hostname or port is None:
        return None
    return WEB_SCHEME.get(scheme, scheme), parts.hostname, port


def same_origin(origin: str, scheme: str, host_header: str) -> bool:
    """Whether `origin` is the site at `host_header` (asked for over `scheme`, ws or
    wss) or one of CSRF_TRUSTED_ORIGINS."""
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    parts = urlsplit(origin)
    theirs = _address(parts.scheme, parts.netloc) if parts.scheme in ("http", "https") else None
    return theirs is not None and theirs == _address(scheme, host_header)


class SameOriginValidator:
    """ASGI middleware: a WebSocket handshake from any other origin gets a 403."""

    def __init__(self, application: Any) -> None:
        self.application = AllowedHostsOriginValidator(application)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket":
            headers = dict(scope.get("headers") or [])
            origin = headers.get(b"origin", b"").decode("latin-1")
            host = headers.get(b"host", b"").decode("latin-1")
            if not same_origin(origin, scope.get("scheme") or "ws", host):
                return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
