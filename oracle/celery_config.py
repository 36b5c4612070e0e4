"""Celery's fixed settings: how a worker takes tasks and talks to the broker (the broker's
address is in `oracle.settings`, which imports these)."""

CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 900
CELERY_TASK_SOFT_TIME_LIMIT = 840
# A task only hands its run to the worker's run host and returns. What keeps a run
# from being lost is its row, not the broker: a run still queued after
# QUEUED_GRACE_SECONDS is sent again by a worker's sweeper, and a running one whose
# heartbeat stops is resumed (runs.sweeper). So the broker keeps no copy of a task
# until it is acknowledged: kombu's ack emulation wrote one (a MULTI on receipt,
# another on the ack), about a fifth of the worker's CPU for each run it started,
# and would only have delivered a lost task again an hour later (bench/README.md).
CELERY_BROKER_TRANSPORT_OPTIONS = {"ack_emulation": False}
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_RESULT_EXPIRES = 3600
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker whose broker went away keeps trying to reconnect, for as long as it takes.
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
