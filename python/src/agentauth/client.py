"""The agent's side of an agentauth sign-in: look a request up, check it, authenticate, wait."""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import socket
import time
from dataclasses import dataclass, replace
from http.client import HTTPException, HTTPResponse
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, Union
from urllib.parse import urlsplit

from ._http import Transport, set_read_timeout
from .errors import (
    AgentAuthError,
    ConfigurationError,
    InvalidInputError,
    IssuerMismatchError,
    NetworkError,
    ProtocolError,
    RequestAlreadyUsedError,
    RequestExpiredError,
    RequestMismatchError,
    ServerError,
    TemporarilyUnavailableError,
    TooManyRequestsError,
    WaitTimeoutError,
    error_for,
)
from .keys import AgentKey
from .page import (
    PageInfo,
    endpoint_issuer,
    is_loopback_issuer,
    issuer_from_page_url,
    normalize_issuer,
    quote_untrusted,
    read_page,
    request_id_from,
)

__all__ = ["AgentAction", "AgentAuth", "ApprovalPending", "RequestStatus", "SignInRequest", "SignInResult"]

log = logging.getLogger("agentauth")

#: Seconds the SDK tolerates a push stream without a byte (the server sends a keep-alive every 15 s).
STREAM_IDLE = 35.0
#: Polling (docs/contract.md, "Polling guidance and backoff"): every second for the first minute…
POLL_INTERVAL = 1.0
POLL_STEADY_FOR = 60.0
#: …then doubling from 2 s, never more than 30 s apart.
POLL_MAX_INTERVAL = 30.0
#: The longest one status request may take while waiting.
POLL_REQUEST_TIMEOUT = 10.0
#: The longest push-stream line, and the most data lines one event may carry, in bytes. The server's
#: events are under 300 bytes; past this a stream is not agentauth's, and reading on would let a
#: server fill the agent's memory (design §12).
MAX_STREAM_LINE = 64 * 1024
MAX_EVENT_DATA = 64 * 1024
#: Seconds past the request's expiry that a wait for the owner's approval still waits: the
#: server ends the request at its expiry, and the last poll of a backed-off schedule (30 s apart)
#: should read that end rather than time out just before it.
APPROVAL_GRACE = 35.0
#: An expected resource as the server takes it: visible ASCII, at most 1000 characters.
_RESOURCE = re.compile(r"\A[\x21-\x7e]{1,1000}\Z")

_STATUSES = ("pending", "authenticated", "completed", "error")
_ACTION_STATUSES = ("pending", "approved", "denied", "expired")
#: Where an agent lists its actions, and the request_id a key-bound agent's assertion names there.
ACTIONS_PATH = "/api/agent/actions"
ACTIONS_ASSERTION_REQUEST_ID = "agent-actions"
#: Seconds between looks while an action waits, when the server does not say (it does: ``interval``).
ACTION_POLL_INTERVAL = 5.0


class _Secret:
    """Holds the agent secret so that no repr, str, vars() or log of the SDK shows it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "<hidden>"

    __str__ = __repr__

    def __reduce__(self):  # type: ignore[no-untyped-def]
        raise TypeError("the agent secret is not picklable")


@dataclass(frozen=True)
class SignInRequest:
    """What the server says about an authorization request (``GET /api/agent/request``),
    without credentials: which site it signs in to and where the browser will be sent.

    Attributes:
        request_id: The id (``req_…``).
        client_id: The website's client id (``cli_…``).
        client_name: The website's registered name, as the person sees it on the page.
        redirect_host: Host (and port) the browser is sent to with the code.
        scope: Space-separated scopes, e.g. ``"openid email profile"``.
        expires_at: When the request expires, epoch seconds.
        expires_in: Seconds left (0 once expired).
        status: ``pending``, ``authenticated``, ``completed`` or ``error``.
        error: With ``status`` ``error``: ``request_expired``, ``access_denied`` or
            ``request_contested``.
        error_description: Human text for ``error``.
        resource: The server the website's tokens would be for (an RFC 8707 resource), or
            ``None`` when they are for the website itself. :meth:`AgentAuth.sign_in` refuses
            one the agent did not expect.

    Example::

        request = auth.inspect("req_…")
        if request.redirect_host != "notes.acme.example":
            print("Refusing: this would sign in to", request.client_name)
    """

    request_id: str
    client_id: str
    client_name: str
    redirect_host: str
    scope: str
    expires_at: int
    expires_in: int
    status: str
    error: Optional[str] = None
    error_description: Optional[str] = None
    resource: Optional[str] = None

    @property
    def scopes(self) -> Tuple[str, ...]:
        """The scope values as a tuple.

        Example::

            "email" in auth.inspect(request_id).scopes
        """
        return tuple(self.scope.split())

    @property
    def is_pending(self) -> bool:
        """True while no agent has authenticated and the request has not ended.

        Example::

            if auth.inspect(request_id).is_pending: ...
        """
        return self.status == "pending"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "SignInRequest":
        """Builds it from the lookup's JSON answer.

        Raises:
            ProtocolError: a field is missing or has the wrong type.

        Example::

            SignInRequest.from_json({"request_id": "req_…", "client_id": "cli_…", …})
        """
        strings = ("request_id", "client_id", "client_name", "redirect_host", "scope", "status")
        integers = ("expires_at", "expires_in")
        for name in strings:
            if not isinstance(data.get(name), str):
                raise ProtocolError(description=f"The request lookup's answer lacks {name}.")
        for name in integers:
            value = data.get(name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ProtocolError(description=f"The request lookup's answer lacks {name}.")
        if data["status"] not in _STATUSES:
            raise ProtocolError(description=f"Unknown request status {data['status']!r}.")
        # Absent from a server older than resource indicators: it issues no such tokens.
        resource = data.get("resource")
        if resource is not None and not isinstance(resource, str):
            raise ProtocolError(description="The request lookup's resource is neither text nor null.")
        error = data.get("error")
        description = data.get("error_description")
        return cls(
            request_id=data["request_id"],
            client_id=data["client_id"],
            client_name=data["client_name"],
            redirect_host=data["redirect_host"],
            scope=data["scope"],
            expires_at=data["expires_at"],
            expires_in=data["expires_in"],
            status=data["status"],
            error=error if isinstance(error, str) else None,
            error_description=description if isinstance(description, str) else None,
            resource=resource,
        )


@dataclass(frozen=True)
class RequestStatus:
    """A request's status as ``GET /api/check-status`` reports it.

    Attributes:
        status: ``pending``, ``authenticated``, ``completed`` or ``error``.
        error: With ``error``: ``request_expired``, ``access_denied`` or ``request_contested``.
        error_description: Human text for ``error``.

    Example::

        state = auth.check_status("req_…")
        if state.status == "error":
            print(state.error, state.error_description)
    """

    status: str
    error: Optional[str] = None
    error_description: Optional[str] = None
    #: True while the request waits for the agent's owner to approve it (status ``pending``).
    approval_pending: bool = False


@dataclass(frozen=True)
class AgentAction:
    """An action a website the agent signed in to asked its owner to approve (OpenID CIBA with
    RFC 9396 authorization details), as ``GET /api/agent/actions`` tells the agent. The
    website's words (``client_name``, ``words``, ``binding_message``) are its own: quote them
    (:func:`quote_untrusted`) before a model reads them.

    Attributes:
        id: The action request (``act_…``).
        client_id, client_name: The website that asks.
        words: Each detail of the action in words, e.g. "Pay 20 EUR to Acme".
        message: A sentence for the agent's user: "Waiting for your owner to approve: …",
            "Your owner approved: …", "Your owner denied: …", "Expired before …".
        binding_message: The website's message to the owner, if any.
        authorization_details: The action as RFC 9396 details.
        status: ``pending``, ``approved``, ``denied`` or ``expired``.
        answered_by: ``owner`` or ``policy`` once decided, else None.
        expires_at, expires_in: When it expires (epoch seconds) and the seconds left while pending.

    Example::

        for action in auth.list_actions():
            print(action.message)
    """

    id: str
    client_id: str
    client_name: str
    words: Tuple[str, ...]
    message: str
    binding_message: Optional[str]
    authorization_details: Tuple[Dict[str, Any], ...]
    status: str
    answered_by: Optional[str]
    created_at: int
    expires_at: int
    expires_in: int
    decided_at: Optional[int]

    @classmethod
    def from_json(cls, data: Any) -> "AgentAction":
        """One action as ``GET /api/agent/actions`` lists it; :class:`ProtocolError` for anything else.

        Example::

            AgentAction.from_json(answer["actions"][0]).status   # 'pending'
        """
        if not isinstance(data, dict) or data.get("status") not in _ACTION_STATUSES:
            raise ProtocolError(description="An action without a known status.")
        try:
            return cls(
                id=str(data["id"]),
                client_id=str(data["client_id"]),
                client_name=str(data["client_name"]),
                words=tuple(str(word) for word in data["words"]),
                message=str(data["message"]),
                binding_message=data.get("binding_message") if isinstance(data.get("binding_message"), str) else None,
                authorization_details=tuple(dict(detail) for detail in data["authorization_details"]),
                status=data["status"],
                answered_by=data.get("answered_by") if data.get("answered_by") in ("owner", "policy") else None,
                created_at=int(data["created_at"]),
                expires_at=int(data["expires_at"]),
                expires_in=int(data["expires_in"]),
                decided_at=int(data["decided_at"]) if isinstance(data.get("decided_at"), int) else None,
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ProtocolError(description=f"An action the SDK cannot read: {type(error).__name__}.") from None


@dataclass(frozen=True)
class ApprovalPending:
    """The agent's owner must approve this sign-in first: the server's 202 ``approval_pending``
    answer, as :meth:`AgentAuth.sign_in` hands it to ``on_approval_pending``.

    Attributes:
        message: The server's words for a person, e.g. "Waiting for Ada to approve signing in
            to Acme Notes; the request expires in 10 minutes."
        approval_id: The approval the owner decides (``apr_…``).
        expires_at: When the request, and with it the approval, expires: epoch seconds.
        expires_in: Seconds left to decide.

    Example::

        auth.sign_in(request_id, expect_host="notes.acme.example",
                     on_approval_pending=lambda pending: print(pending.message))
    """

    message: str
    approval_id: str
    expires_at: int
    expires_in: int


@dataclass(frozen=True)
class SignInResult:
    """The outcome of a successful :meth:`AgentAuth.sign_in`.

    Attributes:
        request_id: The request the agent authenticated.
        message: The server's message, e.g. "Agent authenticated. The browser will now
            continue to Acme Notes."
        request: The lookup the SDK checked before authenticating.
        approved_by_owner: True when the agent's owner had to approve the sign-in first (the
            server answered 202 ``approval_pending`` and the SDK waited for the decision).

    Example::

        result = auth.sign_in(request_id, expect_host="notes.acme.example")
        print(result.message)
        auth.wait_for_completion(result.request_id)
    """

    request_id: str
    message: str
    request: SignInRequest
    approved_by_owner: bool = False


def _approval_pending_of(data: Mapping[str, Any], request: SignInRequest) -> ApprovalPending:
    """The 202 answer's fields, checked."""
    message, approval_id = data.get("message"), data.get("approval_id")
    expires_at, expires_in = data.get("expires_at"), data.get("expires_in")
    if (
        not isinstance(message, str)
        or not isinstance(approval_id, str)
        or not isinstance(expires_at, int)
        or isinstance(expires_at, bool)
        or not isinstance(expires_in, int)
        or isinstance(expires_in, bool)
        or expires_in < 0
    ):
        raise ProtocolError(
            status=202,
            description="The approval_pending answer lacks its message, approval_id, expires_at or expires_in.",
            request=request,
        )
    return ApprovalPending(message=message, approval_id=approval_id, expires_at=expires_at, expires_in=expires_in)


def _normalize_host(value: str) -> str:
    """host[:port] from what a caller may write: a bare host, host:port, or a URL."""
    text = value.strip()
    if "://" in text:
        parts = urlsplit(text)
        host = (parts.hostname or "").lower()
        try:
            port = parts.port
        except ValueError:
            raise InvalidInputError(description="expect_host is not a valid host or URL.") from None
        if ":" in host:
            host = f"[{host}]"
        default = {"http": 80, "https": 443}.get(parts.scheme.lower())
        return host + (f":{port}" if port is not None and port != default else "")
    text = text.split("/", 1)[0]
    return text.lower()


def _resource_problem(requested: Optional[str], expected: Optional[str]) -> Optional[str]:
    """Why the request's resource (RFC 8707) is not the one expected, in plain words, or None
    when it is: the same, or none on either side."""
    if requested == expected:
        return None
    if expected is None:
        return (
            f"This request asks for tokens for the server {quote_untrusted(requested or '', 200)}, which you did not expect "
            "(pass it as expect_resource if you mean it)"
        )
    if requested is None:
        return f"This request names no server for its tokens, but you expected tokens for {quote_untrusted(expected, 200)}"
    return f"This request asks for tokens for the server {quote_untrusted(requested, 200)}, not for {quote_untrusted(expected, 200)} which you expected"


def _env(name: str) -> Optional[str]:
    value = os.environ.get(name)
    return value if value else None


class AgentAuth:
    """An agent's client for one agentauth server (its issuer).

    Every argument defaults to an environment variable: ``issuer`` to ``AGENTAUTH_ISSUER``,
    ``agent_id`` to ``AGENTAUTH_AGENT_ID``, ``agent_secret`` to ``AGENTAUTH_AGENT_SECRET``,
    ``model`` to ``AGENTAUTH_MODEL``. The issuer is needed at once; the credentials and model
    only by :meth:`sign_in` (so :meth:`inspect` and :meth:`wait_for_completion` work without
    them). Plain ``http`` is accepted only for this machine (``localhost``, ``127.0.0.1``,
    ``::1``) unless ``allow_insecure_http=True``: the secret would otherwise cross the network
    in clear.

    Args:
        issuer: The server's base URL (its ``BASE_URL``), e.g. ``https://auth.example.com``.
        agent_id: The agent's id (``agt_…``).
        agent_secret: The agent's secret (``aas_…``). Never shown by ``repr``, errors or logs.
        private_key: Instead of a secret, for a key-bound agent: its private key as a JWK
            (a dict or JSON text); each sign-in sends a fresh signed assertion, never the key.
            Needs ``pip install 'agentauth[keys]'`` (:mod:`agentauth.keys`).
        key_file: The same, read from a file only its user can read (as
            :func:`agentauth.keys.generate_key` writes it); defaults to ``AGENTAUTH_AGENT_KEY_FILE``.
        model: The AI model the agent runs on (goes into the token's ``model`` claim).
        timeout: Seconds one call (:meth:`inspect`, :meth:`sign_in`) may take in all,
            Retry-After waits included.
        allow_insecure_http: Accept an ``http://`` issuer on another host.

    Raises:
        ConfigurationError: no issuer, or an unusable one, or a non-positive timeout.

    Example::

        from agentauth import AgentAuth

        auth = AgentAuth()   # AGENTAUTH_ISSUER, AGENTAUTH_AGENT_ID, … from the environment
        result = auth.sign_in(page_text, expect_host="notes.acme.example")
        auth.wait_for_completion(result.request_id)
    """

    def __init__(
        self,
        issuer: Optional[str] = None,
        agent_id: Optional[str] = None,
        agent_secret: Optional[str] = None,
        model: Optional[str] = None,
        timeout: float = 30.0,
        *,
        allow_insecure_http: bool = False,
        private_key: Optional[Union[str, Mapping[str, Any]]] = None,
        key_file: Optional[str] = None,
    ) -> None:
        # A secret or a key (docs/design.md §16): what is passed wins over the environment; two
        # at the same level are refused, so which one signs in is never left to chance.
        given = [name for name, value in (("agent_secret", agent_secret), ("private_key", private_key), ("key_file", key_file)) if value]
        if len(given) > 1:
            raise ConfigurationError(description=f"Pass one of {', '.join(given)}, not several.")
        if not given and _env("AGENTAUTH_AGENT_SECRET") and _env("AGENTAUTH_AGENT_KEY_FILE"):
            raise ConfigurationError(description="Both AGENTAUTH_AGENT_SECRET and AGENTAUTH_AGENT_KEY_FILE are set: keep one.")
        self._key: Optional[AgentKey] = None
        if private_key:
            self._key = AgentKey.from_jwk(private_key)
        elif key_file or (not given and _env("AGENTAUTH_AGENT_KEY_FILE")):
            self._key = AgentKey.from_file(key_file or _env("AGENTAUTH_AGENT_KEY_FILE"))  # type: ignore[arg-type]
        private_key = None
        # The secret first, wrapped at once, so that no frame of a ConfigurationError below holds it.
        secret = agent_secret if agent_secret else (None if self._key else _env("AGENTAUTH_AGENT_SECRET"))
        self._secret: Optional[_Secret] = _Secret(secret) if secret else None
        agent_secret = secret = None
        raw_issuer = issuer if issuer else _env("AGENTAUTH_ISSUER")
        if not raw_issuer:
            raise ConfigurationError(description="No issuer: pass issuer= or set AGENTAUTH_ISSUER.")
        self.issuer: str = normalize_issuer(raw_issuer)
        if self.issuer.startswith("http://") and not allow_insecure_http and not is_loopback_issuer(self.issuer):
            raise ConfigurationError(
                description="The issuer uses plain http on another host; the agent secret would travel in clear. "
                "Use https, or pass allow_insecure_http=True on a network you trust."
            )
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ConfigurationError(description="timeout must be a positive number of seconds.")
        self.timeout: float = float(timeout)
        self.agent_id: Optional[str] = agent_id if agent_id else _env("AGENTAUTH_AGENT_ID")
        self.model: Optional[str] = model if model else _env("AGENTAUTH_MODEL")
        self._transport = Transport(self.issuer, self._redact)

    def __repr__(self) -> str:
        # getattr: also called on a half-built instance (a traceback's frame of __init__).
        secret = "<hidden>" if getattr(self, "_secret", None) is not None else None
        return (
            f"AgentAuth(issuer={getattr(self, 'issuer', None)!r}, agent_id={getattr(self, 'agent_id', None)!r}, "
            f"agent_secret={secret}, model={getattr(self, 'model', None)!r})"
        )

    __str__ = __repr__

    def __reduce__(self):  # type: ignore[no-untyped-def]
        raise TypeError("AgentAuth holds the agent secret and is not picklable")

    def _redact(self, text: str) -> str:
        if self._secret is not None and self._secret.reveal() and self._secret.reveal() in text:
            return text.replace(self._secret.reveal(), "<hidden>")
        return text

    # ----------------------------------------------------------------------------------------
    # Reading what the agent was handed

    @staticmethod
    def request_id_from(text: str) -> str:
        """The request id in ``text`` (the id itself, or the page's HTML). See
        :func:`agentauth.request_id_from`.

        Example::

            AgentAuth.request_id_from(page_html)   # 'req_…'
        """
        return request_id_from(text)

    @staticmethod
    def issuer_from_page_url(url: str) -> str:
        """The issuer of an authorization page's URL (everything before ``/authorize``). See
        :func:`agentauth.issuer_from_page_url`.

        Example::

            AgentAuth.issuer_from_page_url("https://auth.example.com/authorize?…")
        """
        return issuer_from_page_url(url)

    def _check_page_url(self, page_url: str) -> None:
        page_issuer = issuer_from_page_url(page_url)
        if page_issuer != self.issuer:
            raise IssuerMismatchError(
                description=f"The page comes from {page_issuer}, not from the issuer this agent trusts ({self.issuer})."
            )

    def _check_page_endpoints(self, page: PageInfo) -> None:
        for name, suffix in (("agent-authenticate-endpoint", "/api/agent/authenticate"), ("agent-status-endpoint", "/api/check-status")):
            url = page.meta.get(name)
            if url is None:
                continue
            where = endpoint_issuer(url, suffix)
            if where != self.issuer:
                raise IssuerMismatchError(
                    description=f"The page's {name} is not under the issuer this agent trusts ({self.issuer})."
                )

    @staticmethod
    def _id_from(text: object) -> str:
        if not isinstance(text, str):
            raise InvalidInputError(description="Expected a request id (req_…) or the page's HTML as text.")
        return request_id_from(text)

    def _proof(self, agent_id: str, request_id: str) -> Dict[str, str]:
        """What proves the agent: its secret, or a fresh assertion signed with its key (made
        anew for each attempt, since the server accepts an assertion once)."""
        if self._key is not None:
            return {"agent_assertion": self._key.assertion(agent_id, self.issuer, request_id)}
        return {"agent_secret": self._secret.reveal()}  # type: ignore[union-attr]

    def _credentials(self) -> Tuple[str, Union[_Secret, AgentKey], str]:
        missing = [
            env
            for env, value in (
                ("AGENTAUTH_AGENT_ID", self.agent_id),
                ("AGENTAUTH_AGENT_SECRET", self._secret or self._key),
                ("AGENTAUTH_MODEL", self.model),
            )
            if not value
        ]
        if missing:
            raise ConfigurationError(
                description="Signing in needs the agent's id, secret and model: missing "
                + ", ".join(missing)
                + " (or the matching AgentAuth argument)."
            )
        return self.agent_id, (self._key or self._secret), self.model  # type: ignore[return-value]

    # ----------------------------------------------------------------------------------------
    # The lookup

    def inspect(self, request_id: str) -> SignInRequest:
        """Looks a request up without credentials (``GET /api/agent/request``): which website
        it signs in to, where the browser goes, its status. Check this before signing in.
        ``request_id`` may also be the page's HTML (see :func:`request_id_from`).

        Raises:
            InvalidInputError: no request id.
            RequestNotFoundError: unknown (or purged) request.
            TooManyRequestsError, TemporarilyUnavailableError: after the retries.
            NetworkError, ProtocolError: the server could not be reached or understood.

        Example::

            request = auth.inspect("req_…")
            print(request.client_name, request.redirect_host, request.status)
        """
        return self._inspect(self._id_from(request_id), time.monotonic() + self.timeout)

    def _inspect(self, request_id: str, deadline: float) -> SignInRequest:
        data = self._transport.call("GET", "/api/agent/request", query={"request_id": request_id}, deadline=deadline)
        request = SignInRequest.from_json(data)
        if request.request_id != request_id:
            raise ProtocolError(description="The lookup answered for another request id.")
        return request

    def check_status(self, request_id: str) -> RequestStatus:
        """The request's status now (``GET /api/check-status``), without credentials. Unlike
        :meth:`wait_for_completion` it reports an ``error`` status instead of raising it.
        ``request_id`` may also be the page's HTML.

        Raises:
            InvalidInputError: no request id.
            RequestNotFoundError: unknown (or purged) request.
            TooManyRequestsError, TemporarilyUnavailableError: after the retries.
            NetworkError, ProtocolError: the server could not be reached or understood.

        Example::

            auth.check_status("req_…").status   # 'pending', 'authenticated', 'completed' or 'error'
        """
        view = self._status(self._id_from(request_id), time.monotonic() + self.timeout)
        error, description = view.get("error"), view.get("error_description")
        return RequestStatus(
            status=view["status"],
            error=error if isinstance(error, str) else None,
            error_description=description if isinstance(description, str) else None,
            approval_pending=view.get("approval_pending") is True,
        )

    def _status(self, request_id: str, deadline: float, max_retries: int = 3) -> Dict[str, Any]:
        view = self._transport.call("GET", "/api/check-status", query={"request_id": request_id}, deadline=deadline, max_retries=max_retries)
        if view.get("status") not in _STATUSES:
            raise ProtocolError(status=200, description="A status answer without a known status.")
        return view

    # ----------------------------------------------------------------------------------------
    # Actions the agent's owner is asked about

    def _actions(self, deadline: float) -> Tuple[List[AgentAction], float]:
        if not self.agent_id or not (self._secret or self._key):
            raise ConfigurationError(
                description="Listing actions needs the agent's id and secret (or key): missing AGENTAUTH_AGENT_ID or AGENTAUTH_AGENT_SECRET (or the matching AgentAuth argument)."
            )
        agent_id = self.agent_id

        def authorization() -> str:
            # A key-bound agent signs a fresh assertion for each attempt (each is used once).
            if self._key is not None:
                return "Bearer " + self._key.assertion(agent_id, self.issuer, ACTIONS_ASSERTION_REQUEST_ID)
            pair = f"{agent_id}:{self._secret.reveal()}".encode("utf-8")  # type: ignore[union-attr]
            return "Basic " + base64.b64encode(pair).decode("ascii")

        data = self._transport.call("GET", ACTIONS_PATH, deadline=deadline, authorization=authorization)
        actions = data.get("actions")
        if not isinstance(actions, list):
            raise ProtocolError(status=200, description=f"{ACTIONS_PATH} answered something that is not a list of actions.")
        interval = data.get("interval")
        every = float(interval) if isinstance(interval, (int, float)) and interval >= 1 else ACTION_POLL_INTERVAL
        return [AgentAction.from_json(action) for action in actions], every

    def list_actions(self) -> List[AgentAction]:
        """The actions websites asked the agent's owner about (``GET /api/agent/actions``): those
        waiting, and those decided or expired in the last ten minutes, newest first. The server
        must have ACTION_APPROVALS on.

        Raises:
            ConfigurationError: no agent id or secret (or key).
            InvalidCredentialsError: the server refused the credentials.
            RequestNotFoundError: the server does not have the endpoint (ACTION_APPROVALS off).

        Example::

            for action in auth.list_actions():
                print(action.message)   # Waiting for your owner to approve: Pay 20 EUR to Acme (Acme Notes)
        """
        return self._actions(time.monotonic() + self.timeout)[0]

    def wait_for_action(
        self,
        action_id: str,
        timeout: Optional[float] = None,
        on_waiting: Optional[Callable[[AgentAction], None]] = None,
    ) -> AgentAction:
        """Waits until the owner (or their policy) decides the action, looking again every
        ``interval`` seconds as the server says, and returns it ``approved``, ``denied`` or
        ``expired`` (a decision is not an error: read ``status``). ``on_waiting`` is told once
        while it waits. ``timeout`` defaults to the action's expiry plus 35 s.

        Raises:
            InvalidInputError: no such action is listed.
            WaitTimeoutError: not decided within ``timeout``.

        Example::

            done = auth.wait_for_action("act_…", on_waiting=lambda a: print(a.message))
            print(done.message)   # Your owner approved: Pay 20 EUR to Acme (Acme Notes)
        """
        if not isinstance(action_id, str) or not action_id:
            raise InvalidInputError(description="Pass the action id (act_…).")
        actions, every = self._actions(time.monotonic() + self.timeout)
        action = next((each for each in actions if each.id == action_id), None)
        if action is None:
            raise InvalidInputError(
                description=f"No action {action_id} waits for this agent's owner or was decided in the last ten minutes."
            )
        if action.status != "pending":
            return action
        if on_waiting is not None:
            on_waiting(action)
        limit = time.monotonic() + (timeout if timeout is not None else action.expires_in + APPROVAL_GRACE)
        while True:
            if time.monotonic() + every > limit:
                raise WaitTimeoutError(description=f"The agent's owner has not decided in time; action {action_id} still waits.")
            time.sleep(every)
            actions, every = self._actions(min(limit, time.monotonic() + self.timeout))
            action = next((each for each in actions if each.id == action_id), None) or replace(action, status="expired")
            if action.status != "pending":
                return action

    # ----------------------------------------------------------------------------------------
    # Signing in

    def sign_in(
        self,
        request_id: Optional[str] = None,
        html: Optional[str] = None,
        page_url: Optional[str] = None,
        expect_host: Optional[str] = None,
        expect_client_id: Optional[str] = None,
        *,
        expect_resource: Optional[str] = None,
        expect_any: bool = False,
        on_approval_pending: Optional[Callable[[ApprovalPending], None]] = None,
        approval_timeout: Optional[float] = None,
        push: bool = True,
    ) -> SignInResult:
        """Authenticates the agent for one authorization request, after checking that it is
        the sign-in the agent meant.

        Steps, in order:

        1. Local checks, before any request: credentials and model are set; ``request_id``
           (an id, or the page's HTML) or ``html`` gives an id; if ``page_url`` is given, the
           page comes from this issuer, and the page's endpoint meta tags point to it too
           (:class:`IssuerMismatchError`); at least one expectation is given.
        2. The lookup (:meth:`inspect`). A request in ``error`` raises its typed error
           (:class:`RequestExpiredError`, :class:`AccessDeniedError`,
           :class:`RequestContestedError`).
        3. ``redirect_host`` must equal ``expect_host`` (without regard to case),
           ``client_id`` must equal ``expect_client_id``, and the request's ``resource`` (the
           server its tokens would be for, RFC 8707) must equal ``expect_resource``: a request
           that names a resource is refused without ``expect_resource`` (unless
           ``expect_any=True``), and so is one that names none or another when it is given.
           Otherwise :class:`RequestMismatchError` is raised and nothing is sent: the request
           stays as it was.
        4. ``POST /api/agent/authenticate`` with ``expected_redirect_host`` and
           ``expected_client_id`` (the expectations given, else what the lookup showed) and,
           when the request names one, ``expected_resource``, so that the server signs in to
           exactly what was checked, in the same step. If a 503
           was retried and the retry answers ``request_already_used`` while the request is
           ``authenticated``, the first attempt went through and ``sign_in`` succeeds.

        A request another agent has already authenticated is still authenticated (step 4):
        the server then stops it as contested (:class:`RequestContestedError`), so the browser
        is not signed in as whichever agent came first with a leaked id.

        **Expectations are required.** A request id can be handed to the agent by anyone,
        including a phishing page that started a sign-in to its own site (RFC 10027,
        cross-device consent phishing). So ``sign_in`` refuses (``InvalidInputError``, code
        ``expectation_required``) unless ``expect_host`` or ``expect_client_id`` says which
        site the agent means, or ``expect_any=True`` states that any site is fine (for
        example when the agent's owner confirmed the site shown by :meth:`inspect`).

        **When the agent's owner is in control.** A refusal by the owner's policy is
        :class:`AccessDeniedError` (HTTP 403) whose ``description`` says why in plain words
        ("Your owner has not allowed Acme Notes (notes.acme.example) for this agent."). When
        the owner must approve this website first (202 ``approval_pending``),
        ``on_approval_pending`` is called with an :class:`ApprovalPending` and ``sign_in``
        waits for the decision, by push and else polling, without sending the secret again:
        approved, it returns with ``approved_by_owner=True``; denied,
        :class:`AccessDeniedError` ("The agent's owner denied this sign-in."); not decided
        before the request expires, :class:`RequestExpiredError`.

        Args:
            request_id: The request id, or the page's HTML (see :func:`request_id_from`).
            html: The authorization page's HTML, as an alternative to ``request_id``.
            page_url: The URL of the page the agent read; only its issuer is used (it is
                never fetched).
            expect_host: The host (and port) the browser should be sent to, as shown on the
                page ("notes.acme.example"); a URL is reduced to its host.
            expect_client_id: The website's client id (``cli_…``).
            expect_resource: The server the tokens are to be for, exactly as the request's
                ``resource``. It does not replace ``expect_host`` or ``expect_client_id``: it
                names the tokens' audience, not the website.
            expect_any: Sign in without an expectation (any website, any resource).
            on_approval_pending: Called once when the owner's approval is awaited; print
                its ``message`` so the person knows what they wait for.
            approval_timeout: Seconds to wait for the owner's decision; by default until the
                request expires. Past it: :class:`WaitTimeoutError`, and the request still
                waits for the owner (:meth:`wait_for_completion` can keep waiting).
            push: Wait for the owner's decision over the push stream first (else poll).

        Returns:
            A :class:`SignInResult`.

        Raises:
            ConfigurationError, InvalidInputError, IssuerMismatchError, RequestMismatchError:
                before authenticating (nothing changed).
            InvalidCredentialsError, AgentMismatchError, RequestAlreadyUsedError,
            RequestContestedError, RequestExpiredError, InvalidClientError,
            RequestNotFoundError, InvalidRequestError, TooManyRequestsError,
            TemporarilyUnavailableError, ServerError, NetworkError, ProtocolError: as the
                server answered.
            AccessDeniedError: the owner's policy refused (403), or the owner denied.
            WaitTimeoutError: the owner did not decide within ``approval_timeout``.

        Example::

            result = auth.sign_in(
                html=page_html,
                page_url="https://auth.example.com/authorize?…",
                expect_host="notes.acme.example",
            )
            print(result.message)
        """
        if approval_timeout is not None and (
            isinstance(approval_timeout, bool) or not isinstance(approval_timeout, (int, float)) or approval_timeout < 0
        ):
            raise InvalidInputError(description="approval_timeout must be a number of seconds, at least 0.")
        agent_id, secret, model = self._credentials()
        request_id, page = self._resolve(request_id, html)
        if page_url is not None:
            self._check_page_url(page_url)
        if page is not None:
            self._check_page_endpoints(page)
        host = _normalize_host(expect_host) if expect_host else None
        client_id = expect_client_id.strip() if expect_client_id else None
        if expect_resource is not None and (not isinstance(expect_resource, str) or not _RESOURCE.match(expect_resource)):
            raise InvalidInputError(description="expect_resource must be the resource URI, visible ASCII without spaces.")
        if host is None and client_id is None and not expect_any:
            raise InvalidInputError(
                "expectation_required",
                None,
                "Say which site you mean: expect_host= (the host on the page) or expect_client_id=, "
                "or expect_any=True after checking inspect(). Anyone can hand an agent a request id.",
            )

        deadline = time.monotonic() + self.timeout
        request = self._inspect(request_id, deadline)
        if request.status == "error":
            raise error_for(request.error, None, request.error_description or "The request has ended.", request=request)
        # Website-chosen text (name, client_id) goes into messages quoted and labelled: an
        # agent's model reads them, and a name must not pass for an instruction (design §12).
        website = f"website (name it gives itself, unverified): {quote_untrusted(request.client_name)}"
        if host is not None and request.redirect_host.lower() != host:
            log.info("agentauth: refused %s: it sends the browser to %s, not %s", request_id, request.redirect_host, host)
            raise RequestMismatchError(
                description=f"This request sends the browser to {request.redirect_host}, not to {host}. Its {website}.",
                request=request,
            )
        if client_id is not None and request.client_id != client_id:
            log.info("agentauth: refused %s: it is for another client than %s", request_id, client_id)
            raise RequestMismatchError(
                description=f"This request is for client_id {quote_untrusted(request.client_id, 200)}, not {quote_untrusted(client_id, 200)}. Its {website}.",
                request=request,
            )
        problem = None if expect_any and expect_resource is None else _resource_problem(request.resource, expect_resource)
        if problem is not None:
            log.info("agentauth: refused %s: its resource is not the one expected", request_id)
            raise RequestMismatchError(description=f"{problem}. Its {website}.", request=request)

        # What was looked up is what gets signed in to: the server checks it in the same step.
        body: Dict[str, Any] = {
            "request_id": request_id,
            "agent_id": agent_id,
            "model": model,
            "expected_client_id": client_id if client_id is not None else request.client_id,
            "expected_redirect_host": host if host is not None else request.redirect_host,
        }
        if request.resource is not None:
            # The field takes a URI, not null: sent when the request names one, checked again.
            body["expected_resource"] = request.resource
        retried: List[int] = []
        try:
            data = self._transport.call(
                "POST",
                "/api/agent/authenticate",
                json_body=body,
                fresh=lambda: self._proof(agent_id, request_id),
                deadline=deadline,
                request=request,
                retried=retried,
            )
        except RequestAlreadyUsedError:
            # A 503 may hide an authentication that went through; the retry then answers
            # "already used". If the request is authenticated, only this agent can have done
            # it: another agent would have been answered request_contested.
            if 503 not in retried or self._status(request_id, deadline).get("status") != "authenticated":
                raise
            data = {"status": "authenticated", "message": "Agent authenticated (confirmed after a retry)."}
        finally:
            body.clear()  # no secret in the frames a traceback keeps
        if data.get("status") == "approval_pending":
            pending = _approval_pending_of(data, request)
            log.info("agentauth: waiting for the owner's approval (%s, %d s left)", pending.approval_id, pending.expires_in)
            if on_approval_pending is not None:
                on_approval_pending(pending)
            self._await_approval(request_id, pending, approval_timeout, push)
            return SignInResult(
                request_id=request_id,
                message=f"The agent's owner approved this sign-in; the browser will now continue to {request.redirect_host}.",
                request=request,
                approved_by_owner=True,
            )
        if data.get("status") != "authenticated":
            raise ProtocolError(status=200, description="The authentication answer has no status 'authenticated'.", request=request)
        message = data.get("message")
        return SignInResult(request_id=request_id, message=message if isinstance(message, str) else "", request=request)

    def _await_approval(self, request_id: str, pending: ApprovalPending, timeout: Optional[float], push: bool) -> None:
        """Waits for the owner's decision: returns once the request is authenticated (or already
        completed); raises the request's error otherwise (a denial is access_denied)."""
        if timeout is None:
            timeout = pending.expires_in + APPROVAL_GRACE
        started = time.monotonic()
        waiter = _Waiter(request_id, started, started + float(timeout), float(timeout), until=("authenticated", "completed"))
        waiter.owner = True
        try:
            if push and self._wait_push(waiter) is not None:
                return
            self._wait_poll(waiter)
        except RequestExpiredError as error:
            raise RequestExpiredError(
                error.code, error.status, "The request expired before the agent's owner decided; start the sign-in again."
            ) from None

    def _authenticate(self, request_id: str, expected_client_id: Optional[str] = None, expected_redirect_host: Optional[str] = None) -> Dict[str, Any]:
        """Only ``POST /api/agent/authenticate``, without the lookup (for tests of the server's
        answers). Agents use :meth:`sign_in`."""
        agent_id, secret, model = self._credentials()
        body: Dict[str, Any] = {"request_id": request_id, "agent_id": agent_id, "model": model, **self._proof(agent_id, request_id)}
        if expected_client_id is not None:
            body["expected_client_id"] = expected_client_id
        if expected_redirect_host is not None:
            body["expected_redirect_host"] = expected_redirect_host
        try:
            return self._transport.call("POST", "/api/agent/authenticate", json_body=body, deadline=time.monotonic() + self.timeout)
        finally:
            body.clear()

    def _resolve(self, request_id: Optional[str], html: Optional[str]) -> Tuple[str, Optional[PageInfo]]:
        page: Optional[PageInfo] = None
        from_text: Optional[str] = None
        if request_id is not None:
            if not isinstance(request_id, str):
                raise InvalidInputError(description="request_id must be text.")
            if "<" in request_id:
                page = read_page(request_id)
                from_text = page.request_id
            else:
                from_text = request_id_from(request_id)
        if html is not None:
            page = read_page(html)
            if from_text is not None and from_text != page.request_id:
                raise InvalidInputError(description="request_id and the page's request id differ.")
            from_text = page.request_id
        if from_text is None:
            raise InvalidInputError(
                description="Pass the request id or the page's HTML. A page URL alone is not enough: the SDK never "
                "opens /authorize, which would start a new sign-in."
            )
        return from_text, page

    # ----------------------------------------------------------------------------------------
    # Waiting for the browser

    def wait_for_completion(self, request_id: str, timeout: float = 60.0, push: bool = True) -> str:
        """Waits until the browser has received the code (status ``completed``) and returns
        ``"completed"``; raises the request's typed error if it ends otherwise.

        With ``push`` it listens to ``GET /api/check-status/events`` (server-sent events); if
        the server does not offer it or the stream breaks, it polls ``GET /api/check-status``:
        every second for the first minute, then backing off (2, 4, 8, 16, then every 30 s), as
        the contract recommends. Transient failures while waiting (network, 429, 503, 5xx) are
        retried until the time is up.

        Args:
            request_id: The request id (``req_…``), or the page's HTML.
            timeout: Seconds to wait in all. The contract recommends 30 to 60 for an agent
                that waits for a person's browser.
            push: Try the push stream first.

        Returns:
            ``"completed"``.

        Raises:
            RequestExpiredError, AccessDeniedError, RequestContestedError: the request ended
                in ``error``.
            RequestNotFoundError: unknown request.
            WaitTimeoutError: still not completed after ``timeout`` (a :class:`TimeoutError`).

        Example::

            result = auth.sign_in(request_id, expect_host="notes.acme.example")
            try:
                auth.wait_for_completion(result.request_id, timeout=60)
                print("The browser is signed in.")
            except TimeoutError:
                print("Still waiting for the browser.")
        """
        request_id = self._id_from(request_id)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise InvalidInputError(description="timeout must be a number of seconds, at least 0.")
        started = time.monotonic()
        waiter = _Waiter(request_id, started, started + float(timeout), float(timeout))
        if push:
            outcome = self._wait_push(waiter)
            if outcome is not None:
                return outcome
        return self._wait_poll(waiter)

    def _settle(self, waiter: "_Waiter", view: Any) -> Optional[str]:
        """'completed', None while still under way, or raises the request's error."""
        if not isinstance(view, dict) or view.get("status") not in _STATUSES:
            raise ProtocolError(description="A status answer without a known status.")
        status = view["status"]
        waiter.last_status = status
        waiter.approval_pending = view.get("approval_pending") is True
        if status in waiter.until:
            return status
        if status == "error":
            code = view.get("error") if isinstance(view.get("error"), str) else None
            description = view.get("error_description") if isinstance(view.get("error_description"), str) else "The request has ended."
            raise error_for(code or "server_error", None, description)
        return None

    def _wait_push(self, waiter: "_Waiter") -> Optional[str]:
        """Listens to the push stream: 'completed', raises, or None to fall back to polling."""
        query = {"request_id": waiter.request_id}
        while True:
            remaining = waiter.deadline - time.monotonic()
            if remaining <= 0:
                raise waiter.timeout_error()
            try:
                response = self._transport.open(
                    "GET", "/api/check-status/events", query=query, accept="text/event-stream", timeout=min(remaining, STREAM_IDLE)
                )
            except NetworkError as error:
                log.debug("agentauth: push unavailable (%s); polling", error.description)
                return None
            heard = False
            try:
                content_type = response.headers.get("Content-Type", "") or ""
                if response.status != 200 or not content_type.lower().startswith("text/event-stream"):
                    log.debug("agentauth: push unavailable (HTTP %s, %s); polling", response.status, content_type or "no content type")
                    return None
                log.debug("agentauth: push stream open")
                for event, data in _sse_events(response, waiter.deadline):
                    if event not in ("status", "message"):
                        continue
                    try:
                        view = json.loads(data)
                    except ValueError:
                        raise ProtocolError(description="A push event's data is not JSON.") from None
                    heard = True
                    log.debug("agentauth: push status %s", view.get("status") if isinstance(view, dict) else "?")
                    outcome = self._settle(waiter, view)
                    if outcome is not None:
                        return outcome
            except _Deadline:
                raise waiter.timeout_error() from None
            except (OSError, HTTPException, ValueError) as error:
                if time.monotonic() >= waiter.deadline:
                    raise waiter.timeout_error() from None
                log.debug("agentauth: push stream failed (%s); polling", type(error).__name__)
                return None
            finally:
                response.close()
            if not heard:
                log.debug("agentauth: push stream ended without a status; polling")
                return None
            log.debug("agentauth: push stream ended; reconnecting")
            time.sleep(max(0.0, min(1.0, waiter.deadline - time.monotonic())))

    def _wait_poll(self, waiter: "_Waiter") -> str:
        log.debug("agentauth: polling")
        interval = POLL_INTERVAL
        while True:
            now = time.monotonic()
            call_deadline = now + max(1.0, min(POLL_REQUEST_TIMEOUT, waiter.deadline - now))
            pause = 0.0
            try:
                view = self._status(waiter.request_id, call_deadline, max_retries=0)
                log.debug("agentauth: poll status %s", view.get("status"))
                outcome = self._settle(waiter, view)
                if outcome is not None:
                    return outcome
            except (NetworkError, TooManyRequestsError, TemporarilyUnavailableError, ServerError) as error:
                # Transient: keep trying until the time is up.
                waiter.last_problem = error
                pause = error.retry_after or 0.0
                log.debug("agentauth: poll failed (%s); still waiting", error.code)
            now = time.monotonic()
            if now >= waiter.deadline:
                raise waiter.timeout_error()
            if now - waiter.started >= POLL_STEADY_FOR:
                interval = min(POLL_MAX_INTERVAL, interval * 2)
            time.sleep(min(max(interval, pause), waiter.deadline - now))


class _Deadline(Exception):
    """The wait's time ran out while reading the push stream."""


class _Waiter:
    __slots__ = ("request_id", "started", "deadline", "timeout", "until", "owner", "last_status", "approval_pending", "last_problem")

    def __init__(
        self, request_id: str, started: float, deadline: float, timeout: float, until: Tuple[str, ...] = ("completed",)
    ) -> None:
        self.request_id = request_id
        self.started = started
        self.deadline = deadline
        self.timeout = timeout
        #: The statuses that end the wait successfully.
        self.until = until
        #: Waiting for the owner's decision (sign_in), not for the browser.
        self.owner = False
        self.last_status: Optional[str] = None
        self.approval_pending = False
        self.last_problem: Optional[AgentAuthError] = None

    def timeout_error(self) -> WaitTimeoutError:
        if self.owner:
            return WaitTimeoutError(
                description=f"The agent's owner has not decided within {self.timeout:g} s; request {self.request_id} "
                "still waits for their approval (wait_for_completion keeps waiting)."
            )
        text = f"The request was not completed within {self.timeout:g} s"
        if self.last_status is not None:
            text += f" (last status: {self.last_status}"
            text += ", waiting for the agent's owner to approve)" if self.approval_pending else ")"
        if self.last_problem is not None:
            text += f" (last problem: {self.last_problem.code})"
        return WaitTimeoutError(description=text + ".")


_LINE_END = re.compile(b"[\r\n]")


class _StreamNotOurs(ValueError):
    """A push stream with a line or an event past the caps: not agentauth's. Reading stops,
    and the wait falls back to polling."""


def _sse_events(response: HTTPResponse, deadline: float) -> Iterator[Tuple[str, str]]:
    """(event, data) of each server-sent event (the HTML Living Standard's parsing rules,
    without ``id`` and ``retry``; lines end in CRLF, LF or CR). Raises _Deadline once
    ``deadline`` passes, socket.timeout when the stream stays silent longer than STREAM_IDLE,
    and _StreamNotOurs for a line or an event's data over 64 KiB.

    It reads one system call at a time and checks the deadline between reads, so a server
    that trickles bytes cannot hold it past the deadline, and scans each piece once, from
    where the last one stopped.
    """
    read1 = getattr(response, "read1", None)
    partial = bytearray()  # the start of a line whose end has not arrived yet
    first = True
    after_cr = False
    event = ""
    data: List[str] = []
    data_size = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Deadline()
        set_read_timeout(response, max(0.05, min(remaining, STREAM_IDLE)))
        try:
            chunk = read1(16384) if read1 is not None else response.read(1)
        except socket.timeout:
            if time.monotonic() >= deadline - 0.01:
                raise _Deadline() from None
            raise
        if not chunk:
            return
        start = 0
        if first:
            first = False
            if chunk.startswith(b"\xef\xbb\xbf"):
                start = 3
        # A CR ends a line at once; an LF right after it (maybe in this piece) is its pair.
        if after_cr:
            after_cr = False
            if chunk[start:start + 1] == b"\n":
                start += 1
        while True:
            found = _LINE_END.search(chunk, start)
            if found is None:
                if len(partial) + len(chunk) - start > MAX_STREAM_LINE:
                    raise _StreamNotOurs(f"a push stream line over {MAX_STREAM_LINE} bytes")
                partial += chunk[start:]
                break
            end = found.start()
            raw = bytes(partial) + chunk[start:end]
            partial = bytearray()
            if len(raw) > MAX_STREAM_LINE:
                raise _StreamNotOurs(f"a push stream line over {MAX_STREAM_LINE} bytes")
            if chunk[end:end + 1] == b"\r":
                if end + 1 < len(chunk):
                    start = end + 2 if chunk[end + 1:end + 2] == b"\n" else end + 1
                else:
                    start, after_cr = end + 1, True
            else:
                start = end + 1
            line = raw.decode("utf-8", "replace")
            if line == "":
                if data:
                    yield (event or "message"), "\n".join(data)
                event, data, data_size = "", [], 0
                continue
            if line.startswith(":"):
                continue  # a comment: the keep-alive
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "event":
                event = value
            elif field == "data":
                data_size += len(raw) + 1
                if data_size > MAX_EVENT_DATA:
                    raise _StreamNotOurs(f"a push event over {MAX_EVENT_DATA} bytes")
                data.append(value)
