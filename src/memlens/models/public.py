"""Model strings as they are recorded and shown: no credentials, one spelling per server.

A base URL may carry credentials (``http://user:KEY@host/v1``, ``?api_key=KEY``). The backend
still talks to that URL, but every model id, cache key, manifest, report and message uses
``public_model_string``: userinfo dropped, secret query values replaced by ``<redacted>``, and the
URL normalised (scheme and host lower case, ``localhost`` / ``[::1]`` -> ``127.0.0.1``, default
port and trailing ``/`` dropped), so the same server is the same model id and a run resumes.
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


def api_model_id(backend: str, model_name: str, base_url: str | None) -> str:
    """The model id of an API backend (``openai`` / ``anthropic``) for ``model_name`` at
    ``base_url``; Anthropic's optional trailing ``/v1`` is dropped (its SDK adds it).

    >>> api_model_id("anthropic", "claude", "http://localhost:9/v1/")
    'anthropic:claude@http://127.0.0.1:9'
    """
    if not base_url:
        return f"{backend}:{model_name}"
    url = public_base_url(base_url)
    if backend == "anthropic":
        path_end = len(url) - len(urlsplit(url).query) - (1 if urlsplit(url).query else 0)
        if url[:path_end].endswith("/v1"):
            url = url[:path_end - 3] + url[path_end:]
    return f"{backend}:{model_name}@{url}"


def public_model_string(model: str) -> str:
    """The form of a model (or labeler) string to record and show: for API backends the model
    id (``api_model_id``); any other string with its credentials scrubbed. Never raises.

    >>> public_model_string("openai:qwen@http://u:KEY@localhost:8000/v1/")
    'openai:qwen@http://127.0.0.1:8000/v1'
    >>> public_model_string("embedded"), public_model_string("vllm:Qwen/Qwen3-4B")
    ('embedded', 'vllm:Qwen/Qwen3-4B')
    """
    backend, _, name = model.strip().partition(":")
    if backend in ("openai", "anthropic") and name:
        from memlens.models.openai_compat import split_model_string

        model_name, base_url = split_model_string(name)
        return api_model_id(backend, model_name, base_url)
    return scrub_credentials(model.strip())


def url_secrets(url: str | None) -> list[str]:
    """The credential values inside ``url`` (the password, or a user name standing alone as a
    token; secret query values), to scrub from error messages.

    >>> url_secrets("http://user:KEY1@h/v1?token=T123&x=1"), url_secrets("http://sk-abc@h")
    (['KEY1', 'T123'], ['sk-abc'])
    """
    if not url:
        return []
    try:
        parts = urlsplit(url)
        found = [parts.password or parts.username]
    except ValueError:
        return []
    found += [value for name, value in parse_qsl(parts.query) if name.lower() in SECRET_QUERY_NAMES]
    return [value for value in found if value and len(value) >= 4]


def public_config(config: dict) -> dict:
    """``config`` (a flat settings mapping) with every string value in its public form, for
    manifests and for comparing a resumed run's settings with the stored ones.

    >>> public_config({"model": "openai:m@http://localhost:8/v1/", "seed": 1})
    {'model': 'openai:m@http://127.0.0.1:8/v1', 'seed': 1}
    """
    return {key: public_model_string(value) if isinstance(value, str) else value
            for key, value in config.items()}
