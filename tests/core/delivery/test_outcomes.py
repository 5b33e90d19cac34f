"""What the outbox remembers of each delivery's end stays small: a failure keeps no frames."""

from __future__ import annotations

import gc
import weakref

from core.delivery.outcomes import Outcomes
from core.errors import DeliveryFailed


class Payload:
    """Stands for what a send attempt's frame holds (the card, the request body)."""


def failed_send() -> tuple[DeliveryFailed, weakref.ref[Payload]]:
    payload = Payload()
    try:
        try:
            raise ConnectionResetError(f"peer closed while sending {payload!r}")
        except ConnectionResetError as exc:
            raise DeliveryFailed("the channel refused the card") from exc
    except DeliveryFailed as failure:
        return failure, weakref.ref(payload)


def test_a_remembered_failure_keeps_no_attempt_alive() -> None:
    outcomes = Outcomes()
    failure, payload = failed_send()
    outcomes.finish("answer:telegram:7", failure)
    del failure
    gc.collect()
    assert payload() is None  # the attempt's frame (and its payload) are gone
    kept = outcomes.final("answer:telegram:7")
    assert isinstance(kept, DeliveryFailed)
    assert str(kept) == "the channel refused the card"
    assert isinstance(kept.__cause__, ConnectionResetError)  # what it says is kept
