"""HTTP for the SDK: urllib only, JSON in and out, no redirects, typed errors, Retry-After.

Private module; the public surface is :class:`agentauth.AgentAuth`.
"""

from __future__ import annotations

import email.utils
import json
import logging
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from http.client import HTTPException, HTTPResponse
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ._version import __version__ as _version
from .errors import (
    AgentAuthError,
    NetworkError,
    ProtocolError,
    TemporarilyUnavailableError,
    TooManyRequestsError,
    error_for,
)

log = logging.getLogger("agentauth")

#: Retries after 429 or 503 (each after the server's Retry-After), within the call's time.
MAX_RETRIES = 3
#: Wait when a 429/503 carries no usable Retry-After.
DEFAULT_RETRY_AFTER = 1.0
#: Largest JSON answer read, in bytes. The server's are under 3 KiB (the longest, the lookup,
#: holds a 200-character name, a 512-character client_id and a 1000-character resource) and its
#: own request bodies stop at 64 KiB; past that the answer is not agentauth's (design §12).
MAX_BODY = 64 * 1024
#: Bytes asked for per read of an answer: each read is one system call, so the deadline is
#: checked between them however slowly the server sends.
READ_SIZE = 16 * 1024

USER_AGENT = f"agentauth-python/{_version} (Python {sys.version_info[0]}.{sys.version_info[1]})"


def set_read_timeout(response: Any, seconds: float) -> bool:
    """Sets the socket timeout of an open response (or of the HTTPError wrapping one), so that
    no single read waits past the call's deadline. Relies on http.client's internals; without
    them the timeout given at open applies."""
    for fp in (getattr(response, "fp", None), getattr(getattr(response, "fp", None), "fp", None)):
        sock = getattr(getattr(fp, "raw", None), "_sock", None)
        if sock is not None and hasattr(sock, "settimeout"):
            try:
                sock.settimeout(seconds)
            except OSError:
                return False
            return True
    return False


def read_capped(response: Any, deadline: float, limit: int) -> Tuple[bytes, str]:
    """The body, read one system call at a time until it ends: (the bytes, ""), or what was
    read and why it stopped ("too_large" past ``limit`` bytes, "timeout" at ``deadline``)."""
    read1 = getattr(response, "read1", None)
    body = bytearray()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return bytes(body), "timeout"
        set_read_timeout(response, max(0.05, remaining))
        piece = read1(READ_SIZE) if read1 is not None else response.read(limit + 1 - len(body))
        if not piece:
            return bytes(body), ""
        body += piece
        if len(body) > limit:
            return bytes(body[: limit + 1]), "too_large"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is answered as itself: the SDK never sends a request (or the secret) on to
    an address the server names."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds from a Retry-After header: delta-seconds or an HTTP-date; None if absent or bad.

    Example::

        parse_retry_after("5")                               # 5.0
        parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT")   # seconds until then, at least 0
    """
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(int(text))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class Transport:
    """Sends the SDK's requests to one issuer."""

    def __init__(self, issuer: str, redact: Callable[[str], str]) -> None:
        self.issuer = issuer
        self.redact = redact
        self.opener = urllib.request.build_opener(_NoRedirect())

    def url(self, path: str, query: Optional[Mapping[str, str]] = None) -> str:
        return self.issuer + path + ("?" + urllib.parse.urlencode(query) if query else "")

    def open(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, str]] = None,
        body: Optional[bytes] = None,
        accept: str = "application/json",
        timeout: float,
        authorization: Optional[str] = None,
    ) -> HTTPResponse:
        """Opens one request; an HTTP error answer is returned, not raised. Network failures
        raise :class:`NetworkError`."""
        headers = {"Accept": accept, "User-Agent": USER_AGENT}
        if authorization is not None:
            headers["Authorization"] = authorization
        if body is not None:
            headers["Content-Type"] = "application/json"
        if accept == "text/event-stream":
            headers["Cache-Control"] = "no-cache"
        request: Optional[urllib.request.Request] = urllib.request.Request(self.url(path, query), data=body, headers=headers, method=method)
        failure = ""
        try:
            return self.opener.open(request, timeout=max(timeout, 0.05))  # type: ignore[no-any-return]
        except urllib.error.HTTPError as answer:
            return answer  # type: ignore[return-value]
        except (urllib.error.URLError, OSError, HTTPException) as error:
            failure = self._network_text(method, path, error)
        finally:
            # The body holds the secret: leave it in no frame a traceback keeps (error
            # reporters such as Sentry record frame locals).
            body = request = authorization = headers = None  # type: ignore[assignment]
        # Raised outside the except clause, so that it chains no low-level exception whose
        # frames (http.client's send) hold the body.
        raise NetworkError(description=failure)

    def _network_text(self, method: str, path: str, error: BaseException) -> str:
        reason: Any = getattr(error, "reason", None) or error
        if isinstance(reason, socket.timeout) or "timed out" in str(reason):
            text = "no answer in time"
        else:
            text = str(reason) or type(reason).__name__
        return self.redact(f"{method} {self.issuer}{path} failed: {text}")

    def call(
        self,
        method: str,
        path: str,
        *,
        deadline: float,
        query: Optional[Mapping[str, str]] = None,
        json_body: Optional[Dict[str, Any]] = None,
        max_retries: int = MAX_RETRIES,
        request: Any = None,
        retried: Optional[List[int]] = None,
        fresh: Optional[Callable[[], Dict[str, Any]]] = None,
        authorization: Optional[Callable[[], str]] = None,
    ) -> Dict[str, Any]:
        """One JSON call; after 429 or 503 waits Retry-After and tries again (at most
        ``max_retries`` times, and only if the wait ends before ``deadline``). Returns the
        JSON object of a 2xx answer; raises the typed error otherwise. The statuses that were
        retried are appended to ``retried``. ``fresh`` adds fields made anew for each attempt
        (a key-bound agent's assertion, which the server accepts once); ``authorization`` makes
        the Authorization header anew for each attempt, likewise."""
        body = None if json_body is None else json.dumps(json_body).encode("utf-8")
        retries = 0
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise NetworkError(description=f"{method} {self.issuer}{path}: the call's time ran out")
                if fresh is not None:
                    body = json.dumps({**(json_body or {}), **fresh()}).encode("utf-8")
                try:
                    header = authorization() if authorization is not None else None
                    return self._once(method, path, query, body, remaining, request, header)
                except (TooManyRequestsError, TemporarilyUnavailableError) as error:
                    wait = error.retry_after if error.retry_after is not None else DEFAULT_RETRY_AFTER
                    if retries >= max_retries or time.monotonic() + wait >= deadline:
                        raise
                    retries += 1
                    if retried is not None and error.status is not None:
                        retried.append(error.status)
                    log.info("agentauth: %s %s answered %s; retrying in %g s (retry %d of %d)", method, path, error.status, wait, retries, max_retries)
                    time.sleep(wait)
        finally:
            body = json_body = header = None  # no secret in the frames a traceback keeps

    def _once(
        self,
        method: str,
        path: str,
        query: Optional[Mapping[str, str]],
        body: Optional[bytes],
        timeout: float,
        request: Any,
        authorization: Optional[str] = None,
    ) -> Dict[str, Any]:
        deadline = time.monotonic() + timeout
        try:
            response = self.open(method, path, query=query, body=body, timeout=timeout, authorization=authorization)
        finally:
            body = authorization = None  # no secret in the frames a traceback keeps
        try:
            status, data = self._read(response, method, path, deadline)
        finally:
            response.close()
        log.debug("agentauth: %s %s -> %s", method, path, status)
        if 200 <= status < 300:
            if not isinstance(data, dict):
                raise ProtocolError(status=status, description=f"{method} {path} answered {status} without a JSON object.")
            return data
        error = self.error_from(status, data, response.headers.get("Retry-After"), request)
        data = None  # the answer as received (unredacted) stays in no frame a traceback keeps
        raise error

    def _read(self, response: HTTPResponse, method: str, path: str, deadline: float) -> Tuple[int, Any]:
        status = response.status if response.status is not None else response.getcode()  # type: ignore[union-attr]
        failure = ""
        stopped = ""
        raw = b""
        try:
            raw, stopped = read_capped(response, deadline, MAX_BODY)
        except (OSError, HTTPException) as error:
            failure = self._network_text(method, path, error)
        if stopped == "timeout":
            failure = self.redact(f"{method} {self.issuer}{path} failed: no answer in time")
        if failure:
            raise NetworkError(description=failure)
        if stopped == "too_large":
            raise ProtocolError(status=status, description=f"{method} {path} answered more than {MAX_BODY} bytes; no agentauth answer is that large.")
        try:
            return status, json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return status, None

    def error_from(self, status: int, data: Any, retry_after_header: Optional[str], request: Any = None) -> AgentAuthError:
        """The typed error for an error answer (``data`` its parsed JSON, or None)."""
        retry_after = parse_retry_after(retry_after_header)
        code = data.get("error") if isinstance(data, dict) and isinstance(data.get("error"), str) else None
        description = data.get("error_description") if isinstance(data, dict) else None
        if not isinstance(description, str):
            if 300 <= status < 400:
                description = "The server answered with a redirect, which the SDK does not follow."
            else:
                description = f"The server answered HTTP {status}" + (" without an error body." if code is None else ".")
        if code is None and 300 <= status < 400:
            return ProtocolError(status=status, description=description, request=request)
        return error_for(code, status, self.redact(description), retry_after, request=request)
