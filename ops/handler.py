"""Django's ASGI handler, with its middleware run as one synchronous chain in one thread.

Under ASGI, Django calls each `MiddlewareMixin` middleware's `process_request` and
`process_response` through `sync_to_async`, and WhiteNoise, which is synchronous only,
turns the chain around once more: a request crossed between the event loop and a
thread about sixteen times around its view. Here the chain is built as under WSGI and
entered once, in the request's own thread (Django's `ThreadSensitiveContext`, as
before), so each middleware and a sync view run there straight through; an async view
(the SSE stream) is awaited on the loop from that thread, as Django does for any
async view under a sync middleware.

Measured (bench/README.md, one client at a time): a request that only meets the
middleware cost daphne 3.5 ms of CPU before and 2.3 ms after; a run's three requests
(create a conversation, post, read the SSE) 28 ms before and 24 after.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler


class OneThreadASGIHandler(ASGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        handler: Any = self  # Django's private field, which its stubs leave out
        handler._middleware_chain = sync_to_async(handler._middleware_chain, thread_sensitive=True)
