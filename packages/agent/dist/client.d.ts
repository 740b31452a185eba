/**
 * This package's version, sent in the User-Agent header outside browsers
 * (`agentauth-agent-js/0.1.0`).
 *
 * @example
 * console.log(`@agentauth/agent ${VERSION}`);
 */
export declare const VERSION = "0.1.0";
/**
 * The four states of a sign-in request.
 *
 * @example
 * const status: RequestStatus = 'pending';
 */
export type RequestStatus = 'pending' | 'authenticated' | 'completed' | 'error';
/**
 * What `GET /api/agent/request` says about a request: the website it signs in to and its state.
 * Field names are the server's. `error` and `error_description` are present when `status` is
 * `error`.
 *
 * @example
 * const view: RequestView = await agent.inspect(requestId);
 * console.log(`${view.client_name} (${view.redirect_host}) asks for ${view.scope}; ${view.expires_in} s left`);
 */
export interface RequestView {
    request_id: string;
    client_id: string;
    /** The website's registered name. */
    client_name: string;
    /** Host (and port, when not the default) the browser will be sent to. */
    redirect_host: string;
    /** Space-separated scope values, such as `openid email profile`. */
    scope: string;
    /**
     * The server (RFC 8707 resource) the website's tokens would be for, or null when they are for
     * the website itself. `signIn` refuses a resource the agent did not expect.
     */
    resource: string | null;
    /** Epoch seconds. */
    expires_at: number;
    /** Seconds left. */
    expires_in: number;
    status: RequestStatus;
    /** `true` while the request is held for an agent's owner to approve (status `pending`). */
    approval_pending?: boolean;
    error?: string;
    error_description?: string;
}
/**
 * What `GET /api/check-status` says: the status, with `error` and `error_description` when it
 * is `error`.
 *
 * @example
 * const { status } = await agent.checkStatus(requestId); // 'pending' | 'authenticated' | 'completed' | 'error'
 */
export interface StatusView {
    status: RequestStatus;
    /**
     * `true` while the request is held for the agent's owner to approve (status `pending`): the
     * agent's policy says "ask me" for this website (docs/contract.md).
     */
    approval_pending?: boolean;
    error?: string;
    error_description?: string;
}
/**
 * The result of a successful {@link AgentAuth.signIn}: the request as it was checked, now
 * `authenticated`, and the server's message.
 *
 * @example
 * const signedIn: SignInResult = await agent.signIn({ requestId, expect: { host: 'notes.acme.example' } });
 * console.log(signedIn.message); // "Agent authenticated. The browser will now continue to Acme Notes."
 */
export interface SignInResult extends Omit<RequestView, 'status' | 'error' | 'error_description' | 'approval_pending'> {
    status: 'authenticated';
    message: string;
    /**
     * Present, `true`, when the agent's owner had to approve this sign-in first (the server
     * answered 202 `approval_pending` and the SDK waited for the decision); absent for a sign-in
     * at once.
     */
    approved_by_owner?: true;
}
/**
 * What {@link SignInOptions.onApprovalPending} is told when the agent's owner must approve the
 * sign-in first (the server's 202 `approval_pending` answer).
 *
 * @example
 * const pending: ApprovalPending = { message: 'Waiting for Ada to approve signing in to Acme Notes; …', approvalId: 'apr_…', expiresAt: 1767225600, expiresIn: 600 };
 */
export interface ApprovalPending {
    /** The server's words for a person, e.g. "Waiting for Ada to approve signing in to Acme Notes; the request expires in 10 minutes." */
    message: string;
    /** The approval the owner decides (`apr_…`). */
    approvalId: string;
    /** When the request, and with it the approval, expires: epoch seconds. */
    expiresAt: number;
    /** Seconds left to decide. */
    expiresIn: number;
}
/**
 * The website the agent means to sign in to. Give `host` or `clientId` at least; both is best.
 * - `host`: the redirect host, host and port as in `redirect_host` (`notes.acme.example`,
 *   `localhost:8080`), compared without regard to case; a URL is accepted and its host used.
 * - `clientId`: the website's `client_id`.
 * - `resource`: the server the tokens are to be for (RFC 8707), exactly as in the request's
 *   `resource`. Without it, a request that names a resource is refused: the website would get
 *   tokens in the agent's name for another server. It does not replace `host` or `clientId`.
 *
 * @example
 * const expectation: Expectation = { host: 'notes.acme.example', clientId: 'cli_4f9…', resource: 'https://mcp.acme.example/mcp' };
 */
export interface Expectation {
    host?: string;
    clientId?: string;
    resource?: string;
}
/**
 * Settings of {@link AgentAuth}. Each falls back to an environment variable when `process.env`
 * exists: `AGENTAUTH_ISSUER`, `AGENTAUTH_AGENT_ID`, `AGENTAUTH_AGENT_SECRET` (or
 * `AGENTAUTH_AGENT_KEY`, the private JWK's JSON), `AGENTAUTH_MODEL`.
 *
 * @example
 * const options: AgentAuthOptions = { issuer: 'https://auth.example.com', agentId: 'agt_…', agentSecret: 'aas_…', model: 'claude-sonnet-4' };
 */
export interface AgentAuthOptions {
    /** The agentauth server you trust (its BASE_URL), such as `https://auth.example.com`; it may have a path. */
    issuer?: string;
    agentId?: string;
    /** Sent only to the issuer, only in the body of `POST /api/agent/authenticate`. */
    agentSecret?: string;
    /**
     * Instead of a secret, for a key-bound agent: its private key as a JWK (object or JSON text,
     * as `agentauth-agent keygen` writes it), Ed25519 or P-256. Each authentication sends a
     * fresh assertion signed with it (a minute long, for this issuer and request only); the key
     * itself is never sent.
     */
    privateKey?: string | object;
    /** The AI model the agent runs on (1 to 200 characters); it goes into the access token. */
    model?: string;
    /** The fetch to use; the global one by default. */
    fetch?: typeof fetch;
    /** Time budget of one call (inspect, checkStatus, signIn), retries included. Default 30 000 ms. */
    timeoutMs?: number;
    /** How often one call retries after 429 or 503 (honouring `Retry-After`). Default 3. */
    maxRetries?: number;
    /**
     * Accept a plain `http://` issuer on a host other than this machine (`localhost`,
     * `127.x.x.x`, `[::1]`), where the secret would cross the network in clear. Default false:
     * such an issuer is a {@link ConfigurationError}.
     */
    allowInsecureHttp?: boolean;
}
/**
 * Options of {@link AgentAuth.signIn}. Give the request as `requestId` (an id or the page's
 * HTML) or `html`; `pageUrl`, when the agent read the page itself, lets the SDK check the page
 * is the issuer's.
 *
 * `expect` is required: the website you mean to sign in to, or `'any'` to accept whatever the
 * request is for. Anyone can create a request for any website and hand its id to an agent
 * (consent phishing, RFC 10027), so `'any'` is only for an agent that has checked the request
 * by other means.
 *
 * @example
 * const options: SignInOptions = { html: pageHtml, pageUrl: 'https://auth.example.com/authorize?…', expect: { host: 'notes.acme.example' } };
 */
export interface SignInOptions {
    /** The request id (`req_…`), or the authorization page's HTML. */
    requestId?: string;
    /** The authorization page's HTML. */
    html?: string;
    /** The URL the page was read from; must belong to the issuer. Never fetched. */
    pageUrl?: string | URL;
    expect: Expectation | 'any';
    signal?: AbortSignal;
    /**
     * Called once when the agent's owner must approve this sign-in first (their policy says "ask
     * me" for this website): the SDK then waits for the decision without sending the credentials
     * again. Print `message` so the person knows what they are waiting for.
     */
    onApprovalPending?: (pending: ApprovalPending) => void;
    /**
     * How long to wait for the owner's decision; by default until the request expires (10 minutes
     * after it was made). Past it: {@link TimeoutError}, and the request still waits for the owner
     * ({@link AgentAuth.waitForCompletion} can keep waiting).
     */
    approvalTimeoutMs?: number;
    /** Wait for the owner's decision over the push endpoint first (default `true`); `false` polls only. */
    push?: boolean;
}
/**
 * Options of {@link AgentAuth.waitForCompletion}.
 *
 * @example
 * const options: WaitOptions = { timeoutMs: 120_000, onStatus: (s) => console.log(s.status) };
 */
export interface WaitOptions {
    /** Give up after this long: {@link TimeoutError}. Default 60 000 ms. */
    timeoutMs?: number;
    signal?: AbortSignal;
    /** Try the push endpoint first (default `true`); `false` polls only. */
    push?: boolean;
    /** Called with each status that differs from the previous one. */
    onStatus?: (status: StatusView) => void;
}
/**
 * Options of the single calls {@link AgentAuth.inspect} and {@link AgentAuth.checkStatus}.
 *
 * @example
 * await agent.inspect(requestId, { signal: AbortSignal.timeout(5_000) });
 */
export interface CallOptions {
    signal?: AbortSignal;
}
/** Where an action a website asked the agent's owner about stands. */
export type ActionStatus = 'pending' | 'approved' | 'denied' | 'expired';
/**
 * An action a website the agent signed in to asked its owner to approve (OpenID CIBA with RFC
 * 9396 authorization details), as `GET /api/agent/actions` tells the agent. Website-chosen text
 * (`client_name`, `words`, `binding_message`) is the website's: quote it as untrusted
 * ({@link quoteUntrusted}) before a model reads it.
 *
 * @example
 * const action: AgentAction = { id: 'act_…', client_id: 'cli_…', client_name: 'Acme Notes', words: ['Pay 20 EUR to Acme'], message: 'Waiting for your owner to approve: Pay 20 EUR to Acme (Acme Notes)', binding_message: null, authorization_details: [{ type: 'payment', amount: 20, currency: 'EUR', payee: 'Acme' }], status: 'pending', answered_by: null, created_at: 1767225000, expires_at: 1767225300, expires_in: 300, decided_at: null };
 */
export interface AgentAction {
    /** The action request's id (`act_…`). */
    id: string;
    client_id: string;
    client_name: string;
    /** Each detail of the action in words, e.g. "Pay 20 EUR to Acme". */
    words: string[];
    /** A sentence for the agent's user: "Waiting for your owner to approve: …", "Your owner approved: …", "… denied: …", "Expired …". */
    message: string;
    binding_message: string | null;
    authorization_details: Array<{
        type: string;
        [field: string]: unknown;
    }>;
    status: ActionStatus;
    /** Who answered: the owner, or their standing policy (null while waiting or expired). */
    answered_by: 'owner' | 'policy' | null;
    created_at: number;
    expires_at: number;
    /** Seconds left while waiting, else 0. */
    expires_in: number;
    decided_at: number | null;
}
/**
 * Options of {@link AgentAuth.waitForAction}.
 *
 * @example
 * const options: ActionWaitOptions = { timeoutMs: 300_000, onWaiting: (action) => console.log(action.message) };
 */
export interface ActionWaitOptions {
    /** Give up after this long: {@link TimeoutError}. Default: until the action expires, plus 35 s. */
    timeoutMs?: number;
    signal?: AbortSignal;
    /** Called once with the action while it waits for the owner. */
    onWaiting?: (action: AgentAction) => void;
}
/**
 * An agent's client of one agentauth server.
 *
 * Settings come from the options or, where `process.env` exists, from `AGENTAUTH_ISSUER`,
 * `AGENTAUTH_AGENT_ID`, `AGENTAUTH_AGENT_SECRET` and `AGENTAUTH_MODEL`. The issuer is required
 * at once; the agent id, secret and model when signing in. The secret is kept in a private
 * field: it is not enumerable, not printed, and never part of an error. Plain `http` is
 * accepted only for this machine (`localhost`, `127.x.x.x`, `[::1]`) unless
 * `allowInsecureHttp: true`, as in the Python SDK: elsewhere the secret would travel in clear.
 *
 * @example
 * import { AgentAuth } from '@agentauth/agent';
 *
 * const agent = new AgentAuth(); // AGENTAUTH_ISSUER, AGENTAUTH_AGENT_ID, AGENTAUTH_AGENT_SECRET, AGENTAUTH_MODEL
 * const signedIn = await agent.signIn({ requestId: 'req_…', expect: { host: 'notes.acme.example' } });
 * console.log(signedIn.message);
 * await agent.waitForCompletion(signedIn.request_id); // the browser has its code
 */
export declare class AgentAuth {
    #private;
    /** The issuer, canonical: no trailing slash. */
    readonly issuer: string;
    constructor(options?: AgentAuthOptions);
    /** The agent id in use, if any (it is public: the `sub` of the agent's tokens). */
    get agentId(): string | undefined;
    /** The model name sent when signing in, if any. */
    get model(): string | undefined;
    /**
     * What a request is for, from `GET /api/agent/request` (no credentials sent): the website
     * (`client_id`, `client_name`, `redirect_host`), the scope, the expiry and the status.
     * Accepts the id or the page's HTML. Throws {@link RequestNotFoundError} for an unknown id.
     *
     * @example
     * const view = await agent.inspect('req_…');
     * if (view.redirect_host !== 'notes.acme.example') throw new Error(`Not signing in to ${view.redirect_host}`);
     */
    inspect(requestIdOrHtml: string, options?: CallOptions): Promise<RequestView>;
    /**
     * The request's status, from `GET /api/check-status`. `waitForCompletion` is what most agents
     * want; this is one look.
     *
     * @example
     * const { status } = await agent.checkStatus('req_…'); // 'pending' | 'authenticated' | 'completed' | 'error'
     */
    checkStatus(requestIdOrHtml: string, options?: CallOptions): Promise<StatusView>;
    /**
     * Signs the agent in to one request, after checking it is for the website expected:
     * 1. reads the id (from `requestId` or `html`); with `pageUrl`, refuses a page that is not
     *    the issuer's ({@link IssuerMismatchError}), and so does HTML whose endpoints name
     *    another server; nothing is sent then;
     * 2. looks the request up ({@link AgentAuth.inspect}) and refuses, without authenticating, a
     *    request for another website, or for tokens for a server (`resource`) other than
     *    `expect.resource` ({@link RequestMismatchError}), or one already in error (the error's
     *    class, such as {@link RequestExpiredError}); with `'any'`, any website and resource;
     * 3. authenticates with `expected_client_id`, `expected_redirect_host` and (when the request
     *    names one) `expected_resource`, so the server refuses too (412) should the request
     *    differ from what was looked up.
     *
     * When the agent's owner has set a policy: a refusal is {@link AccessDeniedError} (403) whose
     * `description` says why in plain words ("Your owner has not allowed Acme Notes
     * (notes.acme.example) for this agent."). When the owner must approve first (202
     * `approval_pending`), `onApprovalPending` is called and the SDK waits for the decision (push,
     * else polling; no credentials sent again): approved, it resolves with `approved_by_owner:
     * true`; denied, {@link AccessDeniedError} ("The agent's owner denied this sign-in."); not
     * decided before the request expires, {@link RequestExpiredError}.
     *
     * Retries after 429 and 503 as the server's `Retry-After` says, within the call's budget.
     *
     * @example
     * const signedIn = await agent.signIn({
     *   requestId: 'req_…',
     *   expect: { host: 'notes.acme.example' },
     *   onApprovalPending: ({ message }) => console.log(message), // "Waiting for Ada to approve …"
     * });
     * console.log(`Signed in to the website that calls itself ${quoteUntrusted(signedIn.client_name)}; the browser continues by itself.`);
     */
    signIn(options: SignInOptions): Promise<SignInResult>;
    /**
     * Waits until the browser has continued (`completed`): over the push endpoint
     * (`/api/check-status/events`, server-sent events) when the server has it, else by polling
     * `/api/check-status` every second for the first minute, then backing off (2, 4, 8, 16, 30,
     * 30 … s). Resolves with `{status: 'completed'}`; throws the error's class when the request
     * ends in `error` ({@link RequestExpiredError}, {@link AccessDeniedError},
     * {@link RequestContestedError}), {@link RequestNotFoundError} for an unknown id, and
     * {@link TimeoutError} after `timeoutMs` (default 60 s). An aborted `signal` rejects with its
     * reason.
     *
     * @example
     * await agent.signIn({ requestId, expect: { host: 'notes.acme.example' } });
     * await agent.waitForCompletion(requestId, { onStatus: ({ status }) => console.log(status) });
     */
    waitForCompletion(requestIdOrHtml: string, options?: WaitOptions): Promise<StatusView & {
        status: 'completed';
    }>;
    /**
     * The actions websites asked the agent's owner about (`GET /api/agent/actions`): those waiting
     * and those decided or expired in the last ten minutes, newest first, each with its words and
     * a sentence for the agent's user. Authenticates with the agent's secret (HTTP Basic) or, for a
     * key-bound agent, a fresh assertion. The server must have ACTION_APPROVALS on (else
     * {@link RequestNotFoundError}: no such endpoint).
     *
     * @example
     * for (const action of await agent.listActions()) console.log(action.message);
     * // Waiting for your owner to approve: Pay 20 EUR to Acme (Acme Notes)
     */
    listActions(options?: CallOptions): Promise<AgentAction[]>;
    /**
     * Waits until the owner (or their policy) decides the action `actionId`, asking again every
     * `interval` seconds as the server says; resolves with it once `approved`, `denied` or
     * `expired` (a decision is not an error: read `status`). Throws {@link InvalidInputError} when
     * no such action is listed, {@link TimeoutError} after `timeoutMs`.
     *
     * @example
     * const decided = await agent.waitForAction('act_…', { onWaiting: (a) => console.log(a.message) });
     * console.log(decided.message); // "Your owner approved: Pay 20 EUR to Acme (Acme Notes)"
     */
    waitForAction(actionId: string, options?: ActionWaitOptions): Promise<AgentAction>;
}
