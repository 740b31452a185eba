"""Typed errors of the agentauth SDK.

Every error the SDK raises is an :class:`AgentAuthError`. Errors that come from the server
keep the server's ``error`` code, the HTTP status and the ``error_description``; errors the
SDK decides locally (a refused site, a page from another server, missing configuration) have
``status`` ``None``.

Example::

    from agentauth import AgentAuth, AgentAuthError, RequestMismatchError

    try:
        AgentAuth().sign_in("req_…", expect_host="notes.acme.example")
    except RequestMismatchError as error:
        print("Not the site I meant:", error.description)
    except AgentAuthError as error:
        print(error.code, error.status, error.description)

No error ever carries the agent secret: the SDK never puts it in a message, and it removes it
from any text the server sends back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Optional, Type

from ._server_codes import SERVER_ERROR_CODES

if TYPE_CHECKING:  # pragma: no cover
    from .client import SignInRequest

__all__ = [
    "AgentAuthError",
    "ConfigurationError",
    "InvalidInputError",
    "IssuerMismatchError",
    "NetworkError",
    "ProtocolError",
    "WaitTimeoutError",
    "InvalidRequestError",
    "RequestNotFoundError",
    "InvalidCredentialsError",
    "InvalidClientError",
    "AgentMismatchError",
    "RequestAlreadyUsedError",
    "RequestContestedError",
    "RequestExpiredError",
    "RequestMismatchError",
    "AccessDeniedError",
    "TooManyRequestsError",
    "TemporarilyUnavailableError",
    "ServerError",
]


class AgentAuthError(Exception):
    """Base class of every error the SDK raises.

    Attributes:
        code: The machine-readable code: the server's ``error`` (``"invalid_credentials"``,
            ``"request_expired"``, …) or, for errors found locally, the SDK's own
            (``"issuer_mismatch"``, ``"configuration_error"``, …).
        status: The HTTP status of the error answer, or ``None`` when the error was decided
            locally or read from a request's status (lookup, check-status, push).
        description: Human-readable text; show it, do not parse it.
        retry_after: Seconds the server asked to wait (``Retry-After``), else ``None``.
        request: The :class:`~agentauth.SignInRequest` the error concerns, when the SDK had
            looked it up (for example the site a :class:`RequestMismatchError` refused).

    Example::

        try:
            auth.sign_in(request_id, expect_host="notes.acme.example")
        except AgentAuthError as error:
            log.warning("sign-in failed: %s (HTTP %s)", error.code, error.status)
    """

    #: The code this class stands for (the server's ``error`` value, or the SDK's own).
    default_code = "agentauth_error"

    def __init__(
        self,
        code: Optional[str] = None,
        status: Optional[int] = None,
        description: str = "",
        retry_after: Optional[float] = None,
        *,
        request: Optional["SignInRequest"] = None,
    ) -> None:
        self.code = code or self.default_code
        self.status = status
        self.description = description
        self.retry_after = retry_after
        self.request = request
        super().__init__(self._message())

    def _message(self) -> str:
        text = f"{self.code}: {self.description}" if self.description else self.code
        if self.status is not None:
            text += f" (HTTP {self.status})"
        if self.retry_after is not None:
            text += f" (retry after {self.retry_after:g} s)"
        return text

    def __str__(self) -> str:
        return self._message()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, status={self.status!r}, "
            f"description={self.description!r}, retry_after={self.retry_after!r})"
        )

    def __reduce__(self):  # keep the attributes through pickling (multiprocessing, logging)
        return (_rebuild, (type(self), self.code, self.status, self.description, self.retry_after))


def _rebuild(cls, code, status, description, retry_after):  # type: ignore[no-untyped-def]
    return cls(code, status, description, retry_after)


# --------------------------------------------------------------------------------------------
# Decided by the SDK


class ConfigurationError(AgentAuthError):
    """The SDK is missing a setting or was given an unusable one.

    Raised before any network request: no issuer (``AGENTAUTH_ISSUER``), no agent credentials
    or model when signing in, an issuer that is not an absolute http(s) URL, or plain http to a
    host other than this machine.

    Example::

        try:
            AgentAuth(issuer=None)   # and AGENTAUTH_ISSUER unset
        except ConfigurationError as error:
            print(error.description)
    """

    default_code = "configuration_error"


class InvalidInputError(AgentAuthError, ValueError):
    """An argument is unusable: no request id in the text, a malformed id, a URL that is not an
    authorization page, or no expectation given to :meth:`~agentauth.AgentAuth.sign_in`
    (code ``"expectation_required"``). Also a :class:`ValueError`. Raised before any request.

    Example::

        try:
            request_id_from("hello")
        except InvalidInputError as error:
            print(error.description)
    """

    default_code = "invalid_input"


class IssuerMismatchError(AgentAuthError):
    """The page the agent read does not come from the issuer it trusts (its URL, or the
    endpoints in its meta tags, point elsewhere). Raised before any request: signing in from a
    page of another server is what a phishing page would ask for.

    Example::

        try:
            auth.sign_in(html=page, page_url="https://evil.example/authorize?…", expect_host="…")
        except IssuerMismatchError:
            print("That page is not from my sign-in server.")
    """

    default_code = "issuer_mismatch"


class NetworkError(AgentAuthError, ConnectionError):
    """The server could not be reached or did not answer in time (DNS, refused connection,
    TLS, socket timeout). Also a :class:`ConnectionError`.

    After a network error during :meth:`~agentauth.AgentAuth.sign_in` the SDK cannot know
    whether the server received the authentication; a retry that answers
    :class:`RequestAlreadyUsedError` then most likely means the first attempt went through
    (check with :meth:`~agentauth.AgentAuth.wait_for_completion`).

    Example::

        try:
            auth.inspect(request_id)
        except NetworkError as error:
            print("server unreachable:", error.description)
    """

    default_code = "network_error"


class ProtocolError(AgentAuthError):
    """The server answered something the SDK does not understand (not JSON, an unexpected
    shape, a redirect). The SDK never follows redirects, so the secret cannot be sent on to
    another address.

    Example::

        except ProtocolError as error:
            print("is", auth.issuer, "really an agentauth server?", error.description)
    """

    default_code = "invalid_response"


class WaitTimeoutError(AgentAuthError, TimeoutError):
    """:meth:`~agentauth.AgentAuth.wait_for_completion` ran out of time before the request
    was completed or failed. Also a built-in :class:`TimeoutError`. The request may still
    complete later.

    Example::

        try:
            auth.wait_for_completion(request_id, timeout=60)
        except TimeoutError:
            print("The browser has not continued yet.")
    """

    default_code = "timeout"


# --------------------------------------------------------------------------------------------
# Answered by the server (docs/contract.md, POST /api/agent/authenticate and the status)


class InvalidRequestError(AgentAuthError):
    """400 ``invalid_request`` (also 413 and 415): a field is missing, empty, too long or
    contains control characters; ``description`` names the field.

    Example::

        except InvalidRequestError as error:
            print("bad field:", error.description)   # e.g. the model name is too long
    """

    default_code = "invalid_request"


class RequestNotFoundError(AgentAuthError):
    """No such request: 404 ``invalid_request`` from authenticate, 404 ``not_found`` from the
    lookup and check-status. Wrong id, or purged after it expired.

    Example::

        except RequestNotFoundError:
            print("Unknown request id; ask for the current one.")
    """

    default_code = "not_found"


class InvalidCredentialsError(AgentAuthError):
    """401 ``invalid_credentials``: unknown agent, wrong secret or disabled agent (the server
    does not say which).

    Example::

        except InvalidCredentialsError:
            print("Check AGENTAUTH_AGENT_ID and AGENTAUTH_AGENT_SECRET.")
    """

    default_code = "invalid_credentials"


class InvalidClientError(AgentAuthError):
    """400 ``invalid_client``: the website's client was disabled after the request was made.

    Example::

        except InvalidClientError:
            print("That website is no longer registered.")
    """

    default_code = "invalid_client"


class AgentMismatchError(AgentAuthError):
    """403 ``agent_mismatch``: the website started this request for another agent
    (``login_hint``). Nothing changed.

    Example::

        except AgentMismatchError:
            print("This sign-in is meant for a different agent.")
    """

    default_code = "agent_mismatch"


class RequestAlreadyUsedError(AgentAuthError):
    """409 ``request_already_used``: the request was already authenticated (by this agent),
    completed or cancelled.

    Example::

        except RequestAlreadyUsedError:
            print("Already signed in with this request; ask for a new one if needed.")
    """

    default_code = "request_already_used"


class RequestContestedError(AgentAuthError):
    """409 ``request_contested``, or a request whose status is ``error``/``request_contested``:
    two different agents authenticated one request (its id leaked), so it was stopped and no
    code is released. The person has to start again.

    Example::

        except RequestContestedError:
            print("Someone else used this request id. Start the sign-in again.")
    """

    default_code = "request_contested"


class RequestExpiredError(AgentAuthError):
    """400 ``request_expired``, or a request whose status is ``error``/``request_expired``: the
    request is older than 10 minutes (also when the agent's owner did not approve the sign-in
    before then; the description says so). The person has to start again.

    Example::

        except RequestExpiredError:
            print("The sign-in page has expired; reload it.")
    """

    default_code = "request_expired"


class RequestMismatchError(AgentAuthError):
    """The request is not for the site the agent expected. Raised locally (``status`` None,
    nothing sent) when the lookup shows another host or client, or tokens for a server
    (``resource``) the agent did not expect, or by the server as 412
    ``request_mismatch`` when the expectations sent with the authentication fail. Nothing
    changed either way; ``request`` holds what the lookup showed, when there was one.

    Example::

        except RequestMismatchError as error:
            if error.request:
                print("This sign-in goes to", error.request.redirect_host, "- refusing.")
    """

    default_code = "request_mismatch"


class AccessDeniedError(AgentAuthError):
    """``access_denied``: the sign-in is not allowed; ``description`` says why in plain words,
    for a person to read.

    - HTTP 403 from authenticate: the agent's owner set a policy that refuses it, e.g. "Your
      owner has not allowed Acme Notes (notes.acme.example) for this agent." (a website not on
      the agent's list, a scope above its ceiling, expired credentials, too many sign-ins in
      the hour). Nothing changed: the request stays usable for another agent.
    - As the request's status (``status`` None): the owner denied the sign-in they were asked
      to approve ("The agent's owner denied this sign-in."), the person pressed Cancel, or
      the owner revoked the agent's or the website's grants.

    Example::

        except AccessDeniedError as error:
            print("Not allowed:", error.description)
    """

    default_code = "access_denied"


class TooManyRequestsError(AgentAuthError):
    """429 ``too_many_requests``: too many failed attempts from this address, or too many wrong
    secrets for this agent. The SDK has already waited ``Retry-After`` and retried (up to 3
    times, within the call's time); ``retry_after`` says how long to wait now.

    Example::

        except TooManyRequestsError as error:
            time.sleep(error.retry_after or 60)
    """

    default_code = "too_many_requests"


class TemporarilyUnavailableError(AgentAuthError):
    """503 ``temporarily_unavailable``: the server's database cannot be reached. The SDK has
    already waited ``Retry-After`` and retried (up to 3 times, within the call's time).

    Example::

        except TemporarilyUnavailableError as error:
            print("try again in", error.retry_after, "seconds")
    """

    default_code = "temporarily_unavailable"


class ServerError(AgentAuthError):
    """500 ``server_error`` (or another 5xx): an unexpected fault on the server.

    Example::

        except ServerError as error:
            print("server fault:", error.description)
    """

    default_code = "server_error"


_BY_CODE: Dict[str, Type[AgentAuthError]] = {
    "invalid_request": InvalidRequestError,
    "not_found": RequestNotFoundError,
    "invalid_credentials": InvalidCredentialsError,
    "invalid_client": InvalidClientError,
    "agent_mismatch": AgentMismatchError,
    "request_already_used": RequestAlreadyUsedError,
    "request_contested": RequestContestedError,
    "request_expired": RequestExpiredError,
    "request_mismatch": RequestMismatchError,
    "access_denied": AccessDeniedError,
    "too_many_requests": TooManyRequestsError,
    "temporarily_unavailable": TemporarilyUnavailableError,
    "server_error": ServerError,
}

# A class for every code the server can answer an agent with (_server_codes.py is generated
# from the server's list): a code added there and not here fails at import, in every test.
_UNMAPPED = sorted(set(SERVER_ERROR_CODES) - set(_BY_CODE))
if _UNMAPPED:  # pragma: no cover
    raise ImportError("agentauth.errors has no class for the server codes " + ", ".join(_UNMAPPED))


def error_for(
    code: Optional[str],
    status: Optional[int],
    description: str,
    retry_after: Optional[float] = None,
    request: Optional["SignInRequest"] = None,
) -> AgentAuthError:
    """The typed error for a server's answer (``code`` and HTTP ``status``) or for a request's
    ``error`` status (``status`` None). Unknown codes give a plain :class:`AgentAuthError`.

    Example::

        error_for("request_expired", 400, "The authorization request has expired")
        # RequestExpiredError(code='request_expired', status=400, …)
    """
    if status == 404 and code in (None, "invalid_request", "not_found"):
        cls: Type[AgentAuthError] = RequestNotFoundError
    elif code in _BY_CODE:
        cls = _BY_CODE[code]  # type: ignore[index]
    elif code is None and status == 429:
        cls = TooManyRequestsError
    elif code is None and status == 503:
        cls = TemporarilyUnavailableError
    elif code is None and status is not None and status >= 500:
        cls = ServerError
    elif code is None:
        cls = ProtocolError
    else:
        cls = AgentAuthError
    return cls(code or cls.default_code, status, description, retry_after, request=request)
