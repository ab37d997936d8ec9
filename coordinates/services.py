"""The few functions that change zones, policies, roles and tokens, each in one transaction."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from coordinates import events, policy
from coordinates.coordinate import Coordinate, Level
from coordinates.models import (
    ApiToken,
    Role,
    RoleAssignment,
    Zone,
    ZonePolicyVersion,
    is_webhook_url,
)
from coordinates.selectors import effective_policy, zone_get
from maria.errors import ApplicationError, NotAuthenticated
from maria.wording import in_language

TOKEN_PREFIX_LENGTH = 8


def zone_add(*, coordinate: Coordinate, name: str = "") -> Zone:
    """Create the zone and any missing ancestors; an existing zone is returned unchanged."""
    if coordinate.level == Level.AGENT:
        raise ApplicationError(
            gettext("%(coordinate)s is an agent; zones stop at the Z level")
            % {"coordinate": coordinate},
            field="coordinate",
        )

    with transaction.atomic():
        parent: Zone | None = None
        for level in coordinate.lineage():
            zone, created = Zone.objects.get_or_create(
                coordinate=str(level),
                defaults={
                    "level": level.level.value,
                    "depth": level.depth,
                    "parent": parent,
                    "name": name if level == coordinate else "",
                },
            )
            if created:
                events.zone_created(zone)
            parent = zone
    if parent is None:  # unreachable: a coordinate has at least one level
        raise ApplicationError(gettext("empty coordinate"), field="coordinate")
    return parent


def _policy_problems_to_error(
    problems: list[policy.PolicyProblem], inherited_by: str | None = None
) -> None:
    """Raise the first problem; `inherited_by` names the zone below where it shows."""
    if problems:
        first = problems[0]
        # In the reader's language: the API's caller's, the page's.
        message = in_language(first.message, gettext)
        if inherited_by is not None:
            message = gettext("%(problem)s (in %(zone)s, which inherits it)") % {
                "problem": message,
                "zone": inherited_by,
            }
        raise ApplicationError(message, code="invalid_policy", field=first.field)


def policy_update(
    *, zone: Zone, overrides: Mapping[str, Any], reason: str, actor: User | None
) -> ZonePolicyVersion:
    """Make the zone's own overrides a new version, after checking it and every zone below."""
    if not isinstance(reason, str) or not reason.strip():
        raise ApplicationError(
            gettext("a reason is required for every policy change"), field="reason"
        )
    _policy_problems_to_error(policy.check_overrides(overrides))
    clean = policy.normalise_overrides(overrides)
    with transaction.atomic():
        # The trail lock first: on SQLite it takes the write lock before any read (a write
        # after a read can fail at once with "database is locked"); on PostgreSQL it is the
        # zone chain's head row, always taken before the zone row, so the two never deadlock.
        events.zone_lock(zone.coordinate)
        # The lock serialises edits of one zone so version numbers never collide.
        locked = Zone.objects.select_for_update().get(pk=zone.pk)
        current = locked.policy_versions.order_by("-version").first()
        if current is not None and current.overrides == clean:
            return current  # the same values again are not an edit
        # Overrides inherit downwards: the zone and everything beneath must still make sense.
        affected = [locked, *Zone.objects.filter(coordinate__startswith=f"{locked.coordinate}.")]
        for below in affected:
            merged = effective_policy(below.coord, replace=(locked.coordinate, clean)).values
            inherited_by = None if below.pk == locked.pk else below.coordinate
            _policy_problems_to_error(policy.check_effective(merged), inherited_by)
        version = ZonePolicyVersion.objects.create(
            zone=locked,
            version=(current.version + 1) if current else 1,
            overrides=clean,
            created_by=actor,
            reason=reason.strip(),
        )
        # In the same transaction: the new thresholds and their trail event commit together.
        events.policy_changed(version, actor=actor, previous=current)
        return version


def user_ensure(*, username: str, password: str | None = None) -> User:
    """Get or create a person's account; a given password is (re)set."""
    user, _ = get_user_model().objects.get_or_create(username=username)
    if password is not None:
        user.set_password(password)
        user.save(update_fields=["password"])
    return user


def role_grant(
    *,
    user: User,
    role: str,
    scope: Coordinate,
    granted_by: User | None = None,
) -> RoleAssignment:
    if role not in Role.values:
        raise ApplicationError(
            gettext("unknown role %(role)s; one of %(roles)s")
            % {"role": repr(role), "roles": ", ".join(Role.values)},
            field="role",
        )
    if scope.level == Level.AGENT:
        raise ApplicationError(
            gettext("roles are granted on a zone or above, not on an agent"), field="scope"
        )
    if is_agent_account(user):
        # An agent proposes answers; one that could also review or administer a zone could
        # approve its own answers and write other zones' graphs.
        raise ApplicationError(
            gettext("%(user)s is an agent's account: agents hold no roles")
            % {"user": user.get_username()},
            field="user",
        )
    zone_get(scope, field="scope")

    with transaction.atomic():
        assignment, created = RoleAssignment.objects.get_or_create(
            user=user, role=role, scope=str(scope), defaults={"granted_by": granted_by}
        )
        if created:
            events.role_granted(assignment, actor=granted_by)
    return assignment


def role_revoke(*, user: User, role: str, scope: Coordinate, revoked_by: User | None = None) -> int:

    with transaction.atomic():
        deleted, _ = RoleAssignment.objects.filter(user=user, role=role, scope=str(scope)).delete()
        if deleted:
            events.role_revoked(user=user, role=role, scope=str(scope), actor=revoked_by)
    return deleted


def hash_key(key: str) -> str:
    # Keys are 256 random bits, so a fast hash is enough: nothing to brute-force.
    return hashlib.sha256(key.encode()).hexdigest()


def _new_key() -> str:
    return f"maria_{secrets.token_urlsafe(32)}"


AGENT_ACCOUNT_PREFIX = "agent:"


def is_agent_account(user: User) -> bool:
    """The service account an agent's token acts through (`agent_user`), not a person."""
    return (
        user.get_username().startswith(AGENT_ACCOUNT_PREFIX)
        or ApiToken.objects.filter(user=user, agent__gt="").exists()
    )


def agent_user(agent: Coordinate) -> User:
    """Each agent acts through a service account, so proposals have a proposer."""
    user, created = get_user_model().objects.get_or_create(
        username=f"{AGENT_ACCOUNT_PREFIX}{agent}"
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def token_issue(
    *,
    agent: Coordinate | None = None,
    user: User | None = None,
    label: str = "",
    webhook_url: str = "",
) -> tuple[ApiToken, str]:
    """Issue a bearer token and return it with its key, which is never stored or shown again."""
    if (agent is None) == (user is None):
        raise ApplicationError(
            gettext("a token belongs to exactly one agent or one person"), field="agent"
        )
    if webhook_url and not is_webhook_url(webhook_url):
        raise ApplicationError(
            gettext("the webhook must be an absolute http(s) URL, got %(url)s")
            % {"url": repr(webhook_url[:200])},
            field="webhook_url",
        )
    with transaction.atomic():
        if agent is not None:
            if agent.level != Level.AGENT:
                raise ApplicationError(
                    gettext("%(agent)s is a %(level)s; tokens are issued to agents (G.U.P.Z.A)")
                    % {"agent": agent, "level": agent.level},
                    field="agent",
                )
            zone_get(agent.zone(), field="agent")
            user = agent_user(agent)
        if user is None:  # unreachable: checked above
            raise ApplicationError(gettext("a token needs an owner"), field="user")
        key = _new_key()
        token = ApiToken.objects.create(
            key_hash=hash_key(key),
            prefix=key[: TOKEN_PREFIX_LENGTH + len("maria_")],
            user=user,
            agent=str(agent) if agent is not None else "",
            label=label,
            webhook_url=webhook_url,
            webhook_secret=secrets.token_hex(32) if webhook_url else "",
        )
    return token, key


def token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def token_authenticate(key: str) -> ApiToken:
    try:
        token = ApiToken.objects.select_related("user").get(key_hash=hash_key(key))
    except ApiToken.DoesNotExist:
        raise NotAuthenticated(gettext("invalid token")) from None
    if token.revoked_at is not None or not token.user.is_active:
        raise NotAuthenticated(
            gettext("this token has been revoked"),
        )
    now = timezone.now()
    # Write last use at most once a minute: a busy agent must not turn reads into writes.
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token
