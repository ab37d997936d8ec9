"""Signing checkpoints with a key the database does not hold (Ed25519, `cryptography`).

An attacker who can edit the database can rewrite a chain's tail, its head row and even a
checkpoint row so that every hash agrees again; they cannot sign the new checkpoint. The
private key comes from the environment (MARIA_TRAIL_SIGNING_KEY: the base64 of the 32-byte
seed, or MARIA_TRAIL_SIGNING_KEY_FILE: a file holding it); the public key is published
(GET /api/v1/trail/public-key/, `manage.py trail_key --public`) for auditors to keep and
pass to `verify_trail --public-key`. What is signed is the checkpoint's hash, which commits
to its body (every chain's head and digest) and to the checkpoint before it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings

ALGORITHM = "Ed25519"


class SigningKeyError(ValueError):
    """The configured key or a given public key cannot be read."""


@dataclass(frozen=True, slots=True)
class PublicKey:
    key: Ed25519PublicKey

    @property
    def raw(self) -> bytes:
        return self.key.public_bytes(Encoding.Raw, PublicFormat.Raw)

    @property
    def key_id(self) -> str:
        """The first 16 hex digits of the raw key's sha256: names the key a checkpoint used."""
        return hashlib.sha256(self.raw).hexdigest()[:16]

    @property
    def text(self) -> str:
        return base64.b64encode(self.raw).decode()

    def verifies(self, message: str, signature: str) -> bool:
        try:
            self.key.verify(binascii.unhexlify(signature), message.encode())
        except (InvalidSignature, binascii.Error, ValueError):
            return False
        return True


def new_seed() -> str:
    """A fresh private key as the text MARIA_TRAIL_SIGNING_KEY takes."""
    seed = Ed25519PrivateKey.generate().private_bytes_raw()
    return base64.b64encode(seed).decode()


def _private(text: str) -> Ed25519PrivateKey:
    try:
        seed = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError) as error:
        raise SigningKeyError("the trail signing key is not base64") from error
    if len(seed) != 32:
        raise SigningKeyError(f"the trail signing key is {len(seed)} bytes, not 32")
    return Ed25519PrivateKey.from_private_bytes(seed)


@cache
def _configured(text: str, path: str) -> Ed25519PrivateKey | None:
    if text:
        return _private(text)
    if path:
        try:
            return _private(Path(path).read_text())
        except OSError as error:
            raise SigningKeyError(f"cannot read the trail signing key {path}: {error}") from error
    return None


def signing_key() -> Ed25519PrivateKey | None:
    """The configured private key, or None: checkpoints are then left unsigned."""
    return _configured(settings.MARIA_TRAIL_SIGNING_KEY, settings.MARIA_TRAIL_SIGNING_KEY_FILE)


def public_key() -> PublicKey | None:
    key = signing_key()
    return PublicKey(key.public_key()) if key is not None else None


def public_keys() -> list[PublicKey]:
    """The keys checkpoints here may carry: the configured key's public half, then the
    previous keys' (MARIA_TRAIL_PREVIOUS_PUBLIC_KEYS), so that a rotation keeps the older
    checkpoints verifiable."""
    keys = [key] if (key := public_key()) is not None else []
    return keys + [public_key_from(text) for text in settings.MARIA_TRAIL_PREVIOUS_PUBLIC_KEYS]


def sign(message: str) -> tuple[str, str]:
    """(signature as hex, key id), or ("", "") without a key."""
    key = signing_key()
    if key is None:
        return "", ""
    return key.sign(message.encode()).hex(), PublicKey(key.public_key()).key_id


def public_key_from(text: str) -> PublicKey:
    """A public key as `verify_trail --public-key` takes it: the base64 of the 32 raw bytes,
    or a file holding that."""
    candidate = text.strip()
    path = Path(candidate)
    if len(candidate) < 200 and path.is_file():
        candidate = path.read_text().strip()
    try:
        raw = base64.b64decode(candidate, validate=True)
    except (binascii.Error, ValueError) as error:
        raise SigningKeyError("the public key is not base64") from error
    if len(raw) != 32:
        raise SigningKeyError(f"the public key is {len(raw)} bytes, not 32")
    return PublicKey(Ed25519PublicKey.from_public_bytes(raw))
