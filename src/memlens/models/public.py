"""URL credentials kept out of everything recorded and shown.

A base URL may carry credentials (``http://user:KEY@host/v1``, ``?api_key=KEY``). The backend
still talks to that URL, but every model id, cache key, manifest, report and message uses the
public form (``memlens.models.modelstring.ModelSpec``, built with ``public_base_url``): userinfo
dropped, secret query values replaced by ``<redacted>``, and the URL normalised (scheme and host
lower case, ``localhost`` / ``[::1]`` -> ``127.0.0.1``, default port and trailing ``/`` dropped), so
the same server is the same model id and a run resumes. ``scrub_credentials`` cleans any other
text (foreign error messages, strings that are not model strings). Imports nothing of
``memlens.models``.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit, urlunsplit

REDACTED = "<redacted>"
SECRET_QUERY_NAMES = frozenset({
    "api_key", "api-key", "apikey", "key", "token", "access_token", "auth", "authorization",
    "secret", "password", "passwd", "sig", "signature", "code"})
_LOOPBACK_NAMES = {"localhost", "::1", "127.0.0.1"}
_DEFAULT_PORTS = {"http": 80, "https": 443}
_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^/?#@\s]*@")
_SECRET_QUERY = re.compile(r"(?i)([?&;](?:" + "|".join(re.escape(name) for name in
                                                        sorted(SECRET_QUERY_NAMES)) + r")=)[^&#\s]*")


def scrub_credentials(text: str) -> str:
    """``text`` with URL userinfo removed and secret query values redacted (any text: errors,
    manifest values, unparsable model strings).

    >>> scrub_credentials("openai:m@http://user:sk-1@h:8/v1?api_key=sk-2&x=1 failed")
    'openai:m@http://h:8/v1?api_key=<redacted>&x=1 failed'
    """
    return _SECRET_QUERY.sub(lambda m: m.group(1) + REDACTED, _USERINFO.sub(r"\1", text))


def public_base_url(url: str) -> str:
    """The normalised, credential-free form of a base URL.

    >>> public_base_url("HTTP://user:SECRET@LocalHost:80/v1/")
    'http://127.0.0.1/v1'
    >>> public_base_url("https://[::1]:443/v1?token=abc&api-version=2")
    'https://127.0.0.1/v1?token=<redacted>&api-version=2'
    """
    try:
        parts = urlsplit(url.strip())
        host, port = (parts.hostname or "").lower(), parts.port
    except ValueError:  # e.g. a port that is not a number
        return scrub_credentials(url.strip()).rstrip("/")
    scheme = parts.scheme.lower()
    if host in _LOOPBACK_NAMES:
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    query = _SECRET_QUERY.sub(lambda m: m.group(1) + REDACTED, "?" + parts.query)[1:]
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), query, ""))


def split_base_url(url: str) -> tuple[str, dict[str, str]]:
    """``(url without its query, the query's parameters)``: the SDKs join the endpoint path onto
    the base URL's text, so a query left in it built ``/v1/?api_key=Kchat/completions``; the
    parameters go to the client as its default query instead (sent with every request, never
    shown: ``public_base_url`` redacts them in ids and messages).

    >>> split_base_url("http://h:8/v1/?api_key=K&x=1")
    ('http://h:8/v1', {'api_key': 'K', 'x': '1'})
    >>> split_base_url("http://h:8/v1/")
    ('http://h:8/v1', {})
    """
    parts = urlsplit(url.strip())
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", "")), query
