"""The guard that keeps a worker alive when kombu closes a channel of an already detached transport."""

from __future__ import annotations

from typing import Any

import pytest
from kombu import Connection

from workers.kombu_patches import tolerate_detached_transport_on_close


class _Transport:
    def __init__(self, client: Any) -> None:
        self.client = client


class _Channel:
    """A channel whose close fails the way kombu's redis channel does once its transport is detached."""

    def __init__(self, transport: _Transport) -> None:
        self.connection = transport

    def close(self) -> None:
        _ = self.connection.client.hostname  # AttributeError when client is None


def test_closing_a_channel_of_a_detached_transport_is_survived() -> None:
    # Given the guard, and a channel whose transport lost its client (the broker-drop race)
    tolerate_detached_transport_on_close()
    connection = Connection("memory://")
    # When kombu closes it, Then nothing escapes
    connection.maybe_close_channel(_Channel(_Transport(client=None)))


def test_other_attribute_errors_still_surface() -> None:
    # Given the guard, and a channel whose transport still has its client
    tolerate_detached_transport_on_close()
    connection = Connection("memory://")
    # When closing it fails with an AttributeError, Then that bug is not hidden
    with pytest.raises(AttributeError):
        connection.maybe_close_channel(_Channel(_Transport(client=object())))
