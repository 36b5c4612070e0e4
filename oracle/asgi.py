"""ASGI entry point: HTTP through Django, WebSockets through Channels."""

from __future__ import annotations

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oracle.settings")

# Django must be set up before anything imports models (consumers do).
django.setup(set_prefix=False)

from ops.handler import OneThreadASGIHandler, warm_up  # noqa: E402
from oracle.request_bodies import leave_form_bodies_to_django  # noqa: E402

leave_form_bodies_to_django()

django_asgi_app = OneThreadASGIHandler()
warm_up()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from chat.origin import SameOriginValidator  # noqa: E402
from oracle.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": SameOriginValidator(
            # types-channels wants a list of its stub-only URLPattern subclass.
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))  # type: ignore[arg-type]
        ),
    }
)
