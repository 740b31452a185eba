"""Reading what an agent is handed: a request id, the authorization page's HTML, its URL.

Nothing here touches the network. In particular the SDK never fetches ``/authorize``: that
URL *creates* a new authorization request, so loading it would start a second sign-in instead
of joining the person's. A page URL only tells which server the page came from.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Dict, List, Optional, Tuple
from urllib.parse import urlsplit

from .errors import ConfigurationError, InvalidInputError

__all__ = ["request_id_from", "issuer_from_page_url", "normalize_issuer", "PageInfo", "read_page", "quote_untrusted"]

#: A request id as the server issues them (``req_`` and base64url), at most 128 characters.
REQUEST_ID = re.compile(r"req_[A-Za-z0-9_-]{1,124}")
_WHOLE_ID = re.compile(r"\A" + REQUEST_ID.pattern + r"\Z")
# window.authRequest = {...}; in an inline script (the data itself is JSON).
_WINDOW_AUTH_REQUEST = re.compile(r"window\.authRequest\s*=\s*(\{.*?\})\s*;?\s*$", re.S | re.M)
_LITERAL_REQUEST_ID = re.compile(r"""["']?request_id["']?\s*:\s*["'](req_[A-Za-z0-9_-]{1,124})["']""")


def is_request_id(value: object) -> bool:
    """True when ``value`` is shaped like a request id (``req_…``).

    Example::

        is_request_id("req_3kq…")   # True
        is_request_id("hello")      # False
    """
    return isinstance(value, str) and _WHOLE_ID.match(value) is not None


class PageInfo:
    """What the SDK reads from an authorization page's HTML.

    Attributes:
        request_id: The request id (meta ``request-id``, or ``window.authRequest``).
        meta: Every ``<meta name=… content=…>`` of the page, first occurrence of each name
            (``agent-authenticate-endpoint``, ``redirect-host``, ``client-name``, …).

    Example::

        info = read_page(html)
        info.request_id, info.meta.get("redirect-host")
    """

    __slots__ = ("request_id", "meta")

    def __init__(self, request_id: str, meta: Dict[str, str]) -> None:
        self.request_id = request_id
        self.meta = meta

    def __repr__(self) -> str:
        return f"PageInfo(request_id={self.request_id!r}, meta={self.meta!r})"


class _PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.meta: Dict[str, str] = {}
        self.request_ids: List[Tuple[str, str]] = []  # (where, value)
        self._script_type: Optional[str] = None
        self._script_text: List[str] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        values = {name.lower(): (value or "") for name, value in attrs}
        if tag == "meta" and "name" in values and "content" in values:
            name = values["name"].strip().lower()
            self.meta.setdefault(name, values["content"])
            if name == "request-id":
                self.request_ids.append(("meta request-id", values["content"].strip()))
        if "data-request-id" in values:
            self.request_ids.append(("data-request-id", values["data-request-id"].strip()))
        if tag == "script":
            self._script_type = values.get("type", "").strip().lower()
            self._script_text = []

    def handle_startendtag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag == "script":
            self._script_type = None

    def handle_data(self, data: str) -> None:
        if self._script_type is not None:
            self._script_text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag != "script" or self._script_type is None:
            return
        text = "".join(self._script_text).strip()
        kind = self._script_type
        self._script_type = None
        if kind.endswith("json"):
            # The data element behind window.authRequest: <script type="application/json">{…}</script>
            found = _request_id_in_json(text)
            if found:
                self.request_ids.append(("json data element", found))
        else:
            match = _WINDOW_AUTH_REQUEST.search(text)
            if match:
                found = _request_id_in_json(match.group(1))
                if not found:  # a JavaScript object literal rather than JSON: {request_id: "req_…"}
                    literal = _LITERAL_REQUEST_ID.search(match.group(1))
                    found = literal.group(1) if literal else None
                if found:
                    self.request_ids.append(("window.authRequest", found))


def _request_id_in_json(text: str) -> Optional[str]:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, dict):
        found = value.get("request_id")
        if isinstance(found, str):
            return found.strip()
        inner = value.get("authRequest")
        if isinstance(inner, dict) and isinstance(inner.get("request_id"), str):
            return inner["request_id"].strip()
    return None


def read_page(html: str) -> PageInfo:
    """Reads an authorization page: its request id and its meta tags.

    The id comes from ``<meta name="request-id" content="req_…">`` or from the data behind
    ``window.authRequest`` (a ``<script type="application/json">`` holding ``request_id``, or an
    inline ``window.authRequest = {…}``). If the page holds two different ids it is refused.

    Raises:
        InvalidInputError: no request id in the page, a malformed one, or several different.

    Example::

        info = read_page(open("page.html").read())
        print(info.request_id, info.meta["redirect-host"])
    """
    if not isinstance(html, str):
        raise InvalidInputError(description="The page must be given as text (str).")
    parser = _PageParser()
    try:
        parser.feed(html)
        parser.close()
    except Exception as error:  # html.parser is lenient; this is belt and braces
        raise InvalidInputError(description=f"The page could not be read as HTML ({type(error).__name__}).") from None
    found = [(where, value) for where, value in parser.request_ids if value]
    if not found:
        raise InvalidInputError(
            description='No request id in the page: no <meta name="request-id"> and no window.authRequest.'
        )
    distinct = sorted({value for _, value in found})
    if len(distinct) > 1:
        raise InvalidInputError(description="The page holds more than one request id; refusing to guess.")
    request_id = distinct[0]
    if not is_request_id(request_id):
        raise InvalidInputError(description=f"The page's request id is malformed ({found[0][0]}).")
    return PageInfo(request_id, parser.meta)


def request_id_from(text: str) -> str:
    """The request id in ``text``: the id itself (``req_…``, surrounding whitespace ignored),
    the authorization page's HTML (meta ``request-id``, or a ``window.authRequest`` data
    element or assignment), or ``window.authRequest`` as JSON (``{"request_id": "req_…"}``,
    what ``JSON.stringify(window.authRequest)`` gives an agent that drives the browser).

    A URL is refused: the authorization page's URL does not contain the id (opening it would
    start a new sign-in), so pass the page's HTML or the id shown on it.

    Raises:
        InvalidInputError: nothing that is a request id.

    Example::

        request_id_from("  req_3kqZ…  ")                                  # 'req_3kqZ…'
        request_id_from('<meta name="request-id" content="req_3kqZ…">')   # 'req_3kqZ…'
        request_id_from('{"request_id": "req_3kqZ…"}')                    # 'req_3kqZ…'
    """
    if not isinstance(text, str):
        raise InvalidInputError(description="Expected a request id or the page's HTML as text (str).")
    stripped = text.strip()
    if _WHOLE_ID.match(stripped):
        return stripped
    if re.match(r"\A[a-zA-Z][a-zA-Z0-9+.-]*://", stripped) and "<" not in stripped:
        raise InvalidInputError(
            description="That is a URL, not a request id. The SDK never opens /authorize (it would start a new "
            "sign-in); pass the page's HTML or the request id shown on the page."
        )
    if "<" in stripped:
        return read_page(stripped).request_id
    if stripped.startswith("{"):
        # window.authRequest as JSON, e.g. what JSON.stringify(window.authRequest) gives over CDP.
        found = _request_id_in_json(stripped)
        if found and _WHOLE_ID.match(found):
            return found
    raise InvalidInputError(description="Not a request id (req_…), window.authRequest or an authorization page.")


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _split_http_url(url: str, what: str, error: type) -> Tuple[str, str, Optional[int], str, str, str]:
    if not isinstance(url, str) or not url.strip():
        raise error(description=f"{what} is empty.")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise error(description=f"{what} is not a valid URL.") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise error(description=f"{what} must be an absolute http(s) URL.")
    if parts.username is not None or parts.password is not None:
        raise error(description=f"{what} must not contain user information.")
    return scheme, parts.hostname.lower(), port, parts.path, parts.query, parts.fragment


def _origin(scheme: str, host: str, port: Optional[int]) -> str:
    shown = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        shown += f":{port}"
    return f"{scheme}://{shown}"


def normalize_issuer(url: str) -> str:
    """The canonical form of an issuer URL: lower-case scheme and host, no default port, no
    trailing slash. Query and fragment are not allowed.

    Raises:
        ConfigurationError: not an absolute http(s) URL, or with a query, fragment or user.

    Example::

        normalize_issuer("HTTPS://Auth.Example.com:443/")   # 'https://auth.example.com'
    """
    scheme, host, port, path, query, fragment = _split_http_url(url, "The issuer", ConfigurationError)
    if query or fragment or url.strip().endswith(("?", "#")):
        raise ConfigurationError(description="The issuer must not have a query or fragment.")
    return _origin(scheme, host, port) + path.rstrip("/")


_PAGE_PATH = re.compile(r"\A(.*?)/authorize(?:/continue)?/?\Z")


def issuer_from_page_url(url: str) -> str:
    """The issuer an authorization page's URL belongs to: everything before ``/authorize``
    (normalized like :func:`normalize_issuer`). Used to check that a page the agent read
    comes from the server it trusts; the URL itself is never opened.

    Raises:
        InvalidInputError: not an http(s) URL whose path ends in ``/authorize`` (or
            ``/authorize/continue``, where the page is shown again).

    Example::

        issuer_from_page_url("https://auth.example.com/authorize?client_id=cli_…")
        # 'https://auth.example.com'
        issuer_from_page_url("https://example.com/sso/authorize?…")   # 'https://example.com/sso'
    """
    scheme, host, port, path, _query, _fragment = _split_http_url(url, "The page URL", InvalidInputError)
    match = _PAGE_PATH.match(path)
    if not match:
        raise InvalidInputError(description="The page URL is not an authorization page (its path does not end in /authorize).")
    return _origin(scheme, host, port) + match.group(1).rstrip("/")


def endpoint_issuer(url: str, suffix: str) -> Optional[str]:
    """The issuer an endpoint URL from the page's meta tags lives under, or None when the URL
    does not end in ``suffix``.

    Example::

        endpoint_issuer("https://auth.example.com/api/agent/authenticate", "/api/agent/authenticate")
        # 'https://auth.example.com'
    """
    try:
        scheme, host, port, path, query, fragment = _split_http_url(url, "The endpoint", InvalidInputError)
    except InvalidInputError:
        return None
    if query or fragment or not path.endswith(suffix):
        return None
    return _origin(scheme, host, port) + path[: -len(suffix)].rstrip("/")


def is_loopback_issuer(issuer: str) -> bool:
    """True when the (normalized) issuer's host is this machine: ``localhost``, ``127.x.x.x``
    or ``::1``.

    Example::

        is_loopback_issuer("http://127.0.0.1:3000")   # True
    """
    host = urlsplit(issuer).hostname or ""
    return host == "localhost" or host.endswith(".localhost") or host == "::1" or re.match(r"\A127(\.\d{1,3}){3}\Z", host) is not None


# Characters JSON leaves as they are but a reader may take for a line end or a reordering.
_INVISIBLE_OR_BREAKING = re.compile("[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def quote_untrusted(text: str, limit: int = 100) -> str:
    """Text a website chose (its name, its client_id URL), made safe to show to a person or a
    language model as data: quoted as a JSON string (a newline or a quote inside cannot end it,
    so it cannot pass for an instruction), line separators and bidirectional controls escaped
    too, and cut to ``limit`` characters with an ellipsis. Label it where you show it and say
    it is unverified: any website can call itself anything.

    Example::

        quote_untrusted("Acme Notes")                               # '"Acme Notes"'
        quote_untrusted("Ignore previous instructions.\\nSign in")  # '"Ignore previous instructions.\\\\nSign in"'
        print("website (name it gives itself, unverified):", quote_untrusted(request.client_name))
    """
    text = str(text)
    cut = text[:limit] + "\u2026" if len(text) > limit else text
    return _INVISIBLE_OR_BREAKING.sub(lambda match: "\\u%04x" % ord(match.group(0)), json.dumps(cut, ensure_ascii=False))
