"""agentauth: sign an AI agent in to a website through an agentauth server.

Standard library only (Python 3.9+); a key-bound agent signs with the `keys` extra (:mod:`agentauth.keys`). The usual flow is four lines::

    from agentauth import AgentAuth

    auth = AgentAuth()  # AGENTAUTH_ISSUER, AGENTAUTH_AGENT_ID, AGENTAUTH_AGENT_SECRET, AGENTAUTH_MODEL
    result = auth.sign_in(page_html_or_request_id, expect_host="notes.acme.example")
    auth.wait_for_completion(result.request_id)   # 'completed', or a typed error

:meth:`AgentAuth.sign_in` looks the request up first and refuses, without authenticating, a
sign-in to a site other than the one expected (:class:`RequestMismatchError`); it never opens
``/authorize`` (that would start a new sign-in). Every failure is a typed
:class:`AgentAuthError`; none of them, nor ``repr(auth)``, ever shows the agent secret.

The SDK logs to the ``agentauth`` logger (DEBUG: the transport it uses; INFO: retries and
refusals), never the secret.
"""

import logging as _logging

from ._version import __version__
from .client import AgentAction, AgentAuth, ApprovalPending, RequestStatus, SignInRequest, SignInResult
from .errors import (
    AccessDeniedError,
    AgentAuthError,
    AgentMismatchError,
    ConfigurationError,
    InvalidClientError,
    InvalidCredentialsError,
    InvalidInputError,
    InvalidRequestError,
    IssuerMismatchError,
    NetworkError,
    ProtocolError,
    RequestAlreadyUsedError,
    RequestContestedError,
    RequestExpiredError,
    RequestMismatchError,
    RequestNotFoundError,
    ServerError,
    TemporarilyUnavailableError,
    TooManyRequestsError,
    WaitTimeoutError,
)
from .keys import AgentKey, generate_key, key_thumbprint, public_key_of
from .page import issuer_from_page_url, quote_untrusted, request_id_from

_logging.getLogger("agentauth").addHandler(_logging.NullHandler())

__all__ = [
    "__version__",
    "AgentAuth",
    "RequestStatus",
    "SignInRequest",
    "SignInResult",
    "ApprovalPending",
    "AgentAction",
    "request_id_from",
    "issuer_from_page_url",
    "quote_untrusted",
    "AgentKey",
    "generate_key",
    "key_thumbprint",
    "public_key_of",
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
