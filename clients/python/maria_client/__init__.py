"""The MARIA Governance Engine's Python client: `Maria` for the API, `verify_webhook` for
what it sends back, typed exceptions for every refusal."""

from __future__ import annotations

from maria_client.client import Maria
from maria_client.errors import (
    Conflict,
    Forbidden,
    MariaError,
    NotAuthenticated,
    NotFound,
    RateLimited,
    ServerError,
    TooLarge,
    TransportError,
    Unprocessable,
    ValidationError,
    WaitTimeout,
    WebhookVerificationError,
)
from maria_client.models import (
    ClaimVerdict,
    Decision,
    DecisionEvent,
    DecisionRow,
    Passage,
    UploadedDocument,
)
from maria_client.webhooks import WebhookEvent, WebhookInbox, sign_webhook, verify_webhook

__all__ = [
    "ClaimVerdict",
    "Conflict",
    "Decision",
    "DecisionEvent",
    "DecisionRow",
    "Forbidden",
    "Maria",
    "MariaError",
    "NotAuthenticated",
    "NotFound",
    "Passage",
    "RateLimited",
    "ServerError",
    "TooLarge",
    "TransportError",
    "Unprocessable",
    "UploadedDocument",
    "ValidationError",
    "WaitTimeout",
    "WebhookEvent",
    "WebhookInbox",
    "WebhookVerificationError",
    "sign_webhook",
    "verify_webhook",
]
