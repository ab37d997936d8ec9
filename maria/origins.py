"""Which pages may open a websocket here: those of the socket's own origin (scheme, host and
port), as Django's CSRF check allows a form's POST (django.middleware.csrf), or of an origin
listed in CSRF_TRUSTED_ORIGINS; and only on a host in ALLOWED_HOSTS.

Channels' AllowedHostsOriginValidator compares the Origin's host name with ALLOWED_HOSTS and
ignores its port, so a page of another service on the same host (http://host:9999) could
open a reviewer's socket with their cookie. The pages open their socket at
`window.location.host` (static/maria/maria.js), so the socket's own origin, read from its
Host header, is the page's: nothing to configure per port, and behind a proxy the same
settings as for CSRF (CSRF_TRUSTED_ORIGINS, SECURE_PROXY_SSL_HEADER).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

DEFAULT_PORTS = {"http": 80, "https": 443}

Scope = dict[str, Any]
Origin = tuple[str, str, int]  # scheme, host name (lower case, no brackets), port


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return bytes(value).decode("latin1")
    return None


def _secure(scope: Scope) -> bool:
    """As Django's `request.is_secure()`: the proxy's header when it is configured and sent,
    else the socket's own scheme."""
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy:
        name, secure_value = proxy
        header = name.removeprefix("HTTP_").lower().replace("_", "-").encode()
        value = _header(scope, header)
        if value is not None:
            return value.split(",", 1)[0].strip() == secure_value
    return scope.get("scheme") in ("wss", "https")


def _parsed(scheme: str, netloc: str) -> Origin | None:
    try:
        parts = urlsplit(f"{scheme}://{netloc}")
        port = parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None
    if not parts.hostname or port is None or parts.path or parts.query:
        return None
    return parts.scheme, parts.hostname.lower(), port


def _allowed_hosts() -> list[str]:
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:  # Django's own default for an empty list
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return allowed


def _own_host(scope: Scope) -> str | None:
    """The host and port the socket was opened at: its Host header, else the server's
    address; None with neither."""
    host = _header(scope, b"host")
    if host is None and scope.get("server"):
        name, port = scope["server"][0], scope["server"][1]
        host = f"[{name}]:{port}" if ":" in str(name) else f"{name}:{port}"
    return host


def origin_allowed(scope: Scope) -> bool:
    """Whether the websocket handshake in `scope` comes from a page allowed to open it: its
    Origin is the socket's own (scheme as http(s), host and port) or a trusted one, and the
    socket's host is one of ALLOWED_HOSTS (else a name that resolves to this server, DNS
    rebinding, would be its own origin)."""
    origin = _header(scope, b"origin")
    if not origin:
        return False
    parts = urlsplit(origin)
    if parts.path or parts.query or parts.fragment or "@" in parts.netloc:
        return False  # not an origin (scheme://host[:port]): no browser sends that
    theirs = _parsed(parts.scheme, parts.netloc)
    if theirs is None:
        return False
    host = _own_host(scope)
    if host is None:
        # No client omits Host, only an in-process harness: the socket is taken to be at the
        # page's host name, on the scheme's default port.
        host = f"[{theirs[1]}]" if ":" in theirs[1] else theirs[1]
    domain, _ = split_domain_port(host)
    if not domain or not validate_host(domain, _allowed_hosts()):
        return False
    own = _parsed("https" if _secure(scope) else "http", host)
    return theirs == own or _trusted(origin, theirs)


def _trusted(origin: str, theirs: Origin) -> bool:
    """CSRF_TRUSTED_ORIGINS, as Django reads them: exact origins, or `scheme://*.domain`."""
    for trusted in settings.CSRF_TRUSTED_ORIGINS:
        parts = urlsplit(trusted)
        if "*" in parts.netloc:
            netloc = urlsplit(origin).netloc
            if parts.scheme == theirs[0] and is_same_domain(netloc, parts.netloc.lstrip("*")):
                return True
        elif _parsed(parts.scheme, parts.netloc) == theirs:
            return True
    return False


class SameOriginValidator:
    """ASGI middleware for websockets: a handshake whose Origin is not allowed
    (`origin_allowed`) is refused before any session is read."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator is for websocket connections only")
        if origin_allowed(scope):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
