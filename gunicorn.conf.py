"""gunicorn's settings for the engine, read by itself from the directory it starts in (the
README's Production command runs from the repository's root).

By default gunicorn believes X-Forwarded-Proto (and its other forwarded headers) from any
connection on 127.0.0.1, so a local client could make a plain-HTTP request count as HTTPS
(Django's CSRF origin check, secure-only behaviour). Only a proxy the operator names
(DJANGO_BEHIND_PROXY, as maria.settings reads it; README: Abuse limits) is trusted, and
then as gunicorn's defaults and FORWARDED_ALLOW_IPS say; otherwise no forwarded header is.
"""

from __future__ import annotations

import environ

if not environ.Env().bool("DJANGO_BEHIND_PROXY", default=False):
    forwarded_allow_ips = ""  # no address's forwarded headers are believed
