// src/errors.ts
var AgentAuthError = class extends Error {
  /** The error code: the server's `error`, or the SDK's own for local errors. */
  code;
  /** HTTP status of the error answer; `undefined` for local errors and error statuses of a request. */
  status;
  /** The server's `error_description`, or the SDK's explanation. */
  description;
  /** Seconds the server asked to wait (`Retry-After`), when it did. */
  retryAfter;
  constructor(code, description, options = {}) {
    super(
      description ? `${code}: ${description}` : code,
      options.cause === void 0 ? void 0 : { cause: options.cause }
    );
    this.code = code;
    this.status = options.status;
    this.description = description;
    this.retryAfter = options.retryAfter;
  }
  get name() {
    return this.constructor.name;
  }
};
var ConfigurationError = class extends AgentAuthError {
  constructor(description) {
    super("configuration_error", description);
  }
};
var InvalidInputError = class extends AgentAuthError {
  constructor(description) {
    super("invalid_input", description);
  }
};
var IssuerMismatchError = class extends AgentAuthError {
  constructor(description) {
    super("issuer_mismatch", description);
  }
};
var NetworkError = class extends AgentAuthError {
  constructor(description, cause) {
    super("network_error", description, { cause });
  }
};
var TimeoutError = class extends AgentAuthError {
  constructor(description) {
    super("timeout", description);
  }
};
var UnexpectedResponseError = class extends AgentAuthError {
  constructor(description, options = {}) {
    super("unexpected_response", description, options);
  }
};
var InvalidRequestError = class extends AgentAuthError {
};
var RequestNotFoundError = class extends AgentAuthError {
};
var InvalidCredentialsError = class extends AgentAuthError {
};
var InvalidClientError = class extends AgentAuthError {
};
var AgentMismatchError = class extends AgentAuthError {
};
var RequestMismatchError = class extends AgentAuthError {
};
var RequestAlreadyUsedError = class extends AgentAuthError {
};
var RequestContestedError = class extends AgentAuthError {
};
var RequestExpiredError = class extends AgentAuthError {
};
var AccessDeniedError = class extends AgentAuthError {
};
var TooManyRequestsError = class extends AgentAuthError {
};
var UnavailableError = class extends AgentAuthError {
};
var ServerError = class extends AgentAuthError {
};
var BY_CODE = {
  invalid_request: InvalidRequestError,
  not_found: RequestNotFoundError,
  invalid_credentials: InvalidCredentialsError,
  invalid_client: InvalidClientError,
  agent_mismatch: AgentMismatchError,
  request_mismatch: RequestMismatchError,
  request_already_used: RequestAlreadyUsedError,
  request_contested: RequestContestedError,
  request_expired: RequestExpiredError,
  access_denied: AccessDeniedError,
  too_many_requests: TooManyRequestsError,
  temporarily_unavailable: UnavailableError,
  server_error: ServerError
};
function errorFromServer(body, options = {}) {
  const code = typeof body.error === "string" && body.error ? body.error : "unexpected_response";
  const description = typeof body.error_description === "string" ? body.error_description : "";
  const Class = options.status === 404 && (code === "invalid_request" || code === "not_found") ? RequestNotFoundError : BY_CODE[code] ?? AgentAuthError;
  return new Class(code, description, options);
}

// src/page.ts
var REQUEST_ID = /^req_[\x21-\x7e]{1,124}$/;
var NAMED_ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", "#39": "'" };
function decodeEntities(text) {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name) => {
    const lower = name.toLowerCase();
    if (lower.startsWith("#x")) return safeCodePoint(Number.parseInt(lower.slice(2), 16)) ?? entity;
    if (lower.startsWith("#")) return safeCodePoint(Number.parseInt(lower.slice(1), 10)) ?? entity;
    return NAMED_ENTITIES[lower] ?? entity;
  });
}
function safeCodePoint(value) {
  return Number.isInteger(value) && value >= 0 && value <= 1114111 ? String.fromCodePoint(value) : void 0;
}
function attributes(tag) {
  const found = /* @__PURE__ */ new Map();
  for (const match of tag.matchAll(/([^\s"'<>/=]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>`=]+))/g)) {
    const name = match[1].toLowerCase();
    if (!found.has(name)) found.set(name, decodeEntities(match[2] ?? match[3] ?? match[4] ?? ""));
  }
  return found;
}
function metaContents(html, name) {
  const values = [];
  for (const tag of html.match(/<meta\b[^>]*>/gi) ?? []) {
    const attrs = attributes(tag);
    if (attrs.get("name")?.toLowerCase() === name && attrs.has("content")) values.push(attrs.get("content").trim());
  }
  return values;
}
function single(values, where) {
  const distinct = [...new Set(values)];
  if (distinct.length > 1)
    throw new InvalidInputError(
      `The page names more than one request id in ${where} (${distinct.join(", ")}); refusing to guess.`
    );
  return distinct[0];
}
function requestIdFromHtml(html) {
  let id = single(metaContents(html, "request-id"), '<meta name="request-id">');
  if (id === void 0) {
    const pattern = /["']?\brequest[_-]id["']?\s*[:=]\s*["'](req_[^\s"'<>&\\]+)["']/gi;
    id = single(
      [...decodeEntities(html).matchAll(pattern)].map((match) => match[1]),
      "its script data"
    );
  }
  if (id === void 0) {
    throw new InvalidInputError(
      'No request id found in the page: it has no <meta name="request-id"> and no request_id in its data. Is it an agentauth authorization page?'
    );
  }
  if (!REQUEST_ID.test(id)) throw new InvalidInputError("The request id in the page is malformed.");
  return id;
}
function requestIdFrom(input) {
  if (typeof input !== "string")
    throw new InvalidInputError("Expected a request id (req_\u2026) or the authorization page's HTML.");
  const text = input.trim();
  if (REQUEST_ID.test(text)) return text;
  if (text.includes("<")) return requestIdFromHtml(text);
  if (/^https?:\/\//i.test(text)) {
    throw new InvalidInputError(
      "A URL does not carry the request id, and fetching /authorize would start a new request: pass the id or the page's HTML."
    );
  }
  throw new InvalidInputError(
    "Not a request id: expected req_ followed by at most 124 visible ASCII characters, or the authorization page's HTML."
  );
}
function issuerFromPageUrl(url) {
  let parsed;
  try {
    parsed = new URL(String(url));
  } catch {
    throw new InvalidInputError("The page URL is not an absolute URL.");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    throw new InvalidInputError("The page URL must be http or https.");
  const at = parsed.pathname.lastIndexOf("/authorize");
  if (at < 0 || !/^\/authorize(\/continue)?\/?$/.test(parsed.pathname.slice(at))) {
    throw new InvalidInputError("The page URL is not an authorization page (\u2026/authorize).");
  }
  return parsed.origin + parsed.pathname.slice(0, at);
}
function normalizeIssuer(issuer) {
  let parsed;
  try {
    parsed = new URL(issuer);
  } catch {
    return void 0;
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:" || parsed.search || parsed.hash || parsed.username || parsed.password)
    return void 0;
  return parsed.origin + parsed.pathname.replace(/\/+$/, "");
}
var INVISIBLE_OR_BREAKING = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
function quoteUntrusted(text, max = 100) {
  const characters = Array.from(String(text));
  const cut = characters.length > max ? `${characters.slice(0, max).join("")}\u2026` : characters.join("");
  return JSON.stringify(cut).replace(
    INVISIBLE_OR_BREAKING,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`
  );
}
function isLoopbackIssuer(issuer) {
  const host = new URL(issuer).hostname;
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

// src/keys.ts
var ASSERTION_LIFETIME = 60;
var subtle = () => {
  const value = globalThis.crypto?.subtle;
  if (!value)
    throw new ConfigurationError("Signing with a key needs WebCrypto (crypto.subtle), which is missing here.");
  return value;
};
function algorithmOf(key) {
  return key.kty === "OKP" ? { jws: "EdDSA", importAs: { name: "Ed25519" }, signAs: { name: "Ed25519" } } : { jws: "ES256", importAs: { name: "ECDSA", namedCurve: "P-256" }, signAs: { name: "ECDSA", hash: "SHA-256" } };
}
function readPrivateKey(raw) {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new ConfigurationError(
        "The private key is not JSON: give the private JWK that agentauth-agent keygen wrote."
      );
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new ConfigurationError("The private key must be a JWK: a JSON object with kty, crv, x and d.");
  const jwk = value;
  const text = (name) => typeof jwk[name] === "string" && jwk[name] !== "" ? jwk[name] : void 0;
  const [x, y, d] = [text("x"), text("y"), text("d")];
  if (d === void 0 || x === void 0)
    throw new ConfigurationError(
      'The key has no private part ("d"): give the agent its private key; its owner registers the public one.'
    );
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") return { kty: "OKP", crv: "Ed25519", x, d };
  if (jwk.kty === "EC" && jwk.crv === "P-256" && y !== void 0) return { kty: "EC", crv: "P-256", x, y, d };
  throw new ConfigurationError("Only Ed25519 (kty OKP) and P-256 (kty EC) keys can sign in.");
}
function publicKeyOf(key) {
  return key.kty === "EC" ? { kty: key.kty, crv: key.crv, x: key.x, y: key.y } : { kty: key.kty, crv: key.crv, x: key.x };
}
async function keyThumbprint(key) {
  const members = key.kty === "EC" ? `{"crv":"${key.crv}","kty":"${key.kty}","x":"${key.x}","y":"${key.y}"}` : `{"crv":"${key.crv}","kty":"${key.kty}","x":"${key.x}"}`;
  return base64url(new Uint8Array(await subtle().digest("SHA-256", new TextEncoder().encode(members))));
}
async function generateAgentKey(alg = "Ed25519") {
  const params = alg === "Ed25519" ? { name: "Ed25519" } : { name: "ECDSA", namedCurve: "P-256" };
  const pair = await subtle().generateKey(params, true, ["sign", "verify"]);
  const privateKey = readPrivateKey(await subtle().exportKey("jwk", pair.privateKey));
  return { privateKey, publicKey: publicKeyOf(privateKey) };
}
async function signAssertion(key, claims, nowMs = Date.now()) {
  const algorithm = algorithmOf(key);
  let signer;
  try {
    signer = await subtle().importKey("jwk", { ...key }, algorithm.importAs, false, ["sign"]);
  } catch (error) {
    throw new ConfigurationError(
      `The private key cannot be used: ${error instanceof Error ? error.message : String(error)}`
    );
  }
  const iat = Math.floor(nowMs / 1e3);
  const header = { alg: algorithm.jws, typ: "JWT" };
  const payload = {
    iss: claims.agentId,
    sub: claims.agentId,
    aud: claims.issuer,
    request_id: claims.requestId,
    jti: randomId(),
    iat,
    exp: iat + ASSERTION_LIFETIME
  };
  const input = `${base64url(json(header))}.${base64url(json(payload))}`;
  const signature = await subtle().sign(algorithm.signAs, signer, new TextEncoder().encode(input));
  return `${input}.${base64url(new Uint8Array(signature))}`;
}
var json = (value) => new TextEncoder().encode(JSON.stringify(value));
function base64url(bytes) {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
function randomId() {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return base64url(bytes);
}

// src/sse.ts
var MAX_LINE_LENGTH = 64 * 1024;
var MAX_EVENT_DATA_LENGTH = 64 * 1024;
var LINE_END = /[\r\n]/g;
async function* readEvents(body, onActivity = () => {
}, signal) {
  const reader = body.getReader();
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => {
  });
  signal?.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  let partial = "";
  let first = true;
  let afterCR = false;
  let event = "";
  let data = [];
  let dataLength = 0;
  try {
    for (; ; ) {
      const { value, done } = await reader.read();
      if (signal?.aborted) throw signal.reason;
      if (done) return;
      onActivity();
      let text = decoder.decode(value, { stream: true });
      if (first && text.length > 0) {
        if (text.charCodeAt(0) === 65279) text = text.slice(1);
        first = false;
      }
      let start = 0;
      if (afterCR && text.length > 0) {
        if (text.charCodeAt(0) === 10) start = 1;
        afterCR = false;
      }
      for (; ; ) {
        LINE_END.lastIndex = start;
        const end = LINE_END.exec(text)?.index ?? -1;
        if (end < 0) {
          if (partial.length + text.length - start > MAX_LINE_LENGTH) throw tooLong("line", MAX_LINE_LENGTH);
          partial += text.slice(start);
          break;
        }
        const line = partial + text.slice(start, end);
        partial = "";
        if (line.length > MAX_LINE_LENGTH) throw tooLong("line", MAX_LINE_LENGTH);
        if (text.charCodeAt(end) === 13) {
          if (end + 1 < text.length) start = text.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
          else [start, afterCR] = [end + 1, true];
        } else {
          start = end + 1;
        }
        if (line === "") {
          if (data.length > 0) yield { event: event || "message", data: data.join("\n") };
          event = "";
          data = [];
          dataLength = 0;
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let fieldValue = colon < 0 ? "" : line.slice(colon + 1);
        if (fieldValue.startsWith(" ")) fieldValue = fieldValue.slice(1);
        if (field === "event") event = fieldValue;
        else if (field === "data") {
          dataLength += fieldValue.length + 1;
          if (dataLength > MAX_EVENT_DATA_LENGTH) throw tooLong("event", MAX_EVENT_DATA_LENGTH);
          data.push(fieldValue);
        }
      }
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    reader.cancel().catch(() => {
    });
  }
}
function tooLong(what, limit) {
  return new UnexpectedResponseError(
    `The event stream sent ${what === "line" ? "a line" : "an event"} longer than ${limit} characters; it is not an agentauth stream.`
  );
}

// src/client.ts
var VERSION = "0.1.0";
var ACTIONS_PATH = "/api/agent/actions";
var ACTIONS_ASSERTION_REQUEST_ID = "agent-actions";
var ACTION_POLL_SECONDS = 5;
function isAgentAction(value) {
  return isRecord(value) && typeof value.id === "string" && typeof value.client_name === "string" && typeof value.message === "string" && Array.isArray(value.words) && typeof value.status === "string" && typeof value.expires_at === "number";
}
var POLL_INTERVAL_MS = 1e3;
var STEADY_POLLING_MS = 6e4;
var BACKOFF_START_MS = 2e3;
var BACKOFF_CAP_MS = 3e4;
var STREAM_IDLE_MS = 4e4;
function budget(timeoutMs, callerSignal, what) {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new TimeoutError(`${what} did not finish within ${timeoutMs} ms.`)),
    timeoutMs
  );
  const onAbort = () => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) controller.abort(callerSignal.reason);
  else callerSignal?.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    deadline: Date.now() + timeoutMs,
    dispose() {
      clearTimeout(timer);
      callerSignal?.removeEventListener("abort", onAbort);
    }
  };
}
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
function parseRetryAfter(value) {
  if (value === null) return void 0;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? void 0 : Math.max(0, Math.ceil((date - Date.now()) / 1e3));
}
var MAX_BODY_BYTES = 64 * 1024;
async function readText(response, signal) {
  const tooLarge = () => new UnexpectedResponseError(
    `The server answered more than ${MAX_BODY_BYTES} bytes; no agentauth answer is that large.`,
    { status: response.status }
  );
  if (Number(response.headers.get("content-length")) > MAX_BODY_BYTES) {
    response.body?.cancel().catch(() => {
    });
    throw tooLarge();
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const onAbort = () => void reader.cancel(signal.reason).catch(() => {
  });
  signal.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  try {
    for (; ; ) {
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
      error
    );
  } finally {
    signal.removeEventListener("abort", onAbort);
    reader.cancel().catch(() => {
    });
  }
}
async function readJson(response, signal) {
  const text = await readText(response, signal);
  try {
    return JSON.parse(text);
  } catch {
    return void 0;
  }
}
function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
var STATUSES = ["pending", "authenticated", "completed", "error"];
function isStatusView(value) {
  return isRecord(value) && typeof value.status === "string" && STATUSES.includes(value.status);
}
function isRequestView(value) {
  const resource = isRecord(value) ? value.resource : void 0;
  return isStatusView(value) && ["request_id", "client_id", "client_name", "redirect_host", "scope"].every(
    (field) => typeof value[field] === "string"
  ) && typeof value.expires_at === "number" && // A server older than resource indicators has no `resource`: it issues no such tokens.
  (resource === void 0 || resource === null || typeof resource === "string");
}
function approvalPendingOf(answer) {
  const { message, approval_id: approvalId, expires_at: expiresAt, expires_in: expiresIn } = answer;
  if (typeof message !== "string" || typeof approvalId !== "string" || typeof expiresAt !== "number" || typeof expiresIn !== "number" || !Number.isFinite(expiresIn) || expiresIn < 0)
    throw unexpected("The approval_pending answer lacks its message, approval_id, expires_at or expires_in.", 202);
  return { message, approvalId, expiresAt, expiresIn };
}
function unexpected(description, status) {
  return new UnexpectedResponseError(description, status === void 0 ? {} : { status });
}
function environment(name) {
  try {
    const value = globalThis.process?.env?.[name];
    return value === "" ? void 0 : value;
  } catch {
    return void 0;
  }
}
function optionalText(value, name) {
  if (value === void 0 || value === null || value === "") return void 0;
  if (typeof value !== "string") throw new ConfigurationError(`${name} must be a string.`);
  return value;
}
function expectedHost(value) {
  if (!value.includes("://")) return value.trim();
  try {
    return new URL(value).host;
  } catch {
    throw new InvalidInputError("expect.host is neither a host nor a URL.");
  }
}
var AgentAuth = class {
  /** The issuer, canonical: no trailing slash. */
  issuer;
  #agentId;
  #agentSecret;
  #privateKey;
  #model;
  #fetch;
  #timeoutMs;
  #maxRetries;
  constructor(options = {}) {
    const issuer = optionalText(options.issuer, "issuer") ?? environment("AGENTAUTH_ISSUER");
    if (issuer === void 0)
      throw new ConfigurationError(
        "The issuer is missing: pass issuer or set AGENTAUTH_ISSUER to the agentauth server's URL."
      );
    const canonical = normalizeIssuer(issuer);
    if (canonical === void 0)
      throw new ConfigurationError(
        "The issuer must be an absolute http(s) URL without query, fragment or credentials."
      );
    if (canonical.startsWith("http:") && options.allowInsecureHttp !== true && !isLoopbackIssuer(canonical)) {
      throw new ConfigurationError(
        "The issuer uses plain http on another host; the agent secret would travel in clear. Use https, or pass allowInsecureHttp: true on a network you trust."
      );
    }
    this.issuer = canonical;
    this.#agentId = optionalText(options.agentId, "agentId") ?? environment("AGENTAUTH_AGENT_ID");
    const secret = optionalText(options.agentSecret, "agentSecret");
    const key = options.privateKey === void 0 || options.privateKey === null ? void 0 : options.privateKey;
    if (secret !== void 0 && key !== void 0)
      throw new ConfigurationError("Pass agentSecret or privateKey, not both.");
    const fromEnvironment = secret === void 0 && key === void 0;
    const secretEnv = fromEnvironment ? environment("AGENTAUTH_AGENT_SECRET") : void 0;
    const keyEnv = fromEnvironment ? environment("AGENTAUTH_AGENT_KEY") : void 0;
    if (secretEnv !== void 0 && keyEnv !== void 0)
      throw new ConfigurationError("Both AGENTAUTH_AGENT_SECRET and AGENTAUTH_AGENT_KEY are set: keep one.");
    this.#agentSecret = secret ?? secretEnv;
    const privateKey = key ?? keyEnv;
    this.#privateKey = privateKey === void 0 ? void 0 : readPrivateKey(privateKey);
    this.#model = optionalText(options.model, "model") ?? environment("AGENTAUTH_MODEL");
    const custom = options.fetch;
    if (custom !== void 0 && typeof custom !== "function") throw new ConfigurationError("fetch must be a function.");
    this.#fetch = custom ?? ((input, init) => globalThis.fetch(input, init));
    this.#timeoutMs = positive(options.timeoutMs, 3e4, "timeoutMs");
    const maxRetries = options.maxRetries ?? 3;
    if (!Number.isInteger(maxRetries) || maxRetries < 0)
      throw new ConfigurationError("maxRetries must be a whole number >= 0.");
    this.#maxRetries = maxRetries;
  }
  /** The agent id in use, if any (it is public: the `sub` of the agent's tokens). */
  get agentId() {
    return this.#agentId;
  }
  /** The model name sent when signing in, if any. */
  get model() {
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
  async inspect(requestIdOrHtml, options = {}) {
    const requestId = requestIdFrom(requestIdOrHtml);
    const call = budget(this.#timeoutMs, options.signal, "inspect");
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
  async checkStatus(requestIdOrHtml, options = {}) {
    const requestId = requestIdFrom(requestIdOrHtml);
    const call = budget(this.#timeoutMs, options.signal, "checkStatus");
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
  async signIn(options) {
    const expectation = checkedExpectation(options?.expect);
    const expected = {
      clientId: expectation === "any" ? void 0 : expectation.clientId,
      host: expectation === "any" || expectation.host === void 0 ? void 0 : expectedHost(expectation.host),
      resource: expectation === "any" ? void 0 : expectation.resource
    };
    positive(options.approvalTimeoutMs, 1, "approvalTimeoutMs");
    const agentId = this.#agentId;
    const agentSecret = this.#agentSecret;
    const privateKey = this.#privateKey;
    const model = this.#model;
    if (agentId === void 0)
      throw new ConfigurationError("The agent id is missing: pass agentId or set AGENTAUTH_AGENT_ID.");
    if (agentSecret === void 0 && privateKey === void 0)
      throw new ConfigurationError(
        "The agent secret is missing: pass agentSecret or set AGENTAUTH_AGENT_SECRET (or, for a key-bound agent, privateKey or AGENTAUTH_AGENT_KEY)."
      );
    if (model === void 0)
      throw new ConfigurationError(
        "The model is missing: pass model or set AGENTAUTH_MODEL (the AI model the agent runs on)."
      );
    const fromId = options.requestId === void 0 ? void 0 : requestIdFrom(options.requestId);
    const fromHtml = options.html === void 0 ? void 0 : requestIdFrom(options.html);
    const requestId = fromId ?? fromHtml;
    if (requestId === void 0)
      throw new InvalidInputError("Pass the request as requestId (the id or the page's HTML) or html.");
    if (fromId !== void 0 && fromHtml !== void 0 && fromId !== fromHtml)
      throw new InvalidInputError("requestId and html name different requests.");
    if (options.pageUrl !== void 0) {
      const pageIssuer = normalizeIssuer(issuerFromPageUrl(options.pageUrl));
      if (pageIssuer !== this.issuer)
        throw new IssuerMismatchError(
          `The page belongs to ${pageIssuer ?? "another server"}, not to the issuer ${this.issuer}.`
        );
    }
    for (const html of [options.html, options.requestId]) if (html?.includes("<")) this.#checkPageEndpoints(html);
    const call = budget(this.#timeoutMs, options.signal, "signIn");
    try {
      const view = await this.#inspect(requestId, call);
      if (view.status === "error") throw errorFromServer(view);
      const website = `website (name it gives itself, unverified): ${quoteUntrusted(view.client_name)}`;
      if (expected.clientId !== void 0 && expected.clientId !== view.client_id) {
        throw new RequestMismatchError(
          "request_mismatch",
          `This request is for client_id ${quoteUntrusted(view.client_id, 200)}, not ${quoteUntrusted(expected.clientId, 200)}; refused without authenticating. Its ${website}.`
        );
      }
      if (expected.host !== void 0 && expected.host.toLowerCase() !== view.redirect_host.toLowerCase()) {
        throw new RequestMismatchError(
          "request_mismatch",
          `This request sends the browser to ${view.redirect_host}, not to ${expected.host}; refused without authenticating. Its ${website}.`
        );
      }
      if (expectation !== "any") {
        const problem = resourceProblem(view.resource, expected.resource);
        if (problem)
          throw new RequestMismatchError(
            "request_mismatch",
            `${problem}; refused without authenticating. Its ${website}.`
          );
      }
      const credentials = async () => privateKey === void 0 ? { agent_secret: agentSecret } : { agent_assertion: await signAssertion(privateKey, { agentId, issuer: this.issuer, requestId }) };
      const fields = {
        request_id: requestId,
        agent_id: agentId,
        model,
        expected_client_id: expected.clientId ?? view.client_id,
        expected_redirect_host: expected.host ?? view.redirect_host,
        // When the request names one (the field takes a URI, not null): the server checks it again.
        ...view.resource !== null ? { expected_resource: view.resource } : {}
      };
      let unsure = false;
      let answer;
      try {
        const body = async () => ({ ...fields, ...await credentials() });
        answer = await this.#send("POST", "/api/agent/authenticate", requestId, call, body, (status) => {
          unsure ||= status === 503;
        });
      } catch (error) {
        if (!(unsure && error instanceof RequestAlreadyUsedError)) throw error;
        const { status } = await this.#status(requestId, call);
        if (status !== "authenticated") throw error;
        answer = { status: "authenticated", message: "Agent authenticated (confirmed after a retry)." };
      }
      const {
        status: _status,
        error: _error,
        error_description: _description,
        approval_pending: _held,
        ...request
      } = view;
      if (isRecord(answer) && answer.status === "approval_pending") {
        call.dispose();
        const pending = approvalPendingOf(answer);
        options.onApprovalPending?.(pending);
        await this.#awaitApproval(requestId, pending, options);
        return {
          ...request,
          status: "authenticated",
          message: `The agent's owner approved this sign-in; the browser will now continue to ${view.redirect_host}.`,
          approved_by_owner: true
        };
      }
      if (!isRecord(answer) || answer.status !== "authenticated")
        throw unexpected('The authenticate answer is not {"status":"authenticated"}.');
      return {
        ...request,
        status: "authenticated",
        message: typeof answer.message === "string" ? answer.message : ""
      };
    } finally {
      call.dispose();
    }
  }
  /**
   * Waits for the owner's decision on a held request: resolves once it is `authenticated` (or
   * already `completed`), throws the request's error otherwise (a denial is access_denied).
   */
  async #awaitApproval(requestId, pending, options) {
    const timeoutMs = positive(options.approvalTimeoutMs, (pending.expiresIn + 35) * 1e3, "approvalTimeoutMs");
    const call = budget(timeoutMs, options.signal, "signIn");
    try {
      await this.#follow(requestId, call, options.push !== false, (view) => {
        if (view.status === "error") {
          const error = errorFromServer(view);
          if (!(error instanceof RequestExpiredError)) throw error;
          throw new RequestExpiredError(
            error.code,
            "The request expired before the agent's owner decided; start the sign-in again."
          );
        }
        return view.status === "authenticated" || view.status === "completed" ? true : void 0;
      });
    } catch (error) {
      if (call.signal.aborted && call.signal.reason instanceof TimeoutError) {
        throw new TimeoutError(
          `The agent's owner has not decided within ${Math.round(timeoutMs / 1e3)} s; request ${requestId} still waits for their approval (waitForCompletion keeps waiting).`
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
  async waitForCompletion(requestIdOrHtml, options = {}) {
    const requestId = requestIdFrom(requestIdOrHtml);
    const timeoutMs = positive(options.timeoutMs, 6e4, "timeoutMs");
    const call = budget(timeoutMs, options.signal, "waitForCompletion");
    let last;
    const observe = (view) => {
      if (last?.status !== view.status || last.error !== view.error || last.approval_pending !== view.approval_pending)
        options.onStatus?.(view);
      last = view;
      if (view.status === "error") throw errorFromServer(view);
      return view.status === "completed" ? { status: "completed" } : void 0;
    };
    try {
      return await this.#follow(requestId, call, options.push !== false, observe);
    } catch (error) {
      if (call.signal.aborted && call.signal.reason instanceof TimeoutError) {
        throw new TimeoutError(
          `Request ${requestId} did not complete within ${timeoutMs} ms; its last status was ${last?.status ?? "unknown"}${last?.approval_pending ? " (waiting for the agent's owner to approve)" : ""}.`
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
  async listActions(options = {}) {
    const call = budget(this.#timeoutMs, options.signal, "listActions");
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
  async waitForAction(actionId, options = {}) {
    if (typeof actionId !== "string" || actionId === "") throw new InvalidInputError("Pass the action id (act_\u2026).");
    const first = budget(this.#timeoutMs, options.signal, "waitForAction");
    let listed;
    try {
      listed = await this.#actions(first);
    } finally {
      first.dispose();
    }
    let action = listed.actions.find((each) => each.id === actionId);
    if (!action)
      throw new InvalidInputError(
        `No action ${actionId} waits for this agent's owner or was decided in the last ten minutes.`
      );
    if (action.status !== "pending") return action;
    options.onWaiting?.(action);
    const timeoutMs = positive(options.timeoutMs, (action.expires_in + 35) * 1e3, "timeoutMs");
    const call = budget(timeoutMs, options.signal, "waitForAction");
    try {
      for (; ; ) {
        await sleep(listed.interval * 1e3, call.signal);
        listed = await this.#actions(call);
        action = listed.actions.find((each) => each.id === actionId) ?? { ...action, status: "expired" };
        if (action.status !== "pending") return action;
      }
    } catch (error) {
      if (call.signal.aborted && call.signal.reason instanceof TimeoutError)
        throw new TimeoutError(
          `The agent's owner has not decided within ${Math.round(timeoutMs / 1e3)} s; action ${actionId} still waits.`
        );
      throw error;
    } finally {
      call.dispose();
    }
  }
  /** One listing of the agent's actions, with the interval the server asks a waiting agent to keep. */
  async #actions(call) {
    const agentId = this.#agentId;
    const agentSecret = this.#agentSecret;
    const privateKey = this.#privateKey;
    if (agentId === void 0)
      throw new ConfigurationError("The agent id is missing: pass agentId or set AGENTAUTH_AGENT_ID.");
    if (agentSecret === void 0 && privateKey === void 0)
      throw new ConfigurationError(
        "The agent secret is missing: pass agentSecret or set AGENTAUTH_AGENT_SECRET (or, for a key-bound agent, privateKey or AGENTAUTH_AGENT_KEY)."
      );
    const authorization = async () => privateKey === void 0 ? `Basic ${btoa(`${agentId}:${agentSecret}`)}` : `Bearer ${await signAssertion(privateKey, { agentId, issuer: this.issuer, requestId: ACTIONS_ASSERTION_REQUEST_ID })}`;
    const answer = await this.#send("GET", ACTIONS_PATH, void 0, call, void 0, void 0, authorization);
    if (!isRecord(answer) || !Array.isArray(answer.actions) || !answer.actions.every(isAgentAction))
      throw unexpected(`${ACTIONS_PATH} answered something that is not a list of actions.`);
    const interval = typeof answer.interval === "number" && answer.interval >= 1 ? answer.interval : ACTION_POLL_SECONDS;
    return { actions: answer.actions, interval };
  }
  /**
   * Follows the request's status until `observe` returns a value (or throws): over the push
   * endpoint first when `push`, else (or when the stream fails) by polling every second for the
   * first minute, then backing off.
   */
  async #follow(requestId, call, push, observe) {
    const started = Date.now();
    if (call.signal.aborted) throw call.signal.reason;
    if (push) {
      const done = await this.#waitByPush(requestId, call, observe);
      if (done !== void 0) return done;
    }
    let backoff = BACKOFF_START_MS;
    let failures = 0;
    for (; ; ) {
      let view;
      try {
        view = await this.#status(requestId, call);
        failures = 0;
      } catch (error) {
        if (!(error instanceof NetworkError) || ++failures > this.#maxRetries) throw error;
      }
      const done = view && observe(view);
      if (done !== void 0) return done;
      let wait = POLL_INTERVAL_MS;
      if (Date.now() - started >= STEADY_POLLING_MS) {
        wait = backoff;
        backoff = Math.min(backoff * 2, BACKOFF_CAP_MS);
      }
      await sleep(wait, call.signal);
    }
  }
  /** Refuses HTML whose agent endpoints name another server than the issuer. */
  #checkPageEndpoints(html) {
    const endpoints = [
      ...metaContents(html, "agent-authenticate-endpoint").map((url) => [url, "/api/agent/authenticate"]),
      ...metaContents(html, "agent-status-endpoint").map((url) => [url, "/api/check-status"])
    ];
    for (const [url, path] of endpoints) {
      if (canonicalUrl(url) !== canonicalUrl(this.issuer + path))
        throw new IssuerMismatchError(`The page names ${url} for its agents, which is not the issuer ${this.issuer}.`);
    }
  }
  async #inspect(requestId, call) {
    const view = await this.#send("GET", "/api/agent/request", requestId, call);
    if (!isRequestView(view)) throw unexpected("The request lookup answered something that is not a request.");
    if (view.request_id !== requestId) throw unexpected("The request lookup answered for another request.");
    return { ...view, resource: view.resource ?? null };
  }
  async #status(requestId, call) {
    const view = await this.#send("GET", "/api/check-status", requestId, call);
    if (!isStatusView(view)) throw unexpected("check-status answered something that is not a status.");
    return view;
  }
  /**
   * Follows the push endpoint to a final status. Returns undefined to fall back to polling: the
   * server has no push endpoint, or the stream failed or closed early.
   */
  async #waitByPush(requestId, call, observe) {
    const stream = new AbortController();
    const onAbort = () => stream.abort(call.signal.reason);
    call.signal.addEventListener("abort", onAbort, { once: true });
    let idle;
    const alive = () => {
      clearTimeout(idle);
      idle = setTimeout(() => stream.abort(new Error("The event stream went silent.")), STREAM_IDLE_MS);
    };
    try {
      alive();
      let response;
      try {
        response = await this.#fetch(this.#url("/api/check-status/events", requestId), {
          headers: this.#headers({ accept: "text/event-stream" }),
          signal: stream.signal,
          redirect: "error"
        });
      } catch {
        if (call.signal.aborted) throw call.signal.reason;
        return void 0;
      }
      const type = response.headers.get("content-type") ?? "";
      if (!response.ok || !/^text\/event-stream\b/i.test(type) || !response.body) {
        const body = await readJson(response, stream.signal);
        if (response.status === 404 && isRecord(body) && body.error === "not_found")
          return observe(await this.#status(requestId, call));
        return void 0;
      }
      for await (const event of readEvents(response.body, alive, stream.signal)) {
        if (event.event !== "status" && event.event !== "message") continue;
        let view;
        try {
          view = JSON.parse(event.data);
        } catch {
          continue;
        }
        if (!isStatusView(view)) continue;
        const done = observe(view);
        if (done !== void 0) return done;
      }
      return void 0;
    } catch (error) {
      if (call.signal.aborted) throw call.signal.reason;
      if (error instanceof AgentAuthError && !(error instanceof UnexpectedResponseError)) throw error;
      return void 0;
    } finally {
      clearTimeout(idle);
      call.signal.removeEventListener("abort", onAbort);
      stream.abort(new Error("done"));
    }
  }
  #url(path, requestId) {
    return `${this.issuer}${path}?request_id=${encodeURIComponent(requestId)}`;
  }
  #headers(extra) {
    const headers = { ...extra };
    if (globalThis.document === void 0)
      headers["user-agent"] = `agentauth-agent-js/${VERSION}`;
    return headers;
  }
  /**
   * One call to the server: the JSON body of a 2xx answer, or the typed error of any other.
   * 429 and 503 are retried after `Retry-After` (1 s when absent) up to maxRetries times while
   * the budget lasts. Redirects are refused, so the secret never goes anywhere but the issuer.
   */
  async #send(method, path, requestId, call, bodyOf, onRetry, authorizationOf) {
    const url = method === "GET" && requestId !== void 0 ? this.#url(path, requestId) : this.issuer + path;
    for (let attempt = 0; ; attempt++) {
      const body = typeof bodyOf === "function" ? await bodyOf() : bodyOf;
      const authorization = authorizationOf ? { authorization: await authorizationOf() } : {};
      let response;
      try {
        response = await this.#fetch(url, {
          method,
          headers: this.#headers(
            body ? { accept: "application/json", "content-type": "application/json", ...authorization } : { accept: "application/json", ...authorization }
          ),
          body: body ? JSON.stringify(body) : null,
          signal: call.signal,
          redirect: "error"
        });
      } catch (error2) {
        if (call.signal.aborted) throw call.signal.reason;
        throw new NetworkError(
          `${method} ${this.issuer}${path} failed: ${error2 instanceof Error ? error2.message : String(error2)}`,
          error2
        );
      }
      const json2 = await readJson(response, call.signal);
      if (response.ok) {
        if (json2 === void 0)
          throw unexpected(`${path} answered ${response.status} without a JSON body.`, response.status);
        return json2;
      }
      const retryAfter = parseRetryAfter(response.headers.get("retry-after"));
      const error = isRecord(json2) && typeof json2.error === "string" ? errorFromServer(json2, { status: response.status, retryAfter }) : response.status === 429 || response.status === 503 ? errorFromServer(
        {
          error: response.status === 429 ? "too_many_requests" : "temporarily_unavailable",
          error_description: `${path} answered ${response.status}.`
        },
        { status: response.status, retryAfter }
      ) : unexpected(`${path} answered ${response.status} without a JSON error body.`, response.status);
      if ((response.status === 429 || response.status === 503) && attempt < this.#maxRetries) {
        const waitMs = (retryAfter ?? 1) * 1e3;
        if (Date.now() + waitMs < call.deadline) {
          onRetry?.(response.status);
          await sleep(waitMs, call.signal);
          continue;
        }
      }
      throw error;
    }
  }
};
function canonicalUrl(url) {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}
function positive(value, fallback, name) {
  if (value === void 0) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0)
    throw new ConfigurationError(`${name} must be a positive number.`);
  return value;
}
function checkedExpectation(expect) {
  if (expect === "any") return "any";
  const hint = "Pass expect: { host, clientId } (the website you mean to sign in to), or expect: 'any' to accept any website (see RFC 10027: anyone can hand an agent a request id).";
  if (!isRecord(expect)) throw new InvalidInputError(`signIn needs an expectation. ${hint}`);
  const { host, clientId, resource } = expect;
  for (const [name, value] of [
    ["host", host],
    ["clientId", clientId]
  ]) {
    if (value !== void 0 && (typeof value !== "string" || !/^[\x21-\x7e]{1,300}$/.test(value.trim())))
      throw new InvalidInputError(`expect.${name} must be a non-empty string of visible ASCII.`);
  }
  if (resource !== void 0 && (typeof resource !== "string" || !/^[\x21-\x7e]{1,1000}$/.test(resource)))
    throw new InvalidInputError("expect.resource must be the resource URI, visible ASCII without spaces.");
  if (host === void 0 && clientId === void 0)
    throw new InvalidInputError(`signIn needs at least one expectation. ${hint}`);
  return {
    host,
    clientId: clientId?.trim(),
    resource
  };
}
function resourceProblem(requested, expected) {
  if (requested === (expected ?? null)) return void 0;
  if (expected === void 0)
    return `This request asks for tokens for the server ${quoteUntrusted(requested, 200)}, which you did not expect (pass it as the expected resource if you mean it)`;
  if (requested === null)
    return `This request names no server for its tokens, but you expected tokens for ${quoteUntrusted(expected, 200)}`;
  return `This request asks for tokens for the server ${quoteUntrusted(requested, 200)}, not for ${quoteUntrusted(expected, 200)} which you expected`;
}
export {
  AccessDeniedError,
  AgentAuth,
  AgentAuthError,
  AgentMismatchError,
  ConfigurationError,
  InvalidClientError,
  InvalidCredentialsError,
  InvalidInputError,
  InvalidRequestError,
  IssuerMismatchError,
  NetworkError,
  RequestAlreadyUsedError,
  RequestContestedError,
  RequestExpiredError,
  RequestMismatchError,
  RequestNotFoundError,
  ServerError,
  TimeoutError,
  TooManyRequestsError,
  UnavailableError,
  UnexpectedResponseError,
  VERSION,
  errorFromServer,
  generateAgentKey,
  issuerFromPageUrl,
  keyThumbprint,
  publicKeyOf,
  quoteUntrusted,
  readPrivateKey,
  requestIdFrom,
  signAssertion
};
