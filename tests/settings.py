"""The product's settings for the processes the suite starts (daphne, Celery workers,
`manage.py` commands and `serve`, through `processes.base_env`): the product's own, but
with passwords hashed the quick way, as Django advises for tests and as the suite's own
process already does (`tests/conftest.py`). The default hasher takes a quarter of a
second of CPU a password here, and those processes create and log in hundreds of
accounts a run. `bench/` starts the product with its own settings."""

from oracle.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
