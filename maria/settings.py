"""Settings, read only from environment variables (README: "Configuration").

With nothing set, the project runs locally on SQLite, an in-memory channel layer and eager
Celery. `DJANGO_DEBUG=0` switches to a strict production mode that refuses to start without
a secret key and allowed hosts.
"""

from __future__ import annotations

import os
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

# The local state of `make run`: the SQLite database, the checkpoint signing key, collected
# static files. MARIA_VAR_DIR moves it (the README's own test runs the quick start in a
# directory of its own).
VAR_DIR = Path(env.str("MARIA_VAR_DIR", default=str(BASE_DIR / "var")))

DEBUG = env.bool("DJANGO_DEBUG", default=True)

if DEBUG:
    SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="local-development-only-not-a-secret")
    ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
else:
    # Production must be told who it is: no silent default key, no wildcard hosts.
    if not env.str("DJANGO_SECRET_KEY", default=""):
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG=0")
    if not env.list("DJANGO_ALLOWED_HOSTS", default=[]):
        raise ImproperlyConfigured("DJANGO_ALLOWED_HOSTS must be set when DJANGO_DEBUG=0")
    SECRET_KEY = env.str("DJANGO_SECRET_KEY")
    ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS")

CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "axes",  # the login lockout ("Abuse limits" below)
    # The project's apps, from the ground up: each imports only those above it (pyproject.toml,
    # [tool.importlinter]).
    "coordinates",
    "trail",
    "evidence",
    "decisions",
    "graph",
    "gates",
    "audit",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "maria.bodies.LengthRequiredMiddleware",
    "maria.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a login refused for lockout into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "maria.urls"
ASGI_APPLICATION = "maria.asgi.application"

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
                "django.template.context_processors.i18n",
                "maria.csp.csp_nonce",
            ],
        },
    },
]

DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'maria.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the ASGI server read while a Celery task writes; the timeout rides out the
    # short write locks SQLite takes instead of failing with "database is locked". IMMEDIATE
    # takes the write lock when a transaction begins, so one that reads and then writes
    # waits its turn (select_for_update is a no-op here) rather than failing at its write.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL;",
            "transaction_mode": "IMMEDIATE",
        }
    )
    # Tests get a file too, not Django's shared-cache in-memory database: its table locks
    # fail a writer at once ("database table is locked") whenever another thread is
    # reading, which the product's file never does. Deleted when the run ends.
    DATABASES["default"]["TEST"] = {
        "NAME": str(Path(tempfile.gettempdir()) / f"maria-test-{os.getpid()}.sqlite3")
    }
    # trail.TrailEvent's index by chain and kind carries `actor` along for PostgreSQL's
    # index-only scans; SQLite keeps the index without it, which is all it needs, and Django
    # would say so (models.W040) before every command.
    SILENCED_SYSTEM_CHECKS = ["models.W040"]
elif env.int("DATABASE_POOL_MAX_SIZE", default=8) > 0:
    # A pool of open connections per process (psycopg_pool through Django). Under ASGI each
    # request runs in a thread of its own, so persistent connections would pile up, and
    # opening one per request costs PostgreSQL a new backend process every time.
    # DATABASE_POOL_MAX_SIZE=0 turns it off (for a pooler such as PgBouncer in front).
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps them: Django must not
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # the pool checks each one it lends
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": env.int("DATABASE_POOL_MAX_SIZE", default=8),
        "timeout": env.float("DATABASE_POOL_TIMEOUT", default=10.0),
    }
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ja", "日本語")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env.str("DJANGO_TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.path("DJANGO_STATIC_ROOT", default=str(VAR_DIR / "static"))
STATICFILES_DIRS = [BASE_DIR / "static"]
# Locally whitenoise serves straight from the app folders; production runs collectstatic.
WHITENOISE_USE_FINDERS = DEBUG

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# --- Redis, channels, Celery -------------------------------------------------------------

REDIS_URL = env.str("REDIS_URL", default="")

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": env.str("CHANNELS_PREFIX", "maria")},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# The cache every process shares: the API's rate limits count in it (and graph.tasks keeps
# its marks there), so with Redis a limit holds across all web processes, not per process.
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "maria.cache.RedisCache",  # one client per pool, not per call
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env.str("CACHE_PREFIX", default="maria"),
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Without a broker ("memory://") every task runs inline, at the point it is sent (after commit).
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL) or "memory://"
CELERY_TASK_ALWAYS_EAGER = env.bool(
    "CELERY_TASK_ALWAYS_EAGER", default=CELERY_BROKER_URL.startswith("memory://")
)
# Eager tasks fail and retry as a worker's would: an exception or a `self.retry()` escaping
# an after-commit callback would answer 500 for a change that committed, and leave a
# decision proposed with no retry. Failures are logged (celery.app.trace) instead.
CELERY_TASK_EAGER_PROPAGATES = env.bool("CELERY_TASK_EAGER_PROPAGATES", default=False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery's Django fixup closes every connection before and after each task, and in a prefork
# child with a connection pool the whole pool: a new PostgreSQL session per task (measured:
# 1,335 sessions for 1,200 submissions). With this it does so only every 500 tasks, and
# maria.celery hands each task's connection back to the pool instead, which checks it.
CELERY_DB_REUSE_MAX = 500
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = TIME_ZONE
# `celery -A maria beat` next to the workers runs these (see README, "Production").
CELERY_BEAT_SCHEDULE = {
    # Seals every chain of the trail; the interval bounds how long a deleted tail can hide.
    "trail-checkpoint": {"task": "trail.checkpoint", "schedule": 3600.0},
    "escalate-overdue": {"task": "decisions.tasks.escalate_overdue", "schedule": 60.0},
    # Pushes and webhooks whose sender died after commit.
    "sweep-outbox": {"task": "decisions.tasks.sweep_outbox", "schedule": 30.0},
    # Decisions still proposed after two minutes: their validation task was lost (the broker
    # was unreachable at commit, or restarted without its queue).
    "resend-validations": {"task": "decisions.tasks.resend_validations", "schedule": 60.0},
    # Risk flags for what no after-commit scan covers (document extraction, threshold edits,
    # a scan task lost); zones whose graph and threshold are unchanged are skipped.
    "graph-risk-scan": {"task": "graph.tasks.scan_graph_risk", "schedule": 300.0},
    # The knowledge graph following the trail, for any decision change whose request to
    # follow was lost (decision changes ask for a run themselves).
    "graph-follow-trail": {"task": "graph.tasks.follow_trail", "schedule": 10.0},
    # New calibration versions from the week's reviewer verdicts; proposals only: a zone
    # admin adopts one (decisions.calibration).
    "propose-calibrations": {
        "task": "decisions.tasks.propose_calibrations",
        "schedule": 7 * 24 * 3600.0,
    },
    # Paragraphs that disagree across a zone's documents which no ingest compared (the
    # nightly look over every zone, evidence/knowledge.py).
    "scan-knowledge-conflicts": {
        "task": "evidence.tasks.scan_conflicts_nightly",
        "schedule": 24 * 3600.0,
    },
}
# Deployments (and test runs) sharing one Redis keep apart by queue name.
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_TASK_DEFAULT_QUEUE", default="celery")
# The answers' own queue: validation, reviewer pushes and webhooks, escalation. No scan,
# embedding, import or export is sent there, so a worker that consumes only it (README,
# "Production") is never kept from an answer by a long document. Background work stays on
# the default queue.
MARIA_ANSWER_QUEUE = env.str("MARIA_ANSWER_QUEUE", default=f"{CELERY_TASK_DEFAULT_QUEUE}-answers")
CELERY_TASK_ROUTES = {
    name: {"queue": MARIA_ANSWER_QUEUE}
    for name in (
        "decisions.tasks.validate_decision",
        "decisions.tasks.deliver_webhook",
        "decisions.tasks.escalate_overdue",
        "decisions.tasks.sweep_outbox",
        "decisions.tasks.resend_validations",
    )
}
# Every task stops: SoftTimeLimitExceeded is raised in it after the soft limit (the task's
# error handling quarantines what keeps failing), and its process is killed after the hard
# one. Seconds; enforced by the prefork pool (the default), not by --pool solo.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=300)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=360)
# With Redis, a task whose worker died unacknowledged is delivered again after the visibility
# timeout (kombu's default: an hour). JSON, e.g. {"visibility_timeout": 600}.
CELERY_BROKER_TRANSPORT_OPTIONS = env.json("CELERY_BROKER_TRANSPORT_OPTIONS", default={})

# --- REST --------------------------------------------------------------------------------


def throttle_rate(name: str, default: str) -> str | None:
    """A rate limit from the environment in DRF's form ("300/s", "120/min": a count per
    second, minute, hour or day); empty or "off" turns it off. A malformed one stops the
    start here, rather than failing every request."""
    value = env.str(name, default=default).strip()
    if value.lower() in ("", "off"):
        return None
    count, _, period = value.partition("/")
    if not (count.isdigit() and int(count) > 0 and period[:1] in ("s", "m", "h", "d")):
        raise ImproperlyConfigured(f'{name} must look like "300/s" or "120/min", or be "off"')
    return value


REST_FRAMEWORK: dict[str, Any] = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Bearer first: its WWW-Authenticate header turns a missing login into 401, not 403.
        "coordinates.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        *(["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
    ],
    "DEFAULT_PARSER_CLASSES": ["maria.parsers.StrictJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "maria.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # Rate limits ("Abuse limits" below); each counts only the requests it is for.
    "DEFAULT_THROTTLE_CLASSES": [
        "maria.throttles.TokenRateThrottle",
        "maria.throttles.AddressRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "token": throttle_rate("MARIA_RATE_PER_TOKEN", default="300/s"),
        "address": throttle_rate("MARIA_RATE_PER_ADDRESS", default="120/min"),
    },
    # The client address the limits see: with our proxy in front, the entry it appends to
    # X-Forwarded-For; otherwise the socket's, since a client can write that header itself.
    "NUM_PROXIES": 1 if env.bool("DJANGO_BEHIND_PROXY", default=False) else 0,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "MARIA Governance Engine API",
    "DESCRIPTION": "Submit AI answers with evidence bundles, read verdicts, govern zones.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "maria.openapi.bodies_required",
        "maria.openapi.strings_without_nul",
    ],
    # The docs page's scripts are served from this installation, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Request size limits: an evidence bundle or document beyond these is refused (413).
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("MARIA_MAX_BODY_BYTES", default=2 * 1024 * 1024)

# --- Security ----------------------------------------------------------------------------

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = env.int("DJANGO_SESSION_SECONDS", default=12 * 3600)
# Django's login() rotates the session key and logout() flushes the session; the pages rely
# on both (tests/gates/test_security.py).
CSRF_COOKIE_HTTPONLY = False  # htmx reads it to send X-CSRFToken
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if not DEBUG:
    SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
    SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env.bool("DJANGO_HSTS_PRELOAD", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    if env.bool("DJANGO_BEHIND_PROXY", default=False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# --- Abuse limits ------------------------------------------------------------------------

# The API's rate limits are REST_FRAMEWORK's throttles above (maria/throttles.py). Password
# logins, the login page's and the admin's, are locked for MARIA_LOGIN_COOLOFF minutes after
# MARIA_LOGIN_FAILURES failures (0: never) by django-axes. Bearer tokens never pass through
# it (coordinates.authentication looks them up by hash): they are random, not guessable.
AUTHENTICATION_BACKENDS = [
    # First: it refuses a locked-out login before any password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("MARIA_LOGIN_FAILURES", default=5)
AXES_ENABLED = AXES_FAILURE_LIMIT > 0
AXES_COOLOFF_TIME = timedelta(minutes=env.float("MARIA_LOGIN_COOLOFF", default=15.0))
# Failures count per username and address together: by username alone anyone could lock a
# reviewer out by failing on their name, by address alone one office behind a NAT would be
# locked out as a whole.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True  # a login that succeeds forgets that pair's failures
# The address the API limits see too: behind our proxy, never REMOTE_ADDR (the proxy's own).
AXES_CLIENT_IP_CALLABLE = "maria.throttles.client_address"
AXES_LOCKOUT_CALLABLE = "maria.throttles.lockout_response"  # 429, Retry-After, a page
# Every attempt during a lockout, the right password too, starts the cool-off again (the page
# says so); and no banner in every manage.py command's output: failures are still logged.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = True
AXES_VERBOSE = False

# --- Logging -----------------------------------------------------------------------------

LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "maria.logging.JsonFormatter"},
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": env.str("LOG_FORMAT", default="plain" if DEBUG else "json"),
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}

# --- The product -------------------------------------------------------------------------

# How many waiting decisions of a zone one validation task takes in one transaction (1: one
# at a time). Larger batches cost less per decision under load, so workers that fall behind
# catch up; each holds its rows longer. At 100 answers/s on 2 cores (bench_pipeline) 64 kept
# pace in every run, 16 in one run of five.
MARIA_VALIDATION_BATCH = env.int("MARIA_VALIDATION_BATCH", default=64)
MARIA_EMBEDDER = env.str("MARIA_EMBEDDER", default="hashing")
# A knowledge-conflict scan judges pairs for at most this long, then stores what it found and
# stops (evidence/conflicts.py, Budget); below the tasks' soft time limit. Seconds.
MARIA_CONFLICT_SCAN_SECONDS = env.float("MARIA_CONFLICT_SCAN_SECONDS", default=120.0)
MARIA_EMBEDDER_API_KEY = env.str("MARIA_EMBEDDER_API_KEY", default="")
# A reviewer's socket re-reads their roles this often; a revoked role closes it (seconds).
MARIA_SOCKET_RECHECK_SECONDS = env.float("MARIA_SOCKET_RECHECK_SECONDS", default=30.0)
# How long a sender's claim on an outbox row holds before the row may be sent by another
# (its sender is taken to be dead); above the webhook timeout (10 s). Seconds.
MARIA_OUTBOX_LEASE_SECONDS = env.float("MARIA_OUTBOX_LEASE_SECONDS", default=60.0)
# This server's address as agents reach it: the decision URL in each webhook is made from it.
MARIA_PUBLIC_URL = env.str("MARIA_PUBLIC_URL", default="http://127.0.0.1:8000")
# The what-if preview replays the stored reports of this many past days.
MARIA_WHATIF_DAYS = env.int("MARIA_WHATIF_DAYS", default=30)
# The optional LLM judge (evidence/judge.py): the base URL of an OpenAI-compatible API
# (e.g. http://127.0.0.1:8099/v1; "" = off). Its verdict is one more signal, never the only
# reason for auto. Timeout is seconds per attempt; retries are on timeouts, 429 and 5xx.
MARIA_JUDGE_URL = env.str("MARIA_JUDGE_URL", default="")
MARIA_JUDGE_MODEL = env.str("MARIA_JUDGE_MODEL", default="gpt-4o-mini")
MARIA_JUDGE_API_KEY = env.str("MARIA_JUDGE_API_KEY", default="")
MARIA_JUDGE_TIMEOUT = env.float("MARIA_JUDGE_TIMEOUT", default=10.0)
MARIA_JUDGE_RETRIES = env.int("MARIA_JUDGE_RETRIES", default=2)
# The optional local NLI judge (evidence/nli.py, the `nli` extra): a cross-encoder model
# directory on this machine ("" = off; never downloaded), and its backend (torch, onnx or
# openvino). When set it is the judge, in place of the LLM one. What a judge may change is
# each zone's policy (judge_moves, judge_confidence).
MARIA_NLI_MODEL = env.str("MARIA_NLI_MODEL", default="")
MARIA_NLI_BACKEND = env.str("MARIA_NLI_BACKEND", default="torch")

# Checkpoints are signed with a key the database does not hold (trail.signing): the base64
# of a 32-byte Ed25519 seed, or a file holding it (`manage.py trail_key --new FILE` makes
# one; `make run` makes var/trail-signing.key). Without either, checkpoints are unsigned.
MARIA_TRAIL_SIGNING_KEY = env.str("MARIA_TRAIL_SIGNING_KEY", default="")
MARIA_TRAIL_SIGNING_KEY_FILE = env.str("MARIA_TRAIL_SIGNING_KEY_FILE", default="")
# `make run` makes var/trail-signing.key and names it to the server and scheduler it starts; a
# `manage.py` command run by hand beside them (a checkpoint, verify_trail) finds the same key
# there, when neither setting is given. Local only: production names its key (README).
LOCAL_TRAIL_KEY = VAR_DIR / "trail-signing.key"
if (
    DEBUG
    and "MARIA_TRAIL_SIGNING_KEY" not in os.environ
    and "MARIA_TRAIL_SIGNING_KEY_FILE" not in os.environ
    and LOCAL_TRAIL_KEY.is_file()
):
    MARIA_TRAIL_SIGNING_KEY_FILE = str(LOCAL_TRAIL_KEY)
# After a rotation: the earlier keys' public halves (base64, comma-separated), so that the
# checkpoints they signed still verify.
MARIA_TRAIL_PREVIOUS_PUBLIC_KEYS = env.list("MARIA_TRAIL_PREVIOUS_PUBLIC_KEYS", default=[])
# Where each checkpoint is also handed, after it commits: a file path (one JSON line a
# checkpoint, appended) or an http(s) URL (POSTed as JSON, read back with GET as JSON lines).
# Read back by each checkpoint run, `verify_trail` and the Verify page. Empty: nowhere.
MARIA_TRAIL_WITNESS = env.str("MARIA_TRAIL_WITNESS", default="")
