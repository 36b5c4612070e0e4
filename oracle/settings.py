"""Django settings for Oracle, read from the environment (and `.env` when present).

Every variable is read once, through one `environ.Env()`: here, or by the builders
this module hands it to (the database in oracle/connections.py, the hard caps in
oracle/operator_limits.py). The README lists them. With nothing set, Oracle runs on
SQLite, an embedded Redis and the offline model, without Django's debug pages,
answering localhost only, with a secret key generated once and kept under `var/`.
"""

from __future__ import annotations

import os
import re
from email.utils import getaddresses
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from oracle import content_security
from oracle.celery_config import *  # noqa: F403 (Celery's fixed settings)
from oracle.connections import celery_url, database, redis_url
from oracle.logs import logging_config
from oracle.mcp_bytes import tool_result_max_bytes
from oracle.mcp_caps import mcp_caps
from oracle.model_windows import model_windows
from oracle.operator_limits import call_bounds, hard_limits
from oracle.pause_expiry import pause_expiry
from oracle.secret_key import secret_key

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

# LiteLLM must use its bundled price list: there may be no network.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

VAR_DIR = Path(env.str("ORACLE_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

# Django's debug pages (tracebacks, URL lists) only when asked for: what a user runs by
# default must be safe to reach from outside.
DEBUG = env.bool("DEBUG", default=False)
# Served over HTTPS (directly or behind a TLS proxy): secure cookies, the HTTPS
# redirect, HSTS, and a SECRET_KEY of the operator's (the same on every machine).
HTTPS = env.bool("ORACLE_HTTPS", default=False)

SECRET_KEY = secret_key(env.str("SECRET_KEY", default=""), https=HTTPS, var_dir=VAR_DIR)

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# A form refused for its CSRF token gets the site's 403 page, saying what to do.
CSRF_FAILURE_VIEW = "ops.errors.csrf_failure"

# Who may sign up: anyone (`open`), holders of an invite (`invite`), or no one but the
# holder of a staff invite (`closed`). The first administrator signs up with the staff
# invite `manage.py serve` prints while the site has no staff.
ORACLE_SIGNUP = env.str("ORACLE_SIGNUP", default="invite")

# Rate limits (ops/ratelimits.py), as "N/s", "N/m", "N/h" or "N/d": log-in attempts per
# address and per username, sign-ups per address, unknown API tokens per address.
ORACLE_RATE_LIMITS = {
    "login_ip": env.str("ORACLE_RATE_LOGIN", default="20/m"),
    "login_user": env.str("ORACLE_RATE_LOGIN_USER", default="5/m"),
    "signup_ip": env.str("ORACLE_RATE_SIGNUP", default="10/h"),
    "bad_token_ip": env.str("ORACLE_RATE_BAD_TOKENS", default="30/m"),
}
RATELIMIT_FAIL_OPEN = True  # Redis away: let people in rather than lock everyone out
for _name, _rate in ORACLE_RATE_LIMITS.items():
    if not re.fullmatch(r"[1-9][0-9]*/[0-9]*[smhd]", _rate):
        raise ImproperlyConfigured(f"The {_name} rate limit {_rate!r} is not like 5/m or 100/h.")
# A WebSocket's frames: at most this many in any 10 seconds; more get one error frame.
ORACLE_WS_FRAMES_PER_10S = env.int("ORACLE_WS_FRAMES_PER_10S", default=30)
if ORACLE_SIGNUP not in ("open", "invite", "closed"):
    raise ImproperlyConfigured("ORACLE_SIGNUP must be open, invite or closed.")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "accounts",
    "ops",
    "chat",
    "runs",
    "settings_ui",
    "knowledge",
    "dashboard",
    "toolbox",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]
CONTENT_SECURITY_POLICY = content_security.POLICY  # sent by csp.middleware, on every page

ROOT_URLCONF = "oracle.urls"
ASGI_APPLICATION = "oracle.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.sign_up",
            ],
        },
    },
]

# --- Database and Redis: configured, or local (oracle/connections.py) ---------
DATABASES = {"default": database(env, VAR_DIR)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL, EMBEDDED_REDIS_STARTED_HERE = redis_url(env.str("REDIS_URL", default=""), VAR_DIR)
EMBEDDED_REDIS = not env.str("REDIS_URL", default="")

CACHES = {
    "default": {
        "BACKEND": "ops.cache.SharedPoolRedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "oracle",
    }
}

# Live events go through Redis pub/sub (runs/live.py), not a Channels layer.

# --- Celery ------------------------------------------------------------------
# Agent runs are long and I/O-bound; the worker uses the thread pool (see README).
# The thread pool cannot kill a task, so the engine enforces each run's time limit
# itself (at most 600 s plus wind-down); the hard limit (oracle/celery_config.py) is the
# backstop for pools that can.
CELERY_BROKER_URL = celery_url(REDIS_URL)
CELERY_RESULT_BACKEND = celery_url(REDIS_URL)
# Tasks only hand a run to the process's run host (runs.host) and return at once, so
# few threads are needed; the host holds up to ORACLE_WORKER_MAX_RUNS runs at a time.
ORACLE_WORKER_CONCURRENCY = env.int("ORACLE_WORKER_CONCURRENCY", default=4)
# `manage.py serve`: daphne and Celery worker processes (each runs Python on one core).
ORACLE_WEB_PROCESSES = env.int("ORACLE_WEB_PROCESSES", default=1)
ORACLE_WORKER_PROCESSES = env.int("ORACLE_WORKER_PROCESSES", default=1)
ORACLE_WORKER_MAX_RUNS = env.int("ORACLE_WORKER_MAX_RUNS", default=500)
# On a worker's shutdown, how long its runs may go on before they end as interrupted.
ORACLE_WORKER_SHUTDOWN_GRACE = env.float("ORACLE_WORKER_SHUTDOWN_GRACE", default=10.0)

# --- The model -----------------------------------------------------------------
# With no ORACLE_MODEL, the built-in offline model answers (no network needed).
ORACLE_MODEL = env.str("ORACLE_MODEL", default="")
ORACLE_API_BASE = env.str("ORACLE_API_BASE", default="")
ORACLE_API_KEY = env.str("ORACLE_API_KEY", default="")
ORACLE_MODELS = env.list("ORACLE_MODELS", default=[ORACLE_MODEL] if ORACLE_MODEL else [])
if ORACLE_MODEL and ORACLE_MODEL not in ORACLE_MODELS:
    ORACLE_MODELS.insert(0, ORACLE_MODEL)
# The context window of models LiteLLM does not know (a server of your own): comma-
# separated model=tokens, e.g. "openai/smollm2=4096" (a learnt one wins: README).
ORACLE_MODEL_WINDOWS = model_windows(env.dict("ORACLE_MODEL_WINDOWS", default={}))

# Extra tools the Oracle may use besides the built-in ones: dotted paths of typed Python
# functions (the docstring describes the tool to the model), e.g. "mypkg.tools.lookup".
ORACLE_TOOLS = env.list("ORACLE_TOOLS", default=[])
# Tools from MCP servers: a JSON file in the common `mcpServers` shape (README, "Tools from
# MCP servers"); "" for none. A result over ORACLE_TOOL_RESULT_MAX_CHARS is cut, noted.
ORACLE_MCP_SERVERS = env.str("ORACLE_MCP_SERVERS", default="")
ORACLE_MCP_MAX_TOOLS_PER_SERVER, ORACLE_MCP_MAX_SCHEMA_BYTES = mcp_caps(env)  # oracle/mcp_caps.py
# Stdio servers run in bubblewrap: "auto" where it works, "bwrap" (required), "none".
ORACLE_MCP_SANDBOX = env.str("ORACLE_MCP_SANDBOX", default="auto")
ORACLE_TOOL_RESULT_MAX_CHARS = env.int("ORACLE_TOOL_RESULT_MAX_CHARS", default=100_000)
if ORACLE_TOOL_RESULT_MAX_CHARS < 100:
    raise ImproperlyConfigured("ORACLE_TOOL_RESULT_MAX_CHARS must be at least 100.")
ORACLE_TOOL_RESULT_MAX_BYTES = tool_result_max_bytes(env)  # a message read no further

# --- Serving -------------------------------------------------------------------
ORACLE_HOST = env.str("ORACLE_HOST", default="127.0.0.1")
ORACLE_PORT = env.int("ORACLE_PORT", default=8000)

# --- Auth -------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- Static files ---------------------------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise looks here first (and warns if it is missing)
# WhiteNoise serves static files under daphne straight from the finders: no
# collectstatic step for a self-hosted install.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

# --- Production security (all on with ORACLE_HTTPS; `check --deploy` is clean) ------
if HTTPS:
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
    # Off only for a site served over plain HTTP (a private network, the test suite).
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=True)
    if env.bool("BEHIND_TLS_PROXY", default=False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Every limit event of every run, one JSON object a line (ops/limit_log.py), to this
# file (rotated at 10 MB, five kept) and to stdout.
LIMIT_LOG_FILE = VAR_DIR / "log" / "limits.jsonl"
LIMIT_LOG_FILE.parent.mkdir(exist_ok=True)

LOGGING = logging_config(LIMIT_LOG_FILE, level=env.str("LOG_LEVEL", default="INFO"))

# --- Operations ----------------------------------------------------------------------
# A bearer token for Prometheus to read /metrics with; unset, only staff (logged in) can.
ORACLE_METRICS_TOKEN = env.str("ORACLE_METRICS_TOKEN", default="")

# --- Runs -----------------------------------------------------------------------------
# How often at most a worker process writes and publishes what its runs stream
# (all of them in one transaction, coalescing tokens).
ORACLE_STREAM_FLUSH_SECONDS = env.float("ORACLE_STREAM_FLUSH_SECONDS", default=0.02)
# A running run whose worker has not written for this long is marked interrupted.
ORACLE_RUN_HEARTBEAT_TIMEOUT = env.float("ORACLE_RUN_HEARTBEAT_TIMEOUT", default=30.0)
# Seconds a run may wait on its user before it ends `pause_expired` (oracle/pause_expiry.py).
ORACLE_PAUSE_EXPIRY_SECONDS = pause_expiry(env)
ORACLE_MAX_MESSAGE_CHARS = env.int("ORACLE_MAX_MESSAGE_CHARS", default=32_000)
# The largest file a user may add to their documents (the knowledge base).
ORACLE_MAX_UPLOAD_BYTES = env.int("ORACLE_MAX_UPLOAD_BYTES", default=5 * 1024 * 1024)
# After a conversation's first answer its model names it (one short call, priced like
# any other); off, or with the offline model, the first words of the question stay.
ORACLE_AUTO_TITLES = env.bool("ORACLE_AUTO_TITLES", default=True)

# --- Operator limits (settings_ui): hard caps on every run (oracle/operator_limits.py) ---
(
    ORACLE_HARD_MAX_ITERATIONS,
    ORACLE_HARD_MAX_TOOL_CALLS,
    ORACLE_HARD_TOKEN_BUDGET,
    ORACLE_HARD_TIMEOUT_SECONDS,
    ORACLE_HARD_MAX_COST_USD,
) = hard_limits(env)
# Bounds on one tool call (its arguments' bytes) and on a run's helpers (README).
(ORACLE_TOOL_ARGUMENTS_MAX_BYTES, ORACLE_SUBAGENTS_MAX_PER_RUN, ORACLE_SUBAGENTS_MAX_DEPTH,
 ORACLE_SUBAGENTS_MAX_CONCURRENT) = call_bounds(env)  # fmt: skip

# --- Alerts and spend caps (ops/alerts.py, ops/caps.py) ------------------------------
# Alerts on the last full hour, mailed to ADMINS ("Name <a@b>, ..."); unset, only logged
# (logger oracle.alerts) and kept for the staff dashboard. Mail goes through EMAIL_URL
# (smtp://USER:PASSWORD@HOST:587, smtp+tls://…, consolemail://), localhost:25 by default.
ADMINS = [
    (name, email)
    for name, email in getaddresses([env.str("ORACLE_ADMINS", default="")])
    if "@" in email
]
SERVER_EMAIL = env.str("SERVER_EMAIL", default="oracle@localhost")
EMAIL_SUBJECT_PREFIX = "[Oracle] "
vars().update(env.email_url("EMAIL_URL", default="smtp://localhost:25"))
ORACLE_ALERT_COST_PER_HOUR = env.float("ORACLE_ALERT_COST_PER_HOUR", default=10.0)
ORACLE_ALERT_TERMINATIONS_PER_HOUR = env.int("ORACLE_ALERT_TERMINATIONS_PER_HOUR", default=5)
ORACLE_ALERT_NEAR_LIMIT_SHARE = env.float("ORACLE_ALERT_NEAR_LIMIT_SHARE", default=0.5)
# Daily spending caps in USD (a UTC day), per user and for the site; unset: no cap. Staff
# can set them in the admin ("Spending caps"), which wins over these.
ORACLE_USER_DAILY_COST_USD = env.float("ORACLE_USER_DAILY_COST_USD", default=None)
ORACLE_SITE_DAILY_COST_USD = env.float("ORACLE_SITE_DAILY_COST_USD", default=None)
for _name in ("ORACLE_USER_DAILY_COST_USD", "ORACLE_SITE_DAILY_COST_USD"):
    if globals()[_name] is not None and globals()[_name] < 0:
        raise ImproperlyConfigured(f"{_name} must be 0 or more (unset: no cap).")
