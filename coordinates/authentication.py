"""`Authorization: Bearer <token>` for agents and for people's personal API tokens."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from coordinates.services import token_authenticate
from maria.errors import ApplicationError


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Bearer <token>'")
        try:
            key = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(
                "the token has characters a token never has"
            ) from None
        try:
            token = token_authenticate(key)
        except ApplicationError as error:
            raise exceptions.AuthenticationFailed(error.message) from error
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="api"'


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Tells the OpenAPI schema how agents and personal tokens authenticate."""

    target_class = "coordinates.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "agent or personal API token"}
