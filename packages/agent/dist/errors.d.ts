/**
 * The base class of every error of this package.
 *
 * - `code`: the server's `error` code (`request_expired`, …), or the SDK's own code for errors
 *   found locally (`configuration_error`, `issuer_mismatch`, `invalid_input`, `timeout`,
 *   `network_error`, `unexpected_response`; `request_mismatch` when the SDK refused a site
 *   itself).
 * - `status`: the HTTP status of the answer that said so, or `undefined` when no error answer
 *   was involved (a local check, or a request whose status is `error`).
 * - `description`: the server's `error_description`, or the SDK's explanation.
 * - `retryAfter`: seconds to wait before trying again, when the server said (`Retry-After`).
 *
 * A code this version does not know is thrown as `AgentAuthError` itself.
 *
 * @example
 * try {
 *   await agent.signIn({ requestId, expect: { host: 'notes.acme.example' } });
 * } catch (error) {
 *   if (error instanceof AgentAuthError) console.error(error.code, error.status, error.description);
 *   else throw error;
 * }
 */
export declare class AgentAuthError extends Error {
    /** The error code: the server's `error`, or the SDK's own for local errors. */
    readonly code: string;
    /** HTTP status of the error answer; `undefined` for local errors and error statuses of a request. */
    readonly status: number | undefined;
    /** The server's `error_description`, or the SDK's explanation. */
    readonly description: string;
    /** Seconds the server asked to wait (`Retry-After`), when it did. */
    readonly retryAfter: number | undefined;
    constructor(code: string, description: string, options?: {
        status?: number;
        retryAfter?: number;
        cause?: unknown;
    });
    get name(): string;
}
/**
 * A required setting is missing or malformed (issuer, agent id, agent secret, model). Nothing
 * was sent.
 *
 * @example
 * try {
 *   new AgentAuth({ issuer: 'not a url' });
 * } catch (error) {
 *   if (error instanceof ConfigurationError) console.error(error.description);
 * }
 */
export declare class ConfigurationError extends AgentAuthError {
    constructor(description: string);
}
/**
 * An argument is unusable: no request id could be read, an id is malformed, or `signIn` was
 * called without expectations. Nothing was sent.
 *
 * @example
 * try {
 *   requestIdFrom('<html>no id here</html>');
 * } catch (error) {
 *   if (error instanceof InvalidInputError) console.error(error.description);
 * }
 */
export declare class InvalidInputError extends AgentAuthError {
    constructor(description: string);
}
/**
 * The page (its URL, or the endpoints named in its HTML) belongs to another server than the
 * configured issuer. Nothing was sent: the agent secret goes only to the configured issuer.
 *
 * @example
 * try {
 *   await agent.signIn({ html, pageUrl: 'https://evil.example/authorize?…', expect: { host: 'notes.acme.example' } });
 * } catch (error) {
 *   if (error instanceof IssuerMismatchError) console.error('Not our sign-in page:', error.description);
 * }
 */
export declare class IssuerMismatchError extends AgentAuthError {
    constructor(description: string);
}
/**
 * The fetch itself failed (DNS, connection refused, reset, TLS). `cause` holds the original
 * error.
 *
 * @example
 * try {
 *   await agent.inspect(requestId);
 * } catch (error) {
 *   if (error instanceof NetworkError) console.error('Cannot reach the server:', error.cause);
 * }
 */
export declare class NetworkError extends AgentAuthError {
    constructor(description: string, cause: unknown);
}
/**
 * `waitForCompletion` (or a call's own time budget) ran out before the request reached a final
 * status.
 *
 * @example
 * try {
 *   await agent.waitForCompletion(requestId, { timeoutMs: 30_000 });
 * } catch (error) {
 *   if (error instanceof TimeoutError) console.error('The browser did not continue in time.');
 * }
 */
export declare class TimeoutError extends AgentAuthError {
    constructor(description: string);
}
/**
 * `unexpected_response`: the server answered something this SDK cannot use: not the JSON the
 * contract documents, or more of it than any agentauth answer holds (over 64 KiB). The SDK
 * stops reading at that size, so a wrong or hostile server cannot make it hold more.
 *
 * @example
 * try {
 *   await agent.inspect(requestId);
 * } catch (error) {
 *   if (error instanceof UnexpectedResponseError) console.error('Is AGENTAUTH_ISSUER an agentauth server?', error.description);
 * }
 */
export declare class UnexpectedResponseError extends AgentAuthError {
    constructor(description: string, options?: {
        status?: number;
    });
}
/**
 * 400 `invalid_request`: a field is missing, empty, too long or malformed (the description
 * names it), or the body was refused (413, 415).
 *
 * @example
 * try {
 *   await new AgentAuth({ model: 'x'.repeat(201) }).signIn({ requestId, expect: { host } });
 * } catch (error) {
 *   if (error instanceof InvalidRequestError) console.error(error.description); // "model is longer than 200 characters"
 * }
 */
export declare class InvalidRequestError extends AgentAuthError {
}
/**
 * The server does not know this request: a wrong id, or one purged long after it expired.
 * Thrown for every 404 about a request: `not_found` from the lookup and check-status, and
 * `invalid_request` with status 404 from authenticate (`code` keeps the server's code).
 *
 * @example
 * try {
 *   await agent.inspect('req_unknown');
 * } catch (error) {
 *   if (error instanceof RequestNotFoundError) console.error('No such sign-in request.');
 * }
 */
export declare class RequestNotFoundError extends AgentAuthError {
}
/**
 * 401 `invalid_credentials`: unknown agent, wrong secret or disabled agent (the server does
 * not say which).
 *
 * @example
 * try {
 *   await agent.signIn({ requestId, expect: { host } });
 * } catch (error) {
 *   if (error instanceof InvalidCredentialsError) console.error('Check AGENTAUTH_AGENT_ID and AGENTAUTH_AGENT_SECRET.');
 * }
 */
export declare class InvalidCredentialsError extends AgentAuthError {
}
/**
 * 400 `invalid_client`: the website's client was disabled after the request was made.
 *
 * @example
 * try {
 *   await agent.signIn({ requestId, expect: { host } });
 * } catch (error) {
 *   if (error instanceof InvalidClientError) console.error('That website can no longer sign in.');
 * }
 */
export declare class InvalidClientError extends AgentAuthError {
}
/**
 * 403 `agent_mismatch`: the website started this request for another agent (`login_hint`).
 * Nothing changed.
 *
 * @example
 * try {
 *   await agent.signIn({ requestId, expect: { host } });
 * } catch (error) {
 *   if (error instanceof AgentMismatchError) console.error('This sign-in is meant for another agent.');
 * }
 */
export declare class AgentMismatchError extends AgentAuthError {
}
/**
 * 412 `request_mismatch` from the server, or the same refusal made by the SDK before it sent
 * anything (`status` undefined): the request is for another website (client id or redirect
 * host) than the one expected, or asks for tokens for a server (`resource`) the agent did not
 * expect. Nothing changed.
 *
 * @example
 * try {
 *   await agent.signIn({ requestId, expect: { host: 'notes.acme.example' } });
 * } catch (error) {
 *   if (error instanceof RequestMismatchError) console.error('Refused: not the site I meant.', error.description);
 * }
 */
export declare class RequestMismatchError extends AgentAuthError {
}
/**
 * 409 `request_already_used`: the request was already authenticated (by this agent),
 * completed or cancelled. A request can be authenticated once.
 *
 * @example
 * try {
 *   await agent.signIn({ requestId, expect: { host } });
 * } catch (error) {
 *   if (error instanceof RequestAlreadyUsedError) console.error('Already signed in with this request.');
 * }
 */
export declare class RequestAlreadyUsedError extends AgentAuthError {
}
/**
 * `request_contested`: two different agents authenticated one request (its id leaked), so the
 * server stopped it and releases no code. From authenticate (409) or as the request's final
 * status. The person has to start again.
 *
 * @example
 * try {
 *   await agent.waitForCompletion(requestId);
 * } catch (error) {
 *   if (error instanceof RequestContestedError) console.error('Another agent used this request id; start again.');
 * }
 */
export declare class RequestContestedError extends AgentAuthError {
}
/**
 * `request_expired`: the request is older than its lifetime (10 minutes). From authenticate
 * (400) or as the request's status; also when the agent's owner did not approve the sign-in
 * before then (the description says so). The person has to start again.
 *
 * @example
 * try {
 *   await agent.waitForCompletion(requestId);
 * } catch (error) {
 *   if (error instanceof RequestExpiredError) console.error('The sign-in expired; start again.');
 * }
 */
export declare class RequestExpiredError extends AgentAuthError {
}
/**
 * `access_denied`: the sign-in is not allowed. `description` says why in plain words, for a
 * person to read:
 * - 403 from authenticate (`status` 403): the agent's owner set a policy that refuses it, e.g.
 *   "Your owner has not allowed Acme Notes (notes.acme.example) for this agent." (a website not
 *   on the agent's list, a scope above its ceiling, expired credentials, too many sign-ins in
 *   the hour). Nothing changed: the request stays usable for another agent.
 * - as the request's status (`status` undefined): the owner denied the sign-in they were asked
 *   to approve ("The agent's owner denied this sign-in."), the person pressed Cancel on the
 *   authorization page, or the owner revoked the agent's or the website's grants.
 *
 * @example
 * try {
 *   await agent.signIn({ requestId, expect: { host: 'notes.acme.example' } });
 * } catch (error) {
 *   if (error instanceof AccessDeniedError) console.error(`Not allowed: ${error.description}`);
 * }
 */
export declare class AccessDeniedError extends AgentAuthError {
}
/**
 * 429 `too_many_requests`: too many failed attempts. The SDK has already waited `Retry-After`
 * and retried as far as its limits allow; `retryAfter` says how long to wait now.
 *
 * @example
 * try {
 *   await agent.signIn({ requestId, expect: { host } });
 * } catch (error) {
 *   if (error instanceof TooManyRequestsError) console.error(`Throttled; retry in ${error.retryAfter} s.`);
 * }
 */
export declare class TooManyRequestsError extends AgentAuthError {
}
/**
 * 503 `temporarily_unavailable`: the server cannot reach its database. The SDK has already
 * waited `Retry-After` and retried as far as its limits allow.
 *
 * @example
 * try {
 *   await agent.inspect(requestId);
 * } catch (error) {
 *   if (error instanceof UnavailableError) console.error(`Server unavailable; retry in ${error.retryAfter} s.`);
 * }
 */
export declare class UnavailableError extends AgentAuthError {
}
/**
 * 500 `server_error`: an unexpected failure on the server.
 *
 * @example
 * try {
 *   await agent.inspect(requestId);
 * } catch (error) {
 *   if (error instanceof ServerError) console.error('The server failed; try again later.');
 * }
 */
export declare class ServerError extends AgentAuthError {
}
/**
 * The typed error for a server's `{error, error_description}`: from an error answer (give its
 * HTTP `status`), or from a request whose status is `error` (no `status`). Unknown codes give
 * an {@link AgentAuthError}. Useful to code that calls the endpoints itself.
 *
 * @example
 * const error = errorFromServer({ error: 'request_expired', error_description: 'The authorization request has expired.' }, { status: 400 });
 * error instanceof RequestExpiredError; // true
 */
export declare function errorFromServer(body: {
    error?: unknown;
    error_description?: unknown;
}, options?: {
    status?: number;
    retryAfter?: number;
}): AgentAuthError;
