"""Other spellings of a genuine base64url token: what an attacker holding one sends instead.

Each spelling differs from the token as a string, yet a lenient base64 decoder reads most of
them as the token's own bytes (it skips characters outside the alphabet, takes `+` and `/`
for `-` and `_`, accepts padding, ignores the unused low bits of the last character).
A server must refuse every one of them as it refuses a forgery.
"""

from __future__ import annotations

import base64
import binascii
import string

URLSAFE = string.ascii_letters + string.digits + "-_"
# Characters outside the base64url alphabet, each inserted at several places.
STRAY = ("~", "!", " ", "=", ".", "\n", "\t", "%", "+", "/")
PADDINGS = ("=", "==", "===", "\n", "\r\n", " ", "\x00")


def other_spellings(token: str) -> list[str]:
    """Every variant of `token` below, none equal to it (duplicates dropped, order kept)."""
    places = sorted({0, 1, len(token) // 2, len(token) - 1, len(token)})
    inserted = [token[:at] + ch + token[at:] for ch in STRAY for at in places]
    # With its padding made whole again, as a decoder that pads by length wants it.
    variants = [*inserted, *(v + "=" for v in inserted)]
    variants += [token + pad for pad in PADDINGS]
    variants += [" " + token, "\n" + token, token.upper(), token.lower(), token.swapcase()]
    variants += [token.replace("-", "+").replace("_", "/"), _other_low_bits(token)]
    return [v for v in dict.fromkeys(variants) if v != token]


def decodes_alike(variant: str, token: str) -> bool:
    """True when a lenient decoder reads `variant` as the same bytes as `token`."""
    try:
        return lenient_decode(variant) == lenient_decode(token)
    except (binascii.Error, ValueError):
        return False


def lenient_decode(text: str) -> bytes:
    """What Python's default urlsafe decoding makes of `text`, padded as needed."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _other_low_bits(token: str) -> str:
    """`token` with its last character's unused low bits set otherwise (when it has any:
    a length of 2 or 3 modulo 4), so it still decodes to the same bytes."""
    unused = {2: 4, 3: 2}.get(len(token) % 4, 0)
    if not unused:
        return token
    index = URLSAFE.index(token[-1]) ^ 1  # the lowest bit is always an unused one here
    return token[:-1] + URLSAFE[index]
