"""RSA keys made in the test, self-signed certificates for them, and RS256 JWTs they sign.

Signing is written here with `cryptography` alone, so the tokens Lancelot's google-auth code
checks are not produced by that same code.
"""

from __future__ import annotations

import base64
import datetime
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

CHAT_ISSUER = "chat@system.gserviceaccount.com"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class SigningKey:
    """A 2048-bit RSA key with a key id and a self-signed X.509 certificate."""

    subject: str = "test-signer"
    kid: str = field(default_factory=lambda: secrets.token_hex(8))
    key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )

    @property
    def certificate_pem(self) -> str:
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, self.subject)])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .sign(self.key, hashes.SHA256())
        )
        return cert.public_bytes(serialization.Encoding.PEM).decode()

    @property
    def private_pem(self) -> str:
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()

    def sign(self, claims: dict[str, Any], *, kid: str | None = None) -> str:
        """An RS256 JWT with these claims."""
        header = {"alg": "RS256", "typ": "JWT", "kid": kid or self.kid}
        signing_input = (
            b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
        )
        signature = self.key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return signing_input + "." + b64url(signature)

    def verifies(self, token: str) -> bool:
        """Whether `token` was signed by this key (the fake token endpoint checks this)."""
        try:
            signing_input, _, signature = token.rpartition(".")
            self.key.public_key().verify(
                b64url_decode(signature),
                signing_input.encode(),
                padding.PKCS1v15(),
                hashes.SHA256(),
            )
        except Exception:
            return False
        return True


def chat_claims(audience: str, *, lifetime: int = 3600, **overrides: Any) -> dict[str, Any]:
    """What Chat puts in its token when the audience is the project number."""
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": CHAT_ISSUER,
        "aud": audience,
        "iat": now,
        "exp": now + lifetime,
    }
    claims.update(overrides)
    return claims


def id_token_claims(audience: str, *, lifetime: int = 3600, **overrides: Any) -> dict[str, Any]:
    """A Google ID token for the endpoint URL, as Chat sends with that audience."""
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": "https://accounts.google.com",
        "aud": audience,
        "azp": "1234567890",
        "sub": "1234567890",
        "email": CHAT_ISSUER,
        "email_verified": True,
        "iat": now,
        "exp": now + lifetime,
    }
    claims.update(overrides)
    return claims


def claims_of(token: str) -> dict[str, Any]:
    """The payload of a JWT (unverified)."""
    payload = token.split(".")[1]
    data = json.loads(b64url_decode(payload))
    assert isinstance(data, dict)
    return data
