"""Django's ASGI handler, with its middleware run as one synchronous chain in one thread.

Under ASGI, Django calls each `MiddlewareMixin` middleware's `process_request` and
`process_response` through `sync_to_async`, and WhiteNoise, which is synchronous only,
turns the chain around once more: a request crossed between the event loop and a
thread about sixteen times around its view. Here the chain is built as under WSGI and
entered once, in a thread of the process's request pool, so each middleware and a sync
view run there straight through; an async view (the SSE stream) is awaited on the loop
from that thread, as Django does for any async view under a sync middleware.

The pool's threads are kept, as a WSGI server keeps its own: Django's default under
ASGI started a new thread for every request, which then opened a database connection
of its own. Each request closes its thread's connections that are broken or past their
age, at its start and at its end, as Django's request signals do for its own threads.

Measured (bench/README.md, one client at a time): a request that only meets the
middleware cost daphne 3.5 ms of CPU before the one chain and 2.3 ms after; a request
that reads the database about 0.7 ms less again with the kept threads.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponseBase

logger = logging.getLogger(__name__)
# Loaded by Celery and kombu on a process's first send of a task (see `warm_up`).
_LAZY_SENDING = ("celery.app.events", "celery.events.dispatcher", "kombu.utils.limits")

# Each request holds a thread until its view returns (one may wait seconds for the
# database's lock), as it held the thread Django made for it before: the pool only
# bounds what was unbounded. A burst of 100 posts took about 100; 16 made no difference.
REQUEST_THREADS = 1024
_requests = ThreadPoolExecutor(max_workers=REQUEST_THREADS, thread_name_prefix="oracle-request")


class OneThreadASGIHandler(ASGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        handler: Any = self  # Django's private field, which its stubs leave out
        chain: Callable[[HttpRequest], HttpResponseBase] = handler._middleware_chain

        def in_thread(request: HttpRequest) -> HttpResponseBase:
            close_old_connections()
            try:
                return chain(request)
            finally:
                close_old_connections()

        handler._middleware_chain = sync_to_async(
            in_thread, thread_sensitive=False, executor=_requests
        )


def warm_up() -> Future[None]:
    """Prepare, as the web process starts, what its first post would otherwise wait for:
    the broker connection a run's task is sent on and the modules Celery and kombu load
    for a first send (21 ms of the first post after a start, against 1 for the next).
    Best effort, in one of the request threads, so start-up does not wait for it: a
    broker that is not there yet is met by the first post, as before."""
    return _requests.submit(_warm_up_sending)


def _warm_up_sending() -> None:
    from oracle.celery import app

    try:
        app.amqp  # noqa: B018 (Celery builds its sender on first use)
        for module in _LAZY_SENDING:
            importlib.import_module(module)
        with app.producer_or_acquire() as producer:
            producer.connection.ensure_connection(max_retries=1)
            producer.connection.default_channel  # noqa: B018 (opens it)
    except Exception as error:  # the first post then does it, as before
        logger.info("could not prepare the broker connection yet: %r", error)
