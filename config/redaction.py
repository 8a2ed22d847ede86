"""The one masking of credentials: in URLs of any form, and of known secret values, wherever text is shown.

A URL may carry a credential in its user info (``redis://user:pw@host``, ``amqp://:pw@host``) or in
its query (``redis://host/0?password=pw``, ``https://host/?token=...``). ``mask_url`` shows a URL
with both replaced by ``***``; ``url_secrets`` lists the values themselves (as written and
percent-decoded), so ``Settings.secrets()`` can redact them from prompts, logs and Sentry too;
``redact(text, secrets)`` masks every URL found in ``text`` and every given secret value. ``config
show``, the CLI's error lines and the broker and store errors all go through ``redact``. Pure
functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

MASK = "***"
# Query parameters that carry a credential (compared case-insensitively, "-" read as "_").
SECRET_PARAMS = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "client_secret",
        "token",
        "access_token",
        "auth",
        "auth_token",
        "api_key",
        "apikey",
        "key",
        "sig",
        "signature",
        "credential",
        "credentials",
    }
)
_URL = re.compile(r"""[A-Za-z][A-Za-z0-9+.-]*://[^\s'"<>`]+""")


# A sentinel:// URL lists its sentinels joined by ";" (kombu's form), each a URL of its own.
SENTINELS = "sentinel://"


def _secret_param(name: str) -> bool:
    return name.strip().lower().replace("-", "_") in SECRET_PARAMS


def url_secrets(url: str | None) -> list[str]:
    """The credential values inside ``url``: its password and secret query values, raw and decoded."""
    if not url:
        return []
    if url.startswith(SENTINELS) and ";" in url:  # sentinel://a;sentinel://b: each may carry a password
        forms = {form for part in url.split(";") for form in url_secrets(part.strip())}
        return sorted(forms, key=lambda form: (-len(form), form))
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return []
    found = [password] if password else []
    found += [value for name, value in _query_pairs(parts.query) if _secret_param(name) and value]
    forms = {form for value in found for form in (value, unquote(value)) if form}
    return sorted(forms, key=lambda form: (-len(form), form))  # longest first: overlaps are masked whole


def _query_pairs(query: str) -> list[tuple[str, str]]:
    """The raw (still percent-encoded) name=value pairs of a query string."""
    pairs = []
    for item in re.split(r"[&;]", query):
        name, _, value = item.partition("=")
        pairs.append((name, value))
    return pairs


def mask_url(url: str | None) -> str:
    """``url`` with its password and secret query values replaced by ``***`` (host, path, names kept)."""
    if not url:
        return ""
    if url.startswith(SENTINELS) and ";" in url:
        return ";".join(mask_url(part) for part in url.split(";"))
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return _mask_unparsed(url)
    netloc = parts.netloc
    if password is not None:
        userinfo, _, hostport = netloc.rpartition("@")
        user = userinfo.partition(":")[0]
        netloc = f"{user}:{MASK}@{hostport}"
    query = (
        "&".join(
            f"{name}={MASK}" if _secret_param(name) and value else (f"{name}={value}" if sep else name)
            for name, sep, value in (item.partition("=") for item in parts.query.split("&"))
        )
        if parts.query
        else ""
    )
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _mask_unparsed(url: str) -> str:
    """A URL ``urlsplit`` refuses (a bad port): mask everything between ``://`` and ``@``, and the query."""
    url = re.sub(r"(://[^/@]*?:)[^/@]*@", rf"\g<1>{MASK}@", url)
    return re.sub(r"\?.*$", f"?{MASK}", url)


def _masked_match(match: re.Match[str]) -> str:
    url = match.group(0)
    trail = len(url) - len(url.rstrip(".,;:!?)]}"))  # sentence punctuation after a URL is not part of it
    return mask_url(url[: len(url) - trail]) + url[len(url) - trail :]


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with credentials in every URL it holds masked, then every secret value replaced."""
    text = _URL.sub(_masked_match, text)
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


__all__ = ["MASK", "SECRET_PARAMS", "mask_url", "redact", "url_secrets"]
