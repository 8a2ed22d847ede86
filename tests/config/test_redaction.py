"""One masking of credentials: passwords in user info and in queries, and known secret values."""

from __future__ import annotations

import pytest

from suture.config.redaction import mask_url, redact, url_secrets


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:pw@h:6379/0", "redis://:***@h:6379/0"),
        ("redis://user:pw@h/0", "redis://user:***@h/0"),
        ("redis://h/0?password=pw&db=1", "redis://h/0?password=***&db=1"),
        ("https://h/cb?Access-Token=t&x=1", "https://h/cb?Access-Token=***&x=1"),
        ("amqp://guest:gu%40st@rabbit//", "amqp://guest:***@rabbit//"),
        ("redis://h:6379/0", "redis://h:6379/0"),
        ("redis://u:pw@h:99999/0?password=x", "redis://u:***@h:99999/0?password=***"),
        (
            "sentinel://:pw@a:26379/0;sentinel://:p2@b:26380",
            "sentinel://:***@a:26379/0;sentinel://:***@b:26380",
        ),
    ],
)
def test_mask_url_hides_every_credential_and_keeps_the_rest(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_url_secrets_lists_values_as_written_and_decoded() -> None:
    assert url_secrets("redis://:p%2Fw@h/0?password=s%40t&db=1") == ["p%2Fw", "s%40t", "p/w", "s@t"]
    assert url_secrets(None) == [] and url_secrets("redis://h/0") == []
    assert url_secrets("sentinel://:pw@a:1/0;sentinel://:p%2F2@b:2") == ["p%2F2", "p/2", "pw"]


def test_redact_masks_urls_in_text_and_secret_values_and_keeps_punctuation() -> None:
    text = "cannot reach redis://:hunter2@10.0.0.1:6379/0?password=x. (key sk-1)"
    assert redact(text, ["sk-1"]) == "cannot reach redis://:***@10.0.0.1:6379/0?password=***. (key ***)"
