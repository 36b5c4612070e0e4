"""Oracle's Django configuration: settings, URLs, ASGI and Celery apps."""

from oracle.celery import app as celery_app

__all__ = ("celery_app",)
