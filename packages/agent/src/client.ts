/**
 * The agent's side of agentauth: look a sign-in request up, check it is for the site the agent
 * means, authenticate, and wait until the browser has continued. Only `fetch`, `AbortSignal`
 * and `TextDecoder` are used, so it runs in Node 20+, Deno, Bun and browsers alike.
 */
import {
  AgentAuthError,
  ConfigurationError,
  errorFromServer,
  InvalidInputError,
  IssuerMismatchError,
  NetworkError,
  RequestAlreadyUsedError,
  RequestExpiredError,
  RequestMismatchError,
  TimeoutError,
  UnexpectedResponseError,
} from './errors.ts';
import {
  isLoopbackIssuer,
  issuerFromPageUrl,
  metaContents,
  normalizeIssuer,
  quoteUntrusted,
  requestIdFrom,
} from './page.ts';
import { type AgentPrivateKey, readPrivateKey, signAssertion } from './keys.ts';
import { readEvents } from './sse.ts';

/**
 * This package's version, sent in the User-Agent header outside browsers
 * (`agentauth-agent-js/0.1.0`).
 *
 * @example
 * console.log(`@agentauth/agent ${VERSION}`);
 */
export const VERSION = '0.1.0';

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
  authorization_details: Array<{ type: string; [field: string]: unknown }>;
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

/** The path where an agent lists its actions, and the request_id its assertion names there. */
const ACTIONS_PATH = '/api/agent/actions';
const ACTIONS_ASSERTION_REQUEST_ID = 'agent-actions';
/** How often to ask again while an action waits, when the server does not say (it does: `interval`). */
const ACTION_POLL_SECONDS = 5;

function isAgentAction(value: unknown): value is AgentAction {
  return (
    isRecord(value) &&
    typeof value.id === 'string' &&
    typeof value.client_name === 'string' &&
    typeof value.message === 'string' &&
    Array.isArray(value.words) &&
    typeof value.status === 'string' &&
    typeof value.expires_at === 'number'
  );
}

/** The polling plan of docs/contract.md: every second for the first minute, then backing off. */
const POLL_INTERVAL_MS = 1_000;
const STEADY_POLLING_MS = 60_000;
const BACKOFF_START_MS = 2_000;
const BACKOFF_CAP_MS = 30_000;
/** The server sends a keep-alive every 15 s; a stream silent for this long is dead. */
const STREAM_IDLE_MS = 40_000;

interface Budget {
  signal: AbortSignal;
  deadline: number;
  dispose(): void;
}

/** A time budget: aborts with a TimeoutError when it runs out, or with the caller's reason. */
function budget(timeoutMs: number, callerSignal: AbortSignal | undefined, what: string): Budget {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new TimeoutError(`${what} did not finish within ${timeoutMs} ms.`)),
    timeoutMs,
  );
  const onAbort = () => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) controller.abort(callerSignal.reason);
  else callerSignal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    deadline: Date.now() + timeoutMs,
    dispose() {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onAbort);
    },
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Retry-After in seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/**
 * The largest answer read, in bytes. The server's answers are under 3 KiB (the longest, the
 * request lookup, holds a 200-character name, a 512-character client_id and a 1000-character
 * resource) and its own request bodies stop at 64 KiB; past that the answer is not agentauth's,
 * and reading on would let a server fill the agent's memory.
 */
const MAX_BODY_BYTES = 64 * 1024;

/**
 * The body as text, read as a stream and given up past MAX_BODY_BYTES
 * ({@link UnexpectedResponseError}). `signal` ends the read at once (the call's budget).
 */
async function readText(response: Response, signal: AbortSignal): Promise<string> {
  const tooLarge = () =>
    new UnexpectedResponseError(
      `The server answered more than ${MAX_BODY_BYTES} bytes; no agentauth answer is that large.`,
      { status: response.status },
    );
  if (Number(response.headers.get('content-length')) > MAX_BODY_BYTES) {
    response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const onAbort = () => void reader.cancel(signal.reason).catch(() => {});
  signal.addEventListener('abort', onAbort, { once: true });
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (signal.aborted) throw signal.reason;
      if (done) return text + decoder.decode();
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) throw tooLarge();
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (error instanceof AgentAuthError) throw error;
    throw new NetworkError(
      `Reading the answer failed: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  } finally {
    signal.removeEventListener('abort', onAbort);
    reader.cancel().catch(() => {});
  }
}

/** The JSON of the body, or undefined when it is not JSON; throws as {@link readText} does. */
async function readJson(response: Response, signal: AbortSignal): Promise<unknown> {
  const text = await readText(response, signal);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const STATUSES: readonly string[] = ['pending', 'authenticated', 'completed', 'error'];

function isStatusView(value: unknown): value is StatusView {
  return isRecord(value) && typeof value.status === 'string' && STATUSES.includes(value.status);
}

function isRequestView(value: unknown): value is RequestView {
  const resource = isRecord(value) ? value.resource : undefined;
  return (
    isStatusView(value) &&
    ['request_id', 'client_id', 'client_name', 'redirect_host', 'scope'].every(
      (field) => typeof (value as unknown as Record<string, unknown>)[field] === 'string',
    ) &&
    typeof (value as unknown as Record<string, unknown>).expires_at === 'number' &&
    // A server older than resource indicators has no `resource`: it issues no such tokens.
    (resource === undefined || resource === null || typeof resource === 'string')
  );
}

/** The 202 answer's fields, checked: the server's words and the time left. */
function approvalPendingOf(answer: Record<string, unknown>): ApprovalPending {
  const { message, approval_id: approvalId, expires_at: expiresAt, expires_in: expiresIn } = answer;
  if (
    typeof message !== 'string' ||
    typeof approvalId !== 'string' ||
    typeof expiresAt !== 'number' ||
    typeof expiresIn !== 'number' ||
    !Number.isFinite(expiresIn) ||
    expiresIn < 0
  )
    throw unexpected('The approval_pending answer lacks its message, approval_id, expires_at or expires_in.', 202);
  return { message, approvalId, expiresAt, expiresIn };
}

function unexpected(description: string, status?: number): UnexpectedResponseError {
  return new UnexpectedResponseError(description, status === undefined ? {} : { status });
}

/** The environment variable, when this runtime has `process.env` and lets us read it. */
function environment(name: string): string | undefined {
  try {
    const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
    return value === '' ? undefined : value;
  } catch {
    return undefined; // Deno without --allow-env throws
  }
}

function optionalText(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new ConfigurationError(`${name} must be a string.`);
  return value;
}

/** The host an expectation names: a host[:port] as given, or the host of a URL. */
function expectedHost(value: string): string {
  if (!value.includes('://')) return value.trim();
  try {
    return new URL(value).host;
  } catch {
    throw new InvalidInputError('expect.host is neither a host nor a URL.');
  }
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
export class AgentAuth {
  /** The issuer, canonical: no trailing slash. */
  readonly issuer: string;
  readonly #agentId: string | undefined;
  readonly #agentSecret: string | undefined;
  readonly #privateKey: AgentPrivateKey | undefined;
  readonly #model: string | undefined;
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;

  constructor(options: AgentAuthOptions = {}) {
    const issuer = optionalText(options.issuer, 'issuer') ?? environment('AGENTAUTH_ISSUER');
    if (issuer === undefined)
      throw new ConfigurationError(
        "The issuer is missing: pass issuer or set AGENTAUTH_ISSUER to the agentauth server's URL.",
      );
    const canonical = normalizeIssuer(issuer);
    if (canonical === undefined)
      throw new ConfigurationError(
        'The issuer must be an absolute http(s) URL without query, fragment or credentials.',
      );
    if (canonical.startsWith('http:') && options.allowInsecureHttp !== true && !isLoopbackIssuer(canonical)) {
      throw new ConfigurationError(
        'The issuer uses plain http on another host; the agent secret would travel in clear. Use https, or pass allowInsecureHttp: true on a network you trust.',
      );
    }
    this.issuer = canonical;
    this.#agentId = optionalText(options.agentId, 'agentId') ?? environment('AGENTAUTH_AGENT_ID');
    // A secret or a key: what is passed wins over the environment; two at the same level are refused.
    const secret = optionalText(options.agentSecret, 'agentSecret');
    const key = options.privateKey === undefined || options.privateKey === null ? undefined : options.privateKey;
    if (secret !== undefined && key !== undefined)
      throw new ConfigurationError('Pass agentSecret or privateKey, not both.');
    const fromEnvironment = secret === undefined && key === undefined;
    const secretEnv = fromEnvironment ? environment('AGENTAUTH_AGENT_SECRET') : undefined;
    const keyEnv = fromEnvironment ? environment('AGENTAUTH_AGENT_KEY') : undefined;
    if (secretEnv !== undefined && keyEnv !== undefined)
      throw new ConfigurationError('Both AGENTAUTH_AGENT_SECRET and AGENTAUTH_AGENT_KEY are set: keep one.');
    this.#agentSecret = secret ?? secretEnv;
    const privateKey = key ?? keyEnv;
    this.#privateKey = privateKey === undefined ? undefined : readPrivateKey(privateKey);
    this.#model = optionalText(options.model, 'model') ?? environment('AGENTAUTH_MODEL');
    const custom = options.fetch;
    if (custom !== undefined && typeof custom !== 'function') throw new ConfigurationError('fetch must be a function.');
    // Called as a plain function: a browser's fetch refuses to run with another `this`.
    this.#fetch = custom ?? ((input, init) => globalThis.fetch(input, init));
    this.#timeoutMs = positive(options.timeoutMs, 30_000, 'timeoutMs');
    const maxRetries = options.maxRetries ?? 3;
    if (!Number.isInteger(maxRetries) || maxRetries < 0)
      throw new ConfigurationError('maxRetries must be a whole number >= 0.');
    this.#maxRetries = maxRetries;
  }

  /** The agent id in use, if any (it is public: the `sub` of the agent's tokens). */
  get agentId(): string | undefined {
    return this.#agentId;
  }

  /** The model name sent when signing in, if any. */
  get model(): string | undefined {
    return this.#model;
  }

  /**
   * What a request is for, from `GET /api/agent/request` (no credentials sent): the website
   * (`client_id`, `client_name`, `redirect_host`), the scope, the expiry and the status.
   * Accepts the id or the page's HTML. Throws {@link RequestNotFoundError} for an unknown id.
   *
   * @example
   * const view = await agent.inspect('req_…');
   * if (view.redirect_host !== 'notes.acme.example') throw new Error(`Not signing in to ${view.redirect_host}`);
   */
  async inspect(requestIdOrHtml: string, options: CallOptions = {}): Promise<RequestView> {
    const requestId = requestIdFrom(requestIdOrHtml);
    const call = budget(this.#timeoutMs, options.signal, 'inspect');
    try {
      return await this.#inspect(requestId, call);
    } finally {
      call.dispose();
    }
  }

  /**
   * The request's status, from `GET /api/check-status`. `waitForCompletion` is what most agents
   * want; this is one look.
   *
   * @example
   * const { status } = await agent.checkStatus('req_…'); // 'pending' | 'authenticated' | 'completed' | 'error'
   */
  async checkStatus(requestIdOrHtml: string, options: CallOptions = {}): Promise<StatusView> {
    const requestId = requestIdFrom(requestIdOrHtml);
    const call = budget(this.#timeoutMs, options.signal, 'checkStatus');
    try {
      return await this.#status(requestId, call);
    } finally {
      call.dispose();
    }
  }

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
  async signIn(options: SignInOptions): Promise<SignInResult> {
    const expectation = checkedExpectation(options?.expect);
    const expected = {
      clientId: expectation === 'any' ? undefined : expectation.clientId,
      host: expectation === 'any' || expectation.host === undefined ? undefined : expectedHost(expectation.host),
      resource: expectation === 'any' ? undefined : expectation.resource,
    };
    positive(options.approvalTimeoutMs, 1, 'approvalTimeoutMs'); // refused before anything is sent
    const agentId = this.#agentId;
    const agentSecret = this.#agentSecret;
    const privateKey = this.#privateKey;
    const model = this.#model;
    if (agentId === undefined)
      throw new ConfigurationError('The agent id is missing: pass agentId or set AGENTAUTH_AGENT_ID.');
    if (agentSecret === undefined && privateKey === undefined)
      throw new ConfigurationError(
        'The agent secret is missing: pass agentSecret or set AGENTAUTH_AGENT_SECRET (or, for a key-bound agent, privateKey or AGENTAUTH_AGENT_KEY).',
      );
    if (model === undefined)
      throw new ConfigurationError(
        'The model is missing: pass model or set AGENTAUTH_MODEL (the AI model the agent runs on).',
      );

    const fromId = options.requestId === undefined ? undefined : requestIdFrom(options.requestId);
    const fromHtml = options.html === undefined ? undefined : requestIdFrom(options.html);
    const requestId = fromId ?? fromHtml;
    if (requestId === undefined)
      throw new InvalidInputError("Pass the request as requestId (the id or the page's HTML) or html.");
    if (fromId !== undefined && fromHtml !== undefined && fromId !== fromHtml)
      throw new InvalidInputError('requestId and html name different requests.');
    if (options.pageUrl !== undefined) {
      const pageIssuer = normalizeIssuer(issuerFromPageUrl(options.pageUrl));
      if (pageIssuer !== this.issuer)
        throw new IssuerMismatchError(
          `The page belongs to ${pageIssuer ?? 'another server'}, not to the issuer ${this.issuer}.`,
        );
    }
    for (const html of [options.html, options.requestId]) if (html?.includes('<')) this.#checkPageEndpoints(html);

    const call = budget(this.#timeoutMs, options.signal, 'signIn');
    try {
      const view = await this.#inspect(requestId, call);
      if (view.status === 'error') throw errorFromServer(view);
      // Website-chosen text (name, client_id) goes into messages quoted and labelled: an agent's
      // model reads them, and a name must not pass for an instruction (design §12).
      const website = `website (name it gives itself, unverified): ${quoteUntrusted(view.client_name)}`;
      if (expected.clientId !== undefined && expected.clientId !== view.client_id) {
        throw new RequestMismatchError(
          'request_mismatch',
          `This request is for client_id ${quoteUntrusted(view.client_id, 200)}, not ${quoteUntrusted(expected.clientId, 200)}; refused without authenticating. Its ${website}.`,
        );
      }
      if (expected.host !== undefined && expected.host.toLowerCase() !== view.redirect_host.toLowerCase()) {
        throw new RequestMismatchError(
          'request_mismatch',
          `This request sends the browser to ${view.redirect_host}, not to ${expected.host}; refused without authenticating. Its ${website}.`,
        );
      }
      if (expectation !== 'any') {
        const problem = resourceProblem(view.resource, expected.resource);
        if (problem)
          throw new RequestMismatchError(
            'request_mismatch',
            `${problem}; refused without authenticating. Its ${website}.`,
          );
      }
      // What was looked up is what gets signed in to: the server checks it in the same step.
      // A key-bound agent signs a fresh assertion for each attempt: a retry must not replay one.
      const credentials = async (): Promise<Record<string, string>> =>
        privateKey === undefined
          ? { agent_secret: agentSecret! }
          : { agent_assertion: await signAssertion(privateKey, { agentId, issuer: this.issuer, requestId }) };
      const fields = {
        request_id: requestId,
        agent_id: agentId,
        model,
        expected_client_id: expected.clientId ?? view.client_id,
        expected_redirect_host: expected.host ?? view.redirect_host,
        // When the request names one (the field takes a URI, not null): the server checks it again.
        ...(view.resource !== null ? { expected_resource: view.resource } : {}),
      };
      let unsure = false;
      let answer: unknown;
      try {
        const body = async () => ({ ...fields, ...(await credentials()) });
        answer = await this.#send('POST', '/api/agent/authenticate', requestId, call, body, (status) => {
          unsure ||= status === 503;
        });
      } catch (error) {
        // A 503 may hide an authentication that went through. Then the retry is "already used"
        // while the request is authenticated, which only this agent can have done: another
        // agent would have contested it. (Once completed, it could have been anyone.)
        if (!(unsure && error instanceof RequestAlreadyUsedError)) throw error;
        const { status } = await this.#status(requestId, call);
        if (status !== 'authenticated') throw error;
        answer = { status: 'authenticated', message: 'Agent authenticated (confirmed after a retry).' };
      }
      const {
        status: _status,
        error: _error,
        error_description: _description,
        approval_pending: _held,
        ...request
      } = view;
      if (isRecord(answer) && answer.status === 'approval_pending') {
        call.dispose(); // the lookup's and authentication's budget; the owner has the request's own
        const pending = approvalPendingOf(answer);
        options.onApprovalPending?.(pending);
        await this.#awaitApproval(requestId, pending, options);
        return {
          ...request,
          status: 'authenticated',
          message: `The agent's owner approved this sign-in; the browser will now continue to ${view.redirect_host}.`,
          approved_by_owner: true,
        };
      }
      if (!isRecord(answer) || answer.status !== 'authenticated')
        throw unexpected('The authenticate answer is not {"status":"authenticated"}.');
      return {
        ...request,
        status: 'authenticated',
        message: typeof answer.message === 'string' ? answer.message : '',
      };
    } finally {
      call.dispose();
    }
  }

  /**
   * Waits for the owner's decision on a held request: resolves once it is `authenticated` (or
   * already `completed`), throws the request's error otherwise (a denial is access_denied).
   */
  async #awaitApproval(requestId: string, pending: ApprovalPending, options: SignInOptions): Promise<void> {
    // The server ends the request at its expiry; the grace lets the last poll of a backed-off
    // schedule (30 s apart) still read that end rather than time out just before it.
    const timeoutMs = positive(options.approvalTimeoutMs, (pending.expiresIn + 35) * 1000, 'approvalTimeoutMs');
    const call = budget(timeoutMs, options.signal, 'signIn');
    try {
      await this.#follow(requestId, call, options.push !== false, (view) => {
        if (view.status === 'error') {
          const error = errorFromServer(view);
          if (!(error instanceof RequestExpiredError)) throw error;
          throw new RequestExpiredError(
            error.code,
            "The request expired before the agent's owner decided; start the sign-in again.",
          );
        }
        return view.status === 'authenticated' || view.status === 'completed' ? true : undefined;
      });
    } catch (error) {
      if (call.signal.aborted && call.signal.reason instanceof TimeoutError) {
        throw new TimeoutError(
          `The agent's owner has not decided within ${Math.round(timeoutMs / 1000)} s; request ${requestId} still waits for their approval (waitForCompletion keeps waiting).`,
        );
      }
      throw error;
    } finally {
      call.dispose();
    }
  }

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
  async waitForCompletion(
    requestIdOrHtml: string,
    options: WaitOptions = {},
  ): Promise<StatusView & { status: 'completed' }> {
    const requestId = requestIdFrom(requestIdOrHtml);
    const timeoutMs = positive(options.timeoutMs, 60_000, 'timeoutMs');
    const call = budget(timeoutMs, options.signal, 'waitForCompletion');
    let last: StatusView | undefined;
    /** The final status, or undefined to keep waiting; throws for error. */
    const observe = (view: StatusView): (StatusView & { status: 'completed' }) | undefined => {
      if (last?.status !== view.status || last.error !== view.error || last.approval_pending !== view.approval_pending)
        options.onStatus?.(view);
      last = view;
      if (view.status === 'error') throw errorFromServer(view);
      return view.status === 'completed' ? { status: 'completed' } : undefined;
    };
    try {
      return await this.#follow(requestId, call, options.push !== false, observe);
    } catch (error) {
      if (call.signal.aborted && call.signal.reason instanceof TimeoutError) {
        throw new TimeoutError(
          `Request ${requestId} did not complete within ${timeoutMs} ms; its last status was ${last?.status ?? 'unknown'}${last?.approval_pending ? " (waiting for the agent's owner to approve)" : ''}.`,
        );
      }
      throw error;
    } finally {
      call.dispose();
    }
  }

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
  async listActions(options: CallOptions = {}): Promise<AgentAction[]> {
    const call = budget(this.#timeoutMs, options.signal, 'listActions');
    try {
      return (await this.#actions(call)).actions;
    } finally {
      call.dispose();
    }
  }

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
  async waitForAction(actionId: string, options: ActionWaitOptions = {}): Promise<AgentAction> {
    if (typeof actionId !== 'string' || actionId === '') throw new InvalidInputError('Pass the action id (act_…).');
    const first = budget(this.#timeoutMs, options.signal, 'waitForAction');
    let listed: { actions: AgentAction[]; interval: number };
    try {
      listed = await this.#actions(first);
    } finally {
      first.dispose();
    }
    let action = listed.actions.find((each) => each.id === actionId);
    if (!action)
      throw new InvalidInputError(
        `No action ${actionId} waits for this agent's owner or was decided in the last ten minutes.`,
      );
    if (action.status !== 'pending') return action;
    options.onWaiting?.(action);
    const timeoutMs = positive(options.timeoutMs, (action.expires_in + 35) * 1000, 'timeoutMs');
    const call = budget(timeoutMs, options.signal, 'waitForAction');
    try {
      for (;;) {
        await sleep(listed.interval * 1000, call.signal);
        listed = await this.#actions(call);
        action = listed.actions.find((each) => each.id === actionId) ?? { ...action, status: 'expired' };
        if (action.status !== 'pending') return action;
      }
    } catch (error) {
      if (call.signal.aborted && call.signal.reason instanceof TimeoutError)
        throw new TimeoutError(
          `The agent's owner has not decided within ${Math.round(timeoutMs / 1000)} s; action ${actionId} still waits.`,
        );
      throw error;
    } finally {
      call.dispose();
    }
  }

  /** One listing of the agent's actions, with the interval the server asks a waiting agent to keep. */
  async #actions(call: Budget): Promise<{ actions: AgentAction[]; interval: number }> {
    const agentId = this.#agentId;
    const agentSecret = this.#agentSecret;
    const privateKey = this.#privateKey;
    if (agentId === undefined)
      throw new ConfigurationError('The agent id is missing: pass agentId or set AGENTAUTH_AGENT_ID.');
    if (agentSecret === undefined && privateKey === undefined)
      throw new ConfigurationError(
        'The agent secret is missing: pass agentSecret or set AGENTAUTH_AGENT_SECRET (or, for a key-bound agent, privateKey or AGENTAUTH_AGENT_KEY).',
      );
    // A key-bound agent signs a fresh assertion for each attempt (each is used once).
    const authorization = async () =>
      privateKey === undefined
        ? `Basic ${btoa(`${agentId}:${agentSecret}`)}`
        : `Bearer ${await signAssertion(privateKey, { agentId, issuer: this.issuer, requestId: ACTIONS_ASSERTION_REQUEST_ID })}`;
    const answer = await this.#send('GET', ACTIONS_PATH, undefined, call, undefined, undefined, authorization);
    if (!isRecord(answer) || !Array.isArray(answer.actions) || !answer.actions.every(isAgentAction))
      throw unexpected(`${ACTIONS_PATH} answered something that is not a list of actions.`);
    const interval =
      typeof answer.interval === 'number' && answer.interval >= 1 ? answer.interval : ACTION_POLL_SECONDS;
    return { actions: answer.actions, interval };
  }

  /**
   * Follows the request's status until `observe` returns a value (or throws): over the push
   * endpoint first when `push`, else (or when the stream fails) by polling every second for the
   * first minute, then backing off.
   */
  async #follow<T>(
    requestId: string,
    call: Budget,
    push: boolean,
    observe: (view: StatusView) => T | undefined,
  ): Promise<T> {
    const started = Date.now();
    if (call.signal.aborted) throw call.signal.reason; // its listeners will never hear it
    if (push) {
      const done = await this.#waitByPush(requestId, call, observe);
      if (done !== undefined) return done;
    }
    let backoff = BACKOFF_START_MS;
    let failures = 0;
    for (;;) {
      let view: StatusView | undefined;
      try {
        view = await this.#status(requestId, call);
        failures = 0;
      } catch (error) {
        // A dropped connection is a missed poll (a restart, a proxy); several in a row are not.
        if (!(error instanceof NetworkError) || ++failures > this.#maxRetries) throw error;
      }
      const done = view && observe(view);
      if (done !== undefined) return done;
      let wait = POLL_INTERVAL_MS;
      if (Date.now() - started >= STEADY_POLLING_MS) {
        wait = backoff;
        backoff = Math.min(backoff * 2, BACKOFF_CAP_MS);
      }
      await sleep(wait, call.signal);
    }
  }

  /** Refuses HTML whose agent endpoints name another server than the issuer. */
  #checkPageEndpoints(html: string): void {
    const endpoints = [
      ...metaContents(html, 'agent-authenticate-endpoint').map((url) => [url, '/api/agent/authenticate'] as const),
      ...metaContents(html, 'agent-status-endpoint').map((url) => [url, '/api/check-status'] as const),
    ];
    for (const [url, path] of endpoints) {
      if (canonicalUrl(url) !== canonicalUrl(this.issuer + path))
        throw new IssuerMismatchError(`The page names ${url} for its agents, which is not the issuer ${this.issuer}.`);
    }
  }

  async #inspect(requestId: string, call: Budget): Promise<RequestView> {
    const view = await this.#send('GET', '/api/agent/request', requestId, call);
    if (!isRequestView(view)) throw unexpected('The request lookup answered something that is not a request.');
    if (view.request_id !== requestId) throw unexpected('The request lookup answered for another request.');
    return { ...view, resource: view.resource ?? null };
  }

  async #status(requestId: string, call: Budget): Promise<StatusView> {
    const view = await this.#send('GET', '/api/check-status', requestId, call);
    if (!isStatusView(view)) throw unexpected('check-status answered something that is not a status.');
    return view;
  }

  /**
   * Follows the push endpoint to a final status. Returns undefined to fall back to polling: the
   * server has no push endpoint, or the stream failed or closed early.
   */
  async #waitByPush<T>(
    requestId: string,
    call: Budget,
    observe: (view: StatusView) => T | undefined,
  ): Promise<T | undefined> {
    const stream = new AbortController();
    const onAbort = () => stream.abort(call.signal.reason);
    call.signal.addEventListener('abort', onAbort, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const alive = () => {
      clearTimeout(idle);
      idle = setTimeout(() => stream.abort(new Error('The event stream went silent.')), STREAM_IDLE_MS);
    };
    try {
      alive();
      let response: Response;
      try {
        response = await this.#fetch(this.#url('/api/check-status/events', requestId), {
          headers: this.#headers({ accept: 'text/event-stream' }),
          signal: stream.signal,
          redirect: 'error',
        });
      } catch {
        if (call.signal.aborted) throw call.signal.reason;
        return undefined;
      }
      const type = response.headers.get('content-type') ?? '';
      if (!response.ok || !/^text\/event-stream\b/i.test(type) || !response.body) {
        const body = await readJson(response, stream.signal);
        // The request is unknown, or this server has no push endpoint (its 404 says not_found
        // too): check-status tells them apart, answering 404 itself for an unknown request.
        if (response.status === 404 && isRecord(body) && body.error === 'not_found')
          return observe(await this.#status(requestId, call));
        return undefined;
      }
      for await (const event of readEvents(response.body, alive, stream.signal)) {
        if (event.event !== 'status' && event.event !== 'message') continue;
        let view: unknown;
        try {
          view = JSON.parse(event.data);
        } catch {
          continue;
        }
        if (!isStatusView(view)) continue;
        const done = observe(view);
        if (done !== undefined) return done;
      }
      return undefined; // closed before a final status
    } catch (error) {
      if (call.signal.aborted) throw call.signal.reason;
      // A stream that is not agentauth's (a line or an answer past the caps) is a broken one.
      if (error instanceof AgentAuthError && !(error instanceof UnexpectedResponseError)) throw error;
      return undefined; // the stream broke or went silent: poll
    } finally {
      clearTimeout(idle);
      call.signal.removeEventListener('abort', onAbort);
      stream.abort(new Error('done'));
    }
  }

  #url(path: string, requestId: string): string {
    return `${this.issuer}${path}?request_id=${encodeURIComponent(requestId)}`;
  }

  #headers(extra: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = { ...extra };
    // Browsers set their own User-Agent; elsewhere say who is calling (the server audits it).
    if ((globalThis as { document?: unknown }).document === undefined)
      headers['user-agent'] = `agentauth-agent-js/${VERSION}`;
    return headers;
  }

  /**
   * One call to the server: the JSON body of a 2xx answer, or the typed error of any other.
   * 429 and 503 are retried after `Retry-After` (1 s when absent) up to maxRetries times while
   * the budget lasts. Redirects are refused, so the secret never goes anywhere but the issuer.
   */
  async #send(
    method: 'GET' | 'POST',
    path: string,
    /** The request a GET is about (its query), or undefined for none. */
    requestId: string | undefined,
    call: Budget,
    /** The JSON body, or what makes a fresh one for each attempt (a key-bound agent's new assertion). */
    bodyOf?: Record<string, unknown> | (() => Promise<Record<string, unknown>>),
    onRetry?: (status: number) => void,
    /** The Authorization header, made afresh for each attempt. */
    authorizationOf?: () => Promise<string>,
  ): Promise<unknown> {
    const url = method === 'GET' && requestId !== undefined ? this.#url(path, requestId) : this.issuer + path;
    for (let attempt = 0; ; attempt++) {
      const body = typeof bodyOf === 'function' ? await bodyOf() : bodyOf;
      const authorization: Record<string, string> = authorizationOf ? { authorization: await authorizationOf() } : {};
      let response: Response;
      try {
        response = await this.#fetch(url, {
          method,
          headers: this.#headers(
            body
              ? { accept: 'application/json', 'content-type': 'application/json', ...authorization }
              : { accept: 'application/json', ...authorization },
          ),
          body: body ? JSON.stringify(body) : null,
          signal: call.signal,
          redirect: 'error',
        });
      } catch (error) {
        if (call.signal.aborted) throw call.signal.reason;
        throw new NetworkError(
          `${method} ${this.issuer}${path} failed: ${error instanceof Error ? error.message : String(error)}`,
          error,
        );
      }
      const json = await readJson(response, call.signal);
      if (response.ok) {
        if (json === undefined)
          throw unexpected(`${path} answered ${response.status} without a JSON body.`, response.status);
        return json;
      }
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
      const error =
        isRecord(json) && typeof json.error === 'string'
          ? errorFromServer(json, { status: response.status, retryAfter })
          : response.status === 429 || response.status === 503
            ? errorFromServer(
                {
                  error: response.status === 429 ? 'too_many_requests' : 'temporarily_unavailable',
                  error_description: `${path} answered ${response.status}.`,
                },
                { status: response.status, retryAfter },
              )
            : unexpected(`${path} answered ${response.status} without a JSON error body.`, response.status);
      if ((response.status === 429 || response.status === 503) && attempt < this.#maxRetries) {
        const waitMs = (retryAfter ?? 1) * 1000;
        if (Date.now() + waitMs < call.deadline) {
          onRetry?.(response.status);
          await sleep(waitMs, call.signal);
          continue;
        }
      }
      throw error;
    }
  }
}

/** A URL as the URL parser writes it (scheme and host lower-cased, default port dropped), or the text itself. */
function canonicalUrl(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new ConfigurationError(`${name} must be a positive number.`);
  return value;
}

function checkedExpectation(expect: unknown): Expectation | 'any' {
  if (expect === 'any') return 'any';
  const hint =
    "Pass expect: { host, clientId } (the website you mean to sign in to), or expect: 'any' to accept any website (see RFC 10027: anyone can hand an agent a request id).";
  if (!isRecord(expect)) throw new InvalidInputError(`signIn needs an expectation. ${hint}`);
  const { host, clientId, resource } = expect;
  for (const [name, value] of [
    ['host', host],
    ['clientId', clientId],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || !/^[\x21-\x7e]{1,300}$/.test(value.trim())))
      throw new InvalidInputError(`expect.${name} must be a non-empty string of visible ASCII.`);
  }
  // As the server takes it: visible ASCII, at most 1000 characters, compared exactly.
  if (resource !== undefined && (typeof resource !== 'string' || !/^[\x21-\x7e]{1,1000}$/.test(resource)))
    throw new InvalidInputError('expect.resource must be the resource URI, visible ASCII without spaces.');
  // The resource names the tokens' audience, not the website: it cannot stand alone.
  if (host === undefined && clientId === undefined)
    throw new InvalidInputError(`signIn needs at least one expectation. ${hint}`);
  return {
    host: host as string | undefined,
    clientId: (clientId as string | undefined)?.trim(),
    resource: resource as string | undefined,
  };
}

/**
 * Why the request's resource (RFC 8707) is not what the agent expects, in plain words, or
 * undefined when it is: the same one, or none on either side.
 */
function resourceProblem(requested: string | null, expected: string | undefined): string | undefined {
  if (requested === (expected ?? null)) return undefined;
  if (expected === undefined)
    return `This request asks for tokens for the server ${quoteUntrusted(requested!, 200)}, which you did not expect (pass it as the expected resource if you mean it)`;
  if (requested === null)
    return `This request names no server for its tokens, but you expected tokens for ${quoteUntrusted(expected, 200)}`;
  return `This request asks for tokens for the server ${quoteUntrusted(requested, 200)}, not for ${quoteUntrusted(expected, 200)} which you expected`;
}
