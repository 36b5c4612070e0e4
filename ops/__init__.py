"""Operations: health checks, worker heartbeats, the embedded Redis, `manage.py serve`."""
