"""``guarded``: the one place a Redis call's failures become store errors."""

from __future__ import annotations

import pytest

from suture.workers.errors import StoreUnavailable
from suture.workers.store.errors import guarded


def _raises(exc: BaseException) -> object:
    raise exc


@pytest.mark.parametrize(
    "failure",
    [
        ValueError("I/O operation on closed file."),  # a socket redis-py closed under a call (failover)
        OSError(9, "Bad file descriptor"),
    ],
)
def test_a_socket_closed_under_a_call_is_an_outage(failure: BaseException) -> None:
    # Given a Redis call whose socket fails under redis-py's own handling / When it runs guarded
    with pytest.raises(StoreUnavailable) as caught:
        guarded(lambda: _raises(failure))
    # Then it is an outage (retried by the tasks), not an internal error
    assert str(failure).split(" ")[-1].rstrip(".") in str(caught.value)


def test_any_other_value_error_stays_a_bug() -> None:
    # Given a call failing with a ValueError of another kind / Then it is raised as it is
    with pytest.raises(ValueError, match="invalid literal"):
        guarded(lambda: _raises(ValueError("invalid literal for int()")))
