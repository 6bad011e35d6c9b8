"""One JSON POST to a model server (a rerank or chat endpoint) over urllib, with errors that say how to fix them."""

from __future__ import annotations

import http.client
import ipaddress
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ragls.errors import ConfigError, RaglsError

_SNIPPET = 300


class ProviderError(RaglsError):
    """A model server could not be reached, was too slow, or answered something unusable."""


def endpoint_url(url: str, setting: str, suffix: str) -> str:
    """`url` as given when it already ends in `suffix`'s last part; else `suffix` appended to the base.

    `http://host:port`, `.../v1` and `.../v1/rerank` all name `.../v1/rerank` for suffix `/v1/rerank`.
    """
    base = url.strip().rstrip("/") if isinstance(url, str) else ""
    parsed = urllib.parse.urlparse(base)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ConfigError(f"{setting}: expected an http(s) URL such as http://127.0.0.1:8080, got {url!r}")
    last = suffix.rsplit("/", 1)[-1]
    if base.endswith("/" + last):
        return base
    version = suffix.split("/")[1]  # "v1" in "/v1/rerank"
    if base.endswith("/" + version):
        return base + suffix[len(version) + 1 :]
    return base + suffix


def post_json(url: str, payload: dict[str, Any], api_key: str | None, timeout: float, setting: str) -> Any:
    """The decoded JSON answer; ProviderError names the URL and the setting to fix."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), headers=headers, method="POST")
    try:
        with opener_for(url).open(request, timeout=timeout) as response:
            body = response.read()
    except urllib.error.HTTPError as error:
        hint = f" (check {setting}.apiKey)" if error.code in (401, 403) else ""
        raise ProviderError(f"{url} answered HTTP {error.code}{hint}: {snippet(error.read())}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
        reason = getattr(error, "reason", error)
        if isinstance(reason, TimeoutError) or isinstance(error, TimeoutError):
            raise ProviderError(f"{url} did not answer within {timeout:g} s; raise {setting}.timeout") from None
        raise ProviderError(f"cannot reach {url} ({reason}); start the server or fix {setting}.url") from None
    try:
        return json.loads(body)
    except ValueError:
        raise ProviderError(f"{url} answered something that is not JSON: {snippet(body)}") from None


def snippet(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip().replace("\n", " ")
    return text if len(text) <= _SNIPPET else text[:_SNIPPET] + "..."


def opener_for(url: str) -> urllib.request.OpenerDirector:
    """A loopback endpoint is never sent through an HTTP(S)_PROXY from the environment."""
    host = urllib.parse.urlparse(url).hostname or ""
    if host == "localhost" or _is_loopback(host):
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
