"""The one callback check every entry point runs: each kind of internal address, each bad URL form."""

from __future__ import annotations

import ipaddress

import pytest

from suture.config.settings import WebhookSettings
from suture.workers.webhooks import CallbackRefused, check_callback
from suture.workers.webhooks.addresses import internal_reason

STRICT = WebhookSettings()


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("https://127.0.0.1/hook", "loopback"),
        ("https://127.1.2.3:6379/", "loopback"),
        ("https://[::1]/hook", "loopback"),
        ("https://localhost/hook", "loopback"),
        ("https://10.0.0.8/hook", "private"),
        ("https://172.16.5.4/hook", "private"),
        ("https://192.168.1.1/hook", "private"),
        ("https://[fd12:3456::1]/hook", "private"),
        ("https://169.254.10.20/hook", "link-local"),
        ("https://[fe80::1]/hook", "link-local"),
        ("https://169.254.169.254/latest/meta-data/", "metadata"),
        ("https://[fd00:ec2::254]/latest/", "metadata"),
        ("https://0.0.0.0/hook", "unspecified"),
        ("https://[::]/hook", "unspecified"),
        ("https://224.0.0.1/hook", "multicast"),
        ("https://[ff02::1]/hook", "multicast"),
        ("https://[::ffff:127.0.0.1]/hook", "IPv4-mapped loopback"),
        ("https://[::ffff:169.254.169.254]/hook", "IPv4-mapped metadata"),
        ("https://[64:ff9b::a00:1]/hook", "IPv4-mapped private"),
        ("https://100.64.0.1/hook", "reserved"),
        ("https://2130706433/hook", "loopback"),  # 127.0.0.1 written as one number
    ],
)
def test_an_internal_address_is_refused_naming_its_kind(url: str, kind: str) -> None:
    with pytest.raises(CallbackRefused, match=f"\\({kind} address\\)"):
        check_callback(url, STRICT)


@pytest.mark.parametrize(
    ("entry", "url"),
    [
        ("127.0.0.1", "https://127.0.0.1:8443/hook"),
        ("10.0.0.0/8", "https://10.9.8.7/hook"),
        ("localhost", "https://localhost/hook"),
        ("::1", "https://[::1]/hook"),
    ],
)
def test_allowed_hosts_lets_a_listed_internal_host_through(entry: str, url: str) -> None:
    check_callback(url, WebhookSettings(allowed_hosts=[entry]))


def test_a_listed_host_allows_nothing_else() -> None:
    with pytest.raises(CallbackRefused, match="private"):
        check_callback("https://10.0.0.2/hook", WebhookSettings(allowed_hosts=["10.0.0.1"]))


@pytest.mark.parametrize(
    ("callback", "why"),
    [
        ("http://8.8.8.8/hook", "use https"),
        ("ftp://8.8.8.8/file", "scheme 'ftp'"),
        ("file:///etc/passwd", "scheme 'file'"),
        ("gopher://8.8.8.8:6379/_SET", "scheme 'gopher'"),
        ("https://8.8.8.8/hook\r\nX-Evil: 1", "control character"),
        ("https://8.8.8.8/a hook", "space"),
        ("https://user:pw@8.8.8.8/hook", "credentials"),
        ("https://8.8.8.8/" + "a" * 3000, "max_url_chars"),
        ("https://8.8.8.8:99999/hook", "not a valid URL"),
        ("https:///hook", "no host"),
        ("suture.watchdog", "webhook.allowed_tasks"),
        ("myapp.quiz_ready", "webhook.allowed_tasks"),
        ("https://does-not-exist.invalid/hook", "does not resolve"),
    ],
)
def test_a_bad_callback_is_refused_with_its_reason(callback: str, why: str) -> None:
    with pytest.raises(CallbackRefused, match=why.replace("'", "'")):
        check_callback(callback, STRICT)


def test_a_public_https_address_and_a_listed_task_pass() -> None:
    check_callback("https://8.8.8.8/hook", STRICT)
    check_callback("https://[2606:4700:4700::1111]/hook", STRICT)
    check_callback("myapp.quiz_ready", WebhookSettings(allowed_tasks=["myapp.quiz_ready"]))


def test_plain_http_passes_only_when_https_is_not_required() -> None:
    check_callback("http://8.8.8.8/hook", WebhookSettings(require_https=False))


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450::1"])
def test_public_addresses_are_not_internal(address: str) -> None:
    assert internal_reason(ipaddress.ip_address(address)) is None


def test_the_refusal_shows_a_long_callback_cut_and_control_characters_escaped() -> None:
    with pytest.raises(CallbackRefused) as raised:
        check_callback("https://x/" + "\r\n" + "b" * 500, STRICT)
    text = str(raised.value)
    assert "\n" not in text and "\\r\\n" in text and len(text) < 300


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:9/hook",
        "http://LocalHost./hook",
        "http://api.localhost/hook",
        "http://ip6-localhost/hook",
        "http://ip6-loopback/hook",
        "http://localhost.localdomain/hook",
        "http://printer.local/hook",
        "http://nas.home.arpa/hook",
        "http://metadata.google.internal/hook",
        "http://abc.onion/hook",
    ],
)
def test_a_reserved_name_is_refused_by_name_even_when_its_address_is_allowed(url: str) -> None:
    # Given loopback and every private network allowed by address
    allowing = WebhookSettings(
        require_https=False, allowed_hosts=["127.0.0.0/8", "::1", "10.0.0.0/8", "192.168.0.0/16"]
    )
    # Then the reserved name is still refused, before it is resolved
    with pytest.raises(CallbackRefused, match="reserved name"):
        check_callback(url, allowing)


def test_a_reserved_name_listed_by_name_passes_and_callbacks_off_refuses_every_url() -> None:
    check_callback("http://localhost/hook", WebhookSettings(require_https=False, allowed_hosts=["localhost"]))
    with pytest.raises(CallbackRefused, match=r"webhook.enabled: false"):
        check_callback("https://8.8.8.8/hook", WebhookSettings(enabled=False))
    check_callback("myapp.quiz_ready", WebhookSettings(enabled=False, allowed_tasks=["myapp.quiz_ready"]))
