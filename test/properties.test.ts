/**
 * Property-based tests (fast-check) of the HTTP surface, over real HTTP against a real server:
 * whatever a caller sends, the server answers with a documented status and the documented
 * shape, never 5xx, never a stack trace, and GET /authorize never redirects.
 *
 * Where docs/contract.md / docs/design.md decide the outcome of a generated request, the properties check it
 * exactly (a model of the rules); where they leave it open (for instance a 3000-character
 * state), only the invariants are checked.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAgentStatus } from '../src/domain/agents.ts';
import { setClientStatus } from '../src/domain/clients.ts';
import {
  authenticate,
  metaContent,
  obtainCode,
  obtainTokens,
  type Party,
  setupParty,
  startFlow,
} from './helpers/flow.ts';
import { startTestServer, TEST_JWT_SECRET, type TestServer } from './helpers/server.ts';

// ---------------------------------------------------------------------------------------------
// The server and the parties

const REGISTERED = 'http://localhost:8080/callback';

let server: TestServer;
/** The client, its redirect URI and an active agent (agent "A"). */
let party: Party;
/** A second active agent ("B"), a disabled agent, another active client and an inactive client. */
let agentB: { agentId: string; agentSecret: string };
let disabledAgent: { agentId: string; agentSecret: string };
let otherClient: { clientId: string; clientSecret: string };
let inactiveClient: { clientId: string; clientSecret: string };
/** A request that agent A has already authenticated (409 on a second authentication). */
let usedRequestId: string;
/** Real artifacts of `party` for the token endpoints (they go stale as the properties use them). */
let tokenArtifacts: { code: string; verifier: string; accessToken: string; refreshToken: string };
/** An access token of the other client, used (only mutated) at /userinfo and never revoked. */
let userinfoToken: string;

beforeAll(async () => {
  // Throttling of failed agent authentications would turn the generated failures into 429s.
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '100000', AUTH_FAILURES_PER_IP: '100000' } });
  party = await setupParty(server, { redirectUris: [REGISTERED] });
  agentB = await server.createAgent();
  disabledAgent = await server.createAgent();
  await setAgentStatus(server.ctx, disabledAgent.agentId, 'disabled');
  otherClient = await server.createClient({ redirectUris: [REGISTERED] });
  inactiveClient = await server.createClient({ redirectUris: [REGISTERED] });
  await setClientStatus(server.ctx, inactiveClient.clientId, 'inactive');

  const used = await startFlow(server, party);
  expect((await authenticate(server, party, used.requestId)).status).toBe(200);
  usedRequestId = used.requestId;

  const { code, verifier } = await obtainCode(server, party);
  const tokens = await obtainTokens(server, party);
  tokenArtifacts = { code, verifier, accessToken: tokens.access_token, refreshToken: tokens.refresh_token };
  userinfoToken = (await obtainTokens(server, { ...party, ...otherClient })).access_token;
});
afterAll(() => server?.close());

// ---------------------------------------------------------------------------------------------
// Shared checks

/** Stack-frame text ("    at fn (file.ts:12:3)", "node:internal/…", "/src/x.ts:10"). Plain prose such as "64 KiB at most" is not one. */
const STACK_TRACE = /\n\s+at |\bat \S+ \(|\.[cm]?[jt]s:\d+|node:internal|file:\/\//;

const ERROR_STATUSES_JSON = [400, 401, 404, 409, 413, 415, 429];

/** Characters outside printable ASCII as \uXXXX, so that invisible ones (C1 controls, soft hyphen…) show in a report. */
const visible = (value: string) =>
  value.replace(/[^\x20-\x7e\n]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

function describeExchange(request: string, response: Response, text: string): string {
  const headers = [...response.headers].filter(
    ([name]) => !['date', 'connection', 'keep-alive', 'content-security-policy'].includes(name),
  );
  return visible(`${request}\n→ ${response.status} ${JSON.stringify(headers)}\n${text.slice(0, 600)}`);
}

/** The documented error body: exactly { error: string, error_description: string }, as JSON, no stack trace. */
function expectErrorBody(
  text: string,
  response: Response,
  context: string,
): { error: string; error_description: string } {
  expect(text, context).not.toMatch(STACK_TRACE);
  expect(response.headers.get('content-type') ?? '', context).toMatch(/^application\/json/);
  let body: unknown;
  expect(() => (body = JSON.parse(text)), context).not.toThrow();
  expect(body !== null && typeof body === 'object' && !Array.isArray(body), context).toBe(true);
  const record = body as Record<string, unknown>;
  expect(Object.keys(record).sort(), context).toEqual(['error', 'error_description']);
  expect(typeof record.error, context).toBe('string');
  expect(typeof record.error_description, context).toBe('string');
  expect((record.error as string).length, context).toBeGreaterThan(0);
  return record as { error: string; error_description: string };
}

function expectNoServerError(response: Response, context: string): void {
  expect(response.status, context).toBeGreaterThanOrEqual(200);
  expect(response.status, context).toBeLessThan(500);
  expect(response.headers.get('location'), context).toBeNull();
}

// ---------------------------------------------------------------------------------------------
// Generators shared by the properties

const char = (min: number, max: number) => fc.integer({ min, max }).map((c) => String.fromCharCode(c));
const printableChar = char(0x20, 0x7e);
/** C0 controls, DEL and C1 controls. */
const controlChar = fc.oneof(char(0x00, 0x1f), fc.constant('\x7f'), char(0x80, 0x9f));
const nonAsciiChar = fc.oneof(
  char(0xa0, 0xff),
  fc.integer({ min: 0x100, max: 0x10ffff }).map((cp) => String.fromCodePoint(cp)),
  fc.constantFrom('é', 'ı', '\u212a', 'ﬀ', 'Ⓛ', 'ｌ', '\u200b', '\ufeff', '\u2028', '\u202e', '𝔞', '🙂', '\ud800'),
);
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const b64Char = fc.constantFrom(...B64URL);

const printable = (constraints: { minLength?: number; maxLength?: number } = {}) =>
  fc.string({ unit: printableChar, ...constraints });
const b64 = (minLength: number, maxLength = minLength) => fc.string({ unit: b64Char, minLength, maxLength });
/** Anything: printable, control and non-ASCII characters (including a lone surrogate). */
const weird = fc.string({ unit: fc.oneof(printableChar, controlChar, nonAsciiChar), maxLength: 40 });
const withControl = fc
  .tuple(printable({ maxLength: 10 }), controlChar, printable({ maxLength: 10 }))
  .map(([a, c, b]) => a + c + b);
const nonAscii = fc
  .tuple(printable({ maxLength: 8 }), fc.string({ unit: nonAsciiChar, minLength: 1, maxLength: 8 }))
  .map(([a, b]) => a + b);
/** 100 to 5000 characters: a few arbitrary printable ones, then filler. */
const long = fc
  .tuple(fc.integer({ min: 100, max: 5000 }), printable({ maxLength: 8 }))
  .map(([n, head]) => (head + 'a'.repeat(n)).slice(0, n));
/** What a client may put in state: printable and non-ASCII text, no control characters. */
const opaqueText = fc.string({ unit: fc.oneof(printableChar, nonAsciiChar), minLength: 1, maxLength: 64 });
/** Strings that are wrong for almost any parameter. */
const badString = fc.oneof(fc.constant(''), weird, withControl, nonAscii, long);

/** What the server receives for a string sent through URLSearchParams or JSON text (lone surrogates become U+FFFD). */
const wellFormed = (value: string) => Buffer.from(value, 'utf8').toString('utf8');
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const hasControl = (value: string) => /[\x00-\x1f\x7f-\x9f]/.test(value);
const codePoints = (value: string) => [...value].length;

const SCOPES = ['openid', 'email', 'profile'];
const validScope = fc
  .tuple(fc.subarray(SCOPES, { minLength: 1 }), fc.constantFrom(' ', '  '), fc.boolean(), fc.boolean())
  .map(
    ([values, separator, lead, duplicate]) =>
      (lead ? ' ' : '') + [...values, ...(duplicate ? [values[0]!] : [])].join(separator),
  );
const badScope = fc.oneof(
  fc.constantFrom(
    'offline_access',
    'openid offline_access',
    'admin',
    'openid\temail',
    'OPENID',
    'openid,email',
    'openid+email',
    'email profile write',
    '*',
  ),
  fc
    .tuple(
      fc.subarray(SCOPES),
      printable({ minLength: 1, maxLength: 12 }).filter((s) => !/\s/.test(s) && !SCOPES.includes(s)),
    )
    .map(([known, unknown]) => [...known, unknown].join(' ')),
);

/** A valid PKCE challenge: BASE64URL(SHA-256(verifier)). */
const validChallenge = fc
  .uint8Array({ minLength: 1, maxLength: 64 })
  .map((bytes) => createHash('sha256').update(bytes).digest('base64url'));

/** fetch refuses some header values (TypeError "… invalid … header"): that request is never sent, so there is nothing to check. */
async function send(url: string, init: RequestInit): Promise<Response | undefined> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const reason =
      error instanceof TypeError ? `${error.message} ${error.cause instanceof Error ? error.cause.message : ''}` : '';
    if (/header/i.test(reason)) return undefined;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// 1. GET /authorize

type Entry = [string, string];
type Verdict = 'valid' | 'invalid' | 'either';

const KNOWN_AUTHORIZE = [
  'client_id',
  'redirect_uri',
  'response_type',
  'state',
  'code_challenge',
  'code_challenge_method',
  'scope',
  'nonce',
  'login_hint',
];
const AUTHORIZE_ERRORS = ['invalid_request', 'invalid_client', 'unsupported_response_type', 'invalid_scope'];

/** Redirect URIs that differ from the registered one, each in a way an attacker might try. */
function nearMisses(uri: string): string[] {
  const url = new URL(uri);
  const rest = `${url.pathname}${url.search}`;
  return [
    `${uri}/`,
    `${uri}?`,
    `${uri}?x=1`,
    `${uri}&x=1`,
    `${uri}#`,
    `${uri}#fragment`,
    `${uri}/..`,
    `${uri}/.`,
    `${uri}%2F`,
    `${uri}%00`,
    `${uri} `,
    ` ${uri}`,
    `${uri}\n`,
    `\t${uri}`,
    uri.toUpperCase(),
    uri.replace('localhost', 'LOCALHOST'),
    uri.replace('localhost', 'Localhost'),
    uri.replace('http:', 'HTTP:'),
    uri.replace(url.pathname, url.pathname.toUpperCase()),
    uri.replace('//', '//evil@'),
    uri.replace('//', '//user:pass@'),
    uri.replace('//localhost', '//evil.example@localhost'),
    `http://${url.host}@evil.example${rest}`,
    `${uri}@evil.example`,
    uri.replace('localhost', 'localhost.evil.example'),
    uri.replace('localhost', 'localhost.'),
    uri.replace('localhost', '127.0.0.1'),
    uri.replace('localhost', '[::1]'),
    uri.replace('localhost', 'ⓛocalhost'),
    uri.replace('localhost', 'ｌocalhost'),
    uri.replace('localhost', 'localhost%2eevil.example'),
    uri.replace(`:${url.port}`, ''),
    uri.replace(`:${url.port}`, ':80'),
    uri.replace(`:${url.port}`, `:${Number(url.port) + 1}`),
    uri.replace(`:${url.port}`, `:0${url.port}`),
    uri.replace(`:${url.port}`, `:${url.port}:${url.port}`),
    uri.replace('http:', 'https:'),
    uri.replace('http:', 'ftp:'),
    uri.replace('http://', 'http:/'),
    uri.replace('http://', 'http:\\\\'),
    uri.replace('http://', '//'),
    uri.replace('http://', ''),
    uri.replace(/\/([^/]*)$/, '\\$1'),
    uri.replace(/c/, '%63'),
    uri.replace(/:/g, '%3A').replace(/\//g, '%2F'),
    encodeURIComponent(uri),
    `javascript:alert(document.domain)//${uri}`,
    `javascript://${url.host}${rest}%0aalert(1)`,
    'data:text/html,<script>alert(1)</script>',
    `data:,${uri}`,
    'vbscript:msgbox(1)',
    'file:///etc/passwd',
    'about:blank',
    'https://evil.example/callback',
    `https://evil.example${rest}`,
    'http://evil.example',
    rest,
    '/',
  ].filter((candidate) => candidate !== uri);
}

/** One-character edits of the registered URI: insert, delete, replace, change case, percent-encode. */
function mutatedUri(uri: string) {
  return fc
    .tuple(
      fc.nat({ max: uri.length }),
      fc.constantFrom('insert', 'delete', 'replace', 'case', 'percent'),
      fc.oneof(printableChar, controlChar, nonAsciiChar),
    )
    .map(([at, op, c]) => {
      const i = Math.min(at, uri.length - 1);
      const ch = uri[i]!;
      switch (op) {
        case 'insert':
          return uri.slice(0, at) + c + uri.slice(at);
        case 'delete':
          return uri.slice(0, i) + uri.slice(i + 1);
        case 'replace':
          return uri.slice(0, i) + c + uri.slice(i + 1);
        case 'case':
          return uri.slice(0, i) + (ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase()) + uri.slice(i + 1);
        default:
          return `${uri.slice(0, i)}%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}${uri.slice(i + 1)}`;
      }
    })
    .filter((candidate) => candidate !== uri);
}

const wrongRedirectUri = (uri: string) =>
  fc.oneof(
    fc.constantFrom(...nearMisses(uri)),
    mutatedUri(uri),
    badString.filter((s) => s !== uri),
  );

/** Names of parameters the server does not know (it must ignore them). */
const unknownName = fc
  .oneof(
    fc.constantFrom(
      'prompt',
      'response_mode',
      'request',
      'request_uri',
      'claims',
      'foo',
      '',
      'Client_ID',
      'CLIENT_ID',
      'REDIRECT_URI',
      'Response_Type',
      'client_id ',
      ' client_id',
      'client_id[]',
      'redirect_uri[0]',
      'state.x',
      'scope[]',
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
      'valueOf',
      'client%5Fid',
    ),
    printable({ maxLength: 16 }),
    weird,
  )
  .filter((name) => !KNOWN_AUTHORIZE.includes(wellFormed(name)));
const unknownParams = fc.array(fc.tuple(unknownName, fc.oneof(printable({ maxLength: 20 }), weird, long)), {
  maxLength: 4,
});

/** The parameter given 0, 1 or 2 times. */
function occurrences(name: string, value: fc.Arbitrary<string>, optional: boolean): fc.Arbitrary<Entry[]> {
  const count = optional
    ? fc.oneof(
        { weight: 4, arbitrary: fc.constant(0) },
        { weight: 4, arbitrary: fc.constant(1) },
        { weight: 1, arbitrary: fc.constant(2) },
      )
    : fc.oneof(
        { weight: 30, arbitrary: fc.constant(1) },
        { weight: 1, arbitrary: fc.constant(0) },
        { weight: 1, arbitrary: fc.constant(2) },
      );
  return fc.tuple(count, value, value).map(([n, a, b]) => [a, b].slice(0, n).map((v): Entry => [name, v]));
}

function authorizeQueries(): fc.Arbitrary<Entry[]> {
  // Each parameter is valid most of the time, so that all outcomes (200 and each error) are reached.
  const good = <T>(arbitrary: fc.Arbitrary<T>, weight = 20) => ({ weight, arbitrary });
  const clientId = fc.oneof(
    good(fc.constant(party.clientId), 30),
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        inactiveClient.clientId,
        party.clientId.toUpperCase(),
        `${party.clientId} `,
        ` ${party.clientId}`,
        `${party.clientId}\u0000`,
        party.clientId.slice(0, -1),
      ),
    },
    { weight: 1, arbitrary: b64(16).map((s) => `cli_${s}`) },
    { weight: 1, arbitrary: badString },
  );
  const redirectUri = fc.oneof(good(fc.constant(REGISTERED), 30), {
    weight: 3,
    arbitrary: wrongRedirectUri(REGISTERED),
  });
  const responseType = fc.oneof(good(fc.constant('code')), {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constantFrom(
        'token',
        'CODE',
        'Code',
        'code ',
        ' code',
        'code token',
        'code id_token',
        'id_token',
        'none',
        'code\u0000',
      ),
      badString,
    ),
  });
  const state = fc.oneof(
    good(printable({ minLength: 1, maxLength: 64 })),
    good(opaqueText, 5),
    { weight: 1, arbitrary: badString },
    { weight: 1, arbitrary: printable({ minLength: 500, maxLength: 3000 }) },
  );
  const codeChallenge = fc.oneof(good(validChallenge), good(b64(43), 5), {
    weight: 2,
    arbitrary: fc.oneof(
      b64(42),
      b64(44),
      b64(0, 41),
      b64(44, 200),
      validChallenge.map((c) => `${c}=`),
      validChallenge.map((c) => c.replace(/[-_]/g, '+')),
      badString,
    ),
  });
  const method = fc.oneof(good(fc.constant('S256')), {
    weight: 1,
    arbitrary: fc.oneof(
      fc.constantFrom('plain', 'PLAIN', 's256', 'S256 ', ' S256', 'SHA256', 'S384', 'S512', 'S256\u0000'),
      badString,
    ),
  });
  const scope = fc.oneof(good(validScope), {
    weight: 6,
    arbitrary: fc.oneof(
      badScope,
      fc.constantFrom('', ' ', '   '),
      badString,
      validScope.map((s) => `${s} `.repeat(40)),
    ),
  });
  const nonce = fc.oneof(good(printable({ minLength: 1, maxLength: 64 })), { weight: 1, arbitrary: badString });
  const loginHint = fc.oneof(good(b64(1, 30).map((s) => `agt_${s}`)), {
    weight: 1,
    arbitrary: fc.oneof(fc.constantFrom('agt_', 'ada@example.com', 'AGT_x'), badString),
  });

  return fc
    .tuple(
      occurrences('client_id', clientId, false),
      occurrences('redirect_uri', redirectUri, false),
      occurrences('response_type', responseType, false),
      occurrences('state', state, false),
      occurrences('code_challenge', codeChallenge, false),
      occurrences('code_challenge_method', method, false),
      occurrences('scope', scope, true),
      occurrences('nonce', nonce, true),
      occurrences('login_hint', loginHint, true),
      unknownParams,
    )
    .chain((parts) => {
      const entries = parts.flat();
      return fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length });
    });
}

/**
 * The outcome docs/contract.md / docs/design.md §4 decide for a query: 'valid' (200), 'invalid' (400) or
 * 'either' (an implementation limit decides: over-long state, empty scope, non-ASCII nonce…).
 */
function authorizeVerdict(entries: Entry[]): Verdict {
  const values = new Map<string, string[]>();
  for (const [name, value] of entries) {
    const key = wellFormed(name);
    values.set(key, [...(values.get(key) ?? []), wellFormed(value)]);
  }
  const verdicts: Verdict[] = [];
  const once = (name: string, judge: (value: string) => Verdict, optional = false) => {
    const given = values.get(name) ?? [];
    if (given.length === 0) verdicts.push(optional ? 'valid' : 'invalid');
    else if (given.length > 1) verdicts.push('invalid');
    else verdicts.push(judge(given[0]!));
  };
  const exactly =
    (expected: string) =>
    (value: string): Verdict =>
      value === expected ? 'valid' : 'invalid';
  once('client_id', exactly(party.clientId));
  once('redirect_uri', exactly(REGISTERED));
  once('response_type', exactly('code'));
  // state is opaque (docs/design.md §4): any text without control characters, up to 2048.
  once('state', (v) => (v === '' || /\p{Cc}/u.test(v) || v.length > 2048 ? 'invalid' : 'valid'));
  once('code_challenge', (v) => (/^[A-Za-z0-9_-]{43}$/.test(v) ? 'valid' : 'invalid'));
  once('code_challenge_method', exactly('S256'));
  once(
    'scope',
    (v) => {
      const scopes = v.split(' ').filter(Boolean);
      if (scopes.some((s) => !SCOPES.includes(s))) return 'invalid';
      return scopes.length === 0 || v.length > 200 ? 'either' : 'valid';
    },
    true,
  );
  once('nonce', (v) => (/^[\x20-\x7e]+$/.test(v) && v.length <= 256 ? 'valid' : 'either'), true);
  once('login_hint', (v) => (v === '' || /^agt_[A-Za-z0-9_-]{1,124}$/.test(v) ? 'valid' : 'invalid'), true);
  if (verdicts.includes('invalid')) return 'invalid';
  return verdicts.includes('either') ? 'either' : 'valid';
}

function authorizeUrlOf(entries: Entry[]): string {
  const params = new URLSearchParams();
  for (const [name, value] of entries) params.append(name, value);
  return `${server.baseUrl}/authorize?${params.toString()}`;
}

/** Node refuses request heads over 16 KiB (431) before the application sees them; such URLs are not generated. */
const MAX_URL = 15_000;

async function getAuthorize(entries: Entry[]): Promise<{ response: Response; page: string; context: string }> {
  const url = authorizeUrlOf(entries);
  const response = await fetch(url, { redirect: 'manual' });
  const page = await response.text();
  const context = describeExchange(
    `GET ${url.length > 800 ? `${url.slice(0, 800)}… (${url.length} chars)` : url}`,
    response,
    page,
  );
  return { response, page, context };
}

/** The invariants of every answer of GET /authorize. */
function expectAuthorizeAnswer(response: Response, page: string, context: string): void {
  expect([200, 400], context).toContain(response.status);
  expect(response.headers.get('location'), context).toBeNull();
  expect(response.headers.get('content-type') ?? '', context).toMatch(/^text\/html/);
  expect(page, context).not.toMatch(STACK_TRACE);
  if (response.status === 400) {
    expect(AUTHORIZE_ERRORS, context).toContain(metaContent(page, 'error'));
    expect(metaContent(page, 'error-description') ?? '', context).not.toBe('');
    expect(metaContent(page, 'request-id'), context).toBeUndefined();
  } else {
    expect(metaContent(page, 'request-id') ?? '', context).toMatch(/^req_[A-Za-z0-9_-]+$/);
    expect(metaContent(page, 'error'), context).toBeUndefined();
  }
}

describe('GET /authorize with generated query parameters', () => {
  it('answers 200 with a request id or the 400 error page, never a redirect or 5xx, exactly as the rules decide', async () => {
    await fc.assert(
      fc.asyncProperty(authorizeQueries(), async (entries) => {
        fc.pre(authorizeUrlOf(entries).length <= MAX_URL);
        const { response, page, context } = await getAuthorize(entries);
        expectAuthorizeAnswer(response, page, context);
        const verdict = authorizeVerdict(entries);
        if (verdict === 'valid') expect(response.status, context).toBe(200);
        if (verdict === 'invalid') expect(response.status, context).toBe(400);

        // docs/design.md §4 order: an unknown or inactive client is invalid_client; then a redirect_uri
        // that is not the registered one is invalid_request, before anything else is looked at.
        const clientIds = entries.filter(([n]) => wellFormed(n) === 'client_id').map(([, v]) => wellFormed(v));
        const redirectUris = entries.filter(([n]) => wellFormed(n) === 'redirect_uri').map(([, v]) => wellFormed(v));
        const onlyClientId = clientIds.length === 1 ? clientIds[0]! : undefined;
        if (onlyClientId && onlyClientId !== party.clientId && onlyClientId.length <= 128) {
          expect(metaContent(page, 'error'), context).toBe('invalid_client');
        }
        if (onlyClientId === party.clientId && !(redirectUris.length === 1 && redirectUris[0] === REGISTERED)) {
          expect(response.status, context).toBe(400);
          expect(metaContent(page, 'error'), context).toBe('invalid_request');
        }
      }),
      { numRuns: 400 },
    );
  });

  const validRequest = () =>
    fc.record({
      state: fc.oneof(printable({ minLength: 1, maxLength: 64 }), opaqueText),
      codeChallenge: validChallenge,
      scope: fc.option(validScope, { nil: undefined }),
      nonce: fc.option(printable({ minLength: 1, maxLength: 64 }), { nil: undefined }),
      extra: unknownParams,
    });
  function entriesOf(
    request: {
      state: string;
      codeChallenge: string;
      scope: string | undefined;
      nonce: string | undefined;
      extra: Entry[];
    },
    redirectUris: string[],
  ): Entry[] {
    return [
      ['client_id', party.clientId],
      ...redirectUris.map((uri): Entry => ['redirect_uri', uri]),
      ['response_type', 'code'],
      ['state', request.state],
      ['code_challenge', request.codeChallenge],
      ['code_challenge_method', 'S256'],
      ...(request.scope === undefined ? [] : [['scope', request.scope] as Entry]),
      ...(request.nonce === undefined ? [] : [['nonce', request.nonce] as Entry]),
      ...request.extra,
    ];
  }

  it('answers 200 when the client and redirect_uri are the registered ones and every other parameter is valid', async () => {
    await fc.assert(
      fc.asyncProperty(validRequest(), async (request) => {
        const entries = entriesOf(request, [REGISTERED]);
        fc.pre(authorizeUrlOf(entries).length <= MAX_URL);
        const { response, page, context } = await getAuthorize(entries);
        expectAuthorizeAnswer(response, page, context);
        expect(response.status, context).toBe(200);
      }),
      { numRuns: 150 },
    );
  });

  it('answers 400 invalid_request, never 200, when redirect_uri differs from the registered one in any way', async () => {
    await fc.assert(
      fc.asyncProperty(
        validRequest(),
        wrongRedirectUri(REGISTERED),
        fc.constantFrom('alone', 'registered first', 'registered after'),
        async (request, wrong, arrangement) => {
          const uris =
            arrangement === 'alone'
              ? [wrong]
              : arrangement === 'registered first'
                ? [REGISTERED, wrong]
                : [wrong, REGISTERED];
          const entries = entriesOf(request, uris);
          fc.pre(authorizeUrlOf(entries).length <= MAX_URL);
          const { response, page, context } = await getAuthorize(entries);
          expectAuthorizeAnswer(response, page, context);
          expect(response.status, context).toBe(400);
          expect(metaContent(page, 'error'), context).toBe('invalid_request');
        },
      ),
      { numRuns: 200 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// 2. POST /api/agent/authenticate

/** Placeholders for real values, filled in when the request is made (a fresh request per run). */
type Who = 'A' | 'B' | 'disabled';
/** A class, so that no generated JSON value (a dictionary like {"$": 0}) can pass for a placeholder. */
class Ref {
  constructor(
    readonly $: 'fresh request' | 'used request' | 'agent id' | 'agent secret',
    readonly who: Who = 'A',
  ) {}
}
const MISSING = Symbol('missing field');

const isRef = (value: unknown): value is Ref => value instanceof Ref;

/** Non-string JSON values and the other ways a field can be malformed. */
const simpleJson = fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.constant(null));
const safeKey = printable({ maxLength: 10 }).filter(
  (k) => k !== '__proto__' && k !== 'constructor' && k !== 'prototype',
);
const malformedField = fc.oneof(
  fc.constant<unknown>(MISSING),
  fc.constant(null),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(''),
  fc.array(simpleJson, { maxLength: 3 }),
  fc.dictionary(safeKey, simpleJson, { maxKeys: 3 }),
);
const oddString = fc.oneof(
  withControl,
  nonAscii,
  long,
  weird.filter((s) => s !== ''),
);

const authenticateFields = () =>
  fc
    .record({
      request_id: fc.oneof(
        { weight: 8, arbitrary: fc.constant<unknown>(new Ref('fresh request')) },
        { weight: 3, arbitrary: fc.constant<unknown>(new Ref('used request')) },
        {
          weight: 3,
          arbitrary: fc.oneof(
            b64(32).map((s) => `req_${s}`),
            printable({ minLength: 1, maxLength: 40 }),
          ),
        },
        { weight: 1, arbitrary: malformedField },
        { weight: 1, arbitrary: oddString },
      ),
      agent_id: fc.oneof(
        {
          weight: 12,
          arbitrary: fc.constantFrom<Who>('A', 'B', 'disabled').map((who): unknown => new Ref('agent id', who)),
        },
        {
          weight: 1,
          arbitrary: fc.oneof(
            b64(16).map((s) => `agt_${s}`),
            printable({ minLength: 1, maxLength: 40 }),
          ),
        },
        { weight: 1, arbitrary: malformedField },
        { weight: 1, arbitrary: oddString },
      ),
      agent_secret: fc.oneof(
        {
          weight: 12,
          arbitrary: fc.constantFrom<Who>('A', 'B', 'disabled').map((who): unknown => new Ref('agent secret', who)),
        },
        {
          weight: 1,
          arbitrary: fc.oneof(
            b64(43).map((s) => `aas_${s}`),
            printable({ minLength: 1, maxLength: 40 }),
          ),
        },
        { weight: 1, arbitrary: malformedField },
        { weight: 1, arbitrary: oddString },
      ),
      model: fc.oneof(
        {
          weight: 12,
          arbitrary: fc.oneof(
            fc.constantFrom('claude-sonnet', 'gpt-4o', 'クロード'),
            printable({ minLength: 1, maxLength: 60 }),
          ),
        },
        { weight: 1, arbitrary: malformedField },
        { weight: 1, arbitrary: oddString },
      ),
      extra: fc.dictionary(
        safeKey.filter((k) => !['request_id', 'agent_id', 'agent_secret', 'model'].includes(k)),
        simpleJson,
        { maxKeys: 2 },
      ),
      /** Most of the time an agent's secret goes with its own agent id. */
      paired: fc.boolean(),
    })
    .map(({ paired, ...fields }) => {
      const agent = fields.agent_id;
      const secret = fields.agent_secret;
      if (paired && isRef(agent) && isRef(secret) && agent.$ === 'agent id' && secret.$ === 'agent secret')
        return { ...fields, agent_secret: new Ref('agent secret', agent.who) };
      return fields;
    });
type AuthenticateFields = ReturnType<typeof authenticateFields> extends fc.Arbitrary<infer T> ? T : never;

type Body =
  | { kind: 'fields'; fields: AuthenticateFields }
  | { kind: 'truncated'; fields: AuthenticateFields; keep: number }
  | { kind: 'json'; value: fc.JsonValue }
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'text'; text: string }
  | { kind: 'big' };

const authenticateBody: fc.Arbitrary<Body> = fc.oneof(
  { weight: 8, arbitrary: authenticateFields().map((fields): Body => ({ kind: 'fields', fields })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(authenticateFields(), fc.nat())
      .map(([fields, keep]): Body => ({ kind: 'truncated', fields, keep })),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value): Body => ({ kind: 'json', value })) },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes): Body => ({ kind: 'bytes', bytes })),
  },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: fc.oneof(printableChar, controlChar, nonAsciiChar), minLength: 1, maxLength: 80 })
      .map((text): Body => ({ kind: 'text', text })),
  },
  { weight: 1, arbitrary: fc.constant<Body>({ kind: 'big' }) },
);

/** Content types: JSON ones the endpoint must parse, others it must refuse (415), and ones docs/contract.md / docs/design.md leave open. */
const JSON_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'Application/JSON',
];
const OTHER_TYPES = [
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=----x',
  'text/html',
  'application/xml',
  'application/octet-stream',
  'application/jsonx',
  'json',
];
const OPEN_TYPES = [
  'application/vnd.api+json',
  'application/ld+json',
  'application/json; charset=utf-16',
  '*/*',
  'application/*',
];
const contentType = fc.oneof(
  { weight: 20, arbitrary: fc.constantFrom(...JSON_TYPES) },
  { weight: 3, arbitrary: fc.constantFrom(...OTHER_TYPES) },
  { weight: 1, arbitrary: fc.constantFrom(...OPEN_TYPES) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);
const BIG = JSON.stringify({
  request_id: 'req_x',
  agent_id: 'agt_x',
  agent_secret: 'aas_x',
  model: 'm',
  padding: 'x'.repeat(70_000),
});

const AGENT_CREDENTIALS = () => ({
  A: { agentId: party.agentId, agentSecret: party.agentSecret },
  B: agentB,
  disabled: disabledAgent,
});

async function materialize(value: unknown): Promise<unknown> {
  if (!isRef(value)) return value;
  switch (value.$) {
    case 'fresh request':
      return (await startFlow(server, party)).requestId;
    case 'used request': {
      // A request of its own each time: another agent on it contests it, which ends it.
      const { requestId } = await startFlow(server, party);
      await authenticate(server, party, requestId);
      return requestId;
    }
    case 'agent id':
      return AGENT_CREDENTIALS()[value.who].agentId;
    case 'agent secret':
      return AGENT_CREDENTIALS()[value.who].agentSecret;
  }
}

async function fieldsObject(fields: AuthenticateFields): Promise<Record<string, unknown>> {
  const object: Record<string, unknown> = { ...fields.extra };
  for (const name of ['request_id', 'agent_id', 'agent_secret', 'model'] as const) {
    const value = fields[name];
    if (value !== MISSING) object[name] = await materialize(value);
  }
  return object;
}

async function bodyBytes(body: Body): Promise<Buffer> {
  switch (body.kind) {
    case 'fields':
      return Buffer.from(JSON.stringify(await fieldsObject(body.fields)));
    case 'truncated': {
      const text = JSON.stringify(await fieldsObject(body.fields));
      return Buffer.from(text.slice(0, body.keep % text.length));
    }
    case 'json':
      return Buffer.from(JSON.stringify(body.value));
    case 'bytes':
      return Buffer.from(body.bytes);
    case 'text':
      return Buffer.from(body.text);
    case 'big':
      return Buffer.from(BIG);
  }
}

type FieldClass = 'malformed' | 'odd' | 'ok';
const FIELD_LIMITS = { request_id: 128, agent_id: 128, agent_secret: 512, model: 200 } as const;
function classify(name: keyof typeof FIELD_LIMITS, value: unknown): FieldClass {
  if (isRef(value)) return 'ok';
  if (typeof value !== 'string' || value === '') return 'malformed';
  const received = wellFormed(value);
  return hasControl(received) || codePoints(received) > FIELD_LIMITS[name] ? 'odd' : 'ok';
}

/** An active agent's id with its own secret. */
function credentialsValid(fields: AuthenticateFields): boolean {
  const agent = fields.agent_id;
  const secret = fields.agent_secret;
  return (
    isRef(agent) &&
    isRef(secret) &&
    agent.$ === 'agent id' &&
    secret.$ === 'agent secret' &&
    agent.who === secret.who &&
    agent.who !== 'disabled'
  );
}

/**
 * What docs/contract.md and docs/design.md §5 decide for a well-typed JSON body: the order of checks is body
 * shape (400) → credentials (401) → request exists (404) → request state (409 when used or contested).
 */
function expectedAuthentication(fields: AuthenticateFields): { status: number; error?: string } | 'open' {
  const classes = (['request_id', 'agent_id', 'agent_secret', 'model'] as const).map((name) =>
    classify(name, fields[name]),
  );
  if (classes.includes('malformed')) return { status: 400, error: 'invalid_request' };
  if (classes.includes('odd')) return 'open';
  if (!credentialsValid(fields)) return { status: 401, error: 'invalid_credentials' };
  const request = fields.request_id;
  if (isRef(request) && request.$ === 'fresh request') return { status: 200 };
  // The agent that authenticated it, again: used; another agent: contested (docs/design.md §5).
  if (isRef(request) && request.$ === 'used request')
    return { status: 409, error: (fields.agent_id as Ref).who === 'A' ? 'request_already_used' : 'request_contested' };
  return { status: 404, error: 'invalid_request' };
}

describe('POST /api/agent/authenticate with generated bodies and content types', () => {
  it('answers a documented status with exactly { error, error_description }, 200 only for the real request and credentials', async () => {
    await fc.assert(
      fc.asyncProperty(authenticateBody, contentType, async (body, type) => {
        const bytes = await bodyBytes(body);
        const response = await fetch(`${server.baseUrl}/api/agent/authenticate`, {
          method: 'POST',
          headers: type === undefined ? {} : { 'content-type': type },
          body: new Uint8Array(bytes),
          redirect: 'manual',
        });
        const text = await response.text();
        const context = describeExchange(
          `POST /api/agent/authenticate content-type=${JSON.stringify(type)}\n${bytes.toString('utf8').slice(0, 600)}`,
          response,
          text,
        );
        expectNoServerError(response, context);
        expect(text, context).not.toMatch(STACK_TRACE);

        // Success needs the fresh request and real credentials; the model may be any non-empty
        // string the server accepts (docs/contract.md does not restrict its characters).
        const mayAuthenticate =
          body.kind === 'fields' &&
          isRef(body.fields.request_id) &&
          body.fields.request_id.$ === 'fresh request' &&
          credentialsValid(body.fields) &&
          typeof body.fields.model === 'string' &&
          body.fields.model !== '';
        const typeIsJson = type !== undefined && JSON_TYPES.includes(type);

        if (response.status === 200) {
          expect(mayAuthenticate && (typeIsJson || OPEN_TYPES.includes(type ?? '')), context).toBe(true);
          expect(JSON.parse(text), context).toEqual({ status: 'authenticated', message: expect.any(String) });
          return;
        }
        expect(ERROR_STATUSES_JSON, context).toContain(response.status);
        const error = expectErrorBody(text, response, context);
        if (response.status === 429) expect(response.headers.get('retry-after'), context).toMatch(/^\d+$/);

        if (body.kind === 'big' && typeIsJson) expect(response.status, context).toBe(413);
        if (body.kind !== 'big' && type !== undefined && OTHER_TYPES.includes(type))
          expect(response.status, context).toBe(415);
        if (typeIsJson && body.kind === 'truncated') expect(response.status, context).toBe(400);
        if (typeIsJson && body.kind === 'fields') {
          const expected = expectedAuthentication(body.fields);
          if (expected !== 'open') {
            expect(response.status, context).toBe(expected.status);
            if (expected.error) expect(error.error, context).toBe(expected.error);
          }
        }
      }),
      { numRuns: 400 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// 3. POST /token, /introspect, /revoke and GET /api/check-status

type Which = 'party' | 'other' | 'inactive';
/** A placeholder for a real client, secret, code or token; a class, like Ref, so generated values never pass for one. */
class TokenRef {
  constructor(
    readonly $: 'client' | 'secret' | 'code' | 'verifier' | 'access token' | 'refresh token',
    readonly which: Which = 'party',
  ) {}
}
const isTokenRef = (value: unknown): value is TokenRef => value instanceof TokenRef;

function resolveTokenRef(ref: TokenRef): string {
  const clients = {
    party: { clientId: party.clientId, clientSecret: party.clientSecret },
    other: otherClient,
    inactive: inactiveClient,
  };
  switch (ref.$) {
    case 'client':
      return clients[ref.which].clientId;
    case 'secret':
      return clients[ref.which].clientSecret;
    case 'code':
      return tokenArtifacts.code;
    case 'verifier':
      return tokenArtifacts.verifier;
    case 'access token':
      return tokenArtifacts.accessToken;
    case 'refresh token':
      return tokenArtifacts.refreshToken;
  }
}

const which = fc.constantFrom<Which>('party', 'party', 'other', 'inactive');
/** Mostly well-formed values (real or not), sometimes malformed ones. */
const field = (good: fc.Arbitrary<unknown>, bad: fc.Arbitrary<unknown> = badString) =>
  fc.oneof({ weight: 12, arbitrary: good }, { weight: 1, arbitrary: bad });
const tokenFieldValue: Record<string, fc.Arbitrary<unknown>> = {
  grant_type: field(
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('authorization_code', 'refresh_token') },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          'client_credentials',
          'password',
          'implicit',
          'urn:ietf:params:oauth:grant-type:device_code',
          'AUTHORIZATION_CODE',
          'authorization_code ',
        ),
      },
    ),
  ),
  code: field(
    fc.oneof(
      fc.constant<unknown>(new TokenRef('code')),
      b64(43).map((s) => `cod_${s}`),
    ),
  ),
  code_verifier: field(
    fc.oneof(
      fc.constant<unknown>(new TokenRef('verifier')),
      fc.string({ unit: fc.constantFrom(...`${B64URL}.~`), minLength: 43, maxLength: 128 }),
    ),
  ),
  client_id: field(
    fc.oneof(
      { weight: 6, arbitrary: which.map((w): unknown => new TokenRef('client', w)) },
      { weight: 1, arbitrary: b64(16).map((s) => `cli_${s}`) },
    ),
  ),
  client_secret: field(
    fc.oneof(
      { weight: 6, arbitrary: which.map((w): unknown => new TokenRef('secret', w)) },
      { weight: 1, arbitrary: b64(43).map((s) => `cls_${s}`) },
    ),
  ),
  redirect_uri: field(fc.constant(REGISTERED), wrongRedirectUri(REGISTERED)),
  refresh_token: field(
    fc.oneof(
      fc.constant<unknown>(new TokenRef('refresh token')),
      b64(43).map((s) => `rft_${s}`),
    ),
  ),
  scope: field(fc.oneof(validScope, badScope)),
  token: field(
    fc.oneof(
      fc.constant<unknown>(new TokenRef('access token')),
      fc.constant<unknown>(new TokenRef('refresh token')),
      b64(43).map((s) => `rft_${s}`),
      fc.tuple(b64(10, 40), b64(10, 80), b64(43)).map(([h, p, s]) => `${h}.${p}.${s}`),
    ),
  ),
  token_type_hint: field(fc.constantFrom('access_token', 'refresh_token', 'id_token', 'bearer')),
};
const TOKEN_FIELDS = Object.keys(tokenFieldValue);
const SCHEMA_FIELDS: Record<string, string[]> = {
  '/token': [
    'grant_type',
    'client_id',
    'client_secret',
    'code',
    'code_verifier',
    'redirect_uri',
    'refresh_token',
    'scope',
  ],
  '/introspect': ['token', 'token_type_hint', 'client_id', 'client_secret'],
  '/revoke': ['token', 'token_type_hint', 'client_id', 'client_secret'],
};

/** A field of the endpoint's own set most of the time, sometimes one of another endpoint or an unknown name. */
const tokenEntry = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .constantFrom(...TOKEN_FIELDS)
      .chain((name) => tokenFieldValue[name]!.map((value): [string, unknown] => [name, value])),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.oneof(
        fc.constantFrom('__proto__', 'constructor', 'access_token', 'client_assertion', 'Grant_Type'),
        printable({ maxLength: 12 }),
      ),
      fc.oneof(printable({ maxLength: 20 }), weird),
    ),
  },
);
/** A base that is usually well formed (each field once), plus generated fields that may repeat. */
const tokenEntries = (endpoint: string) =>
  fc
    .tuple(
      fc.tuple(
        ...SCHEMA_FIELDS[endpoint]!.map((name) =>
          fc.option(
            tokenFieldValue[name]!.map((value): [string, unknown] => [name, value]),
            { freq: name === 'grant_type' || name === 'token' ? 15 : 4, nil: undefined },
          ),
        ),
      ),
      fc.oneof(
        { weight: 3, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: fc.array(tokenEntry, { minLength: 1, maxLength: 4 }) },
      ),
    )
    .map(([base, more]) => {
      const entries = [...base.filter((entry): entry is [string, unknown] => entry !== undefined), ...more];
      // Usually the secret is the one of the client named (which may still be the inactive client).
      const client = entries.find(([name, value]) => name === 'client_id' && isTokenRef(value))?.[1] as
        | TokenRef
        | undefined;
      return entries.map(([name, value]): [string, unknown] =>
        name === 'client_secret' &&
        client?.$ === 'client' &&
        isTokenRef(value) &&
        value.$ === 'secret' &&
        base.length % 4 !== 0
          ? [name, new TokenRef('secret', client.which)]
          : [name, value],
      );
    });

/** How a value is put into a JSON body: itself or as another JSON type. */
const jsonShape = fc.constantFrom(
  'string',
  'string',
  'string',
  'string',
  'string',
  'number',
  'boolean',
  'null',
  'array',
  'object',
);
type Encoding = 'form' | 'json' | 'json-value' | 'other';

const tokenRequest = fc.constantFrom('/token', '/introspect', '/revoke').chain((endpoint) =>
  fc.record({
    endpoint: fc.constant(endpoint),
    encoding: fc.constantFrom<Encoding>('form', 'form', 'form', 'json', 'json', 'json', 'json-value', 'other'),
    entries: tokenEntries(endpoint),
    shapes: fc.oneof(
      { weight: 3, arbitrary: fc.constant(Array<string>(12).fill('string')) },
      { weight: 1, arbitrary: fc.array(jsonShape, { minLength: 12, maxLength: 12 }) },
    ),
    jsonValue: fc.jsonValue({ maxDepth: 3 }),
    otherType: fc.constantFrom(
      undefined,
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/xml',
      'application/octet-stream',
      'application/x-www-form-urlencoded; charset=utf-8',
      'application/json; charset=utf-8',
    ),
  }),
);
type TokenRequest = typeof tokenRequest extends fc.Arbitrary<infer T> ? T : never;

function encodeTokenRequest(request: TokenRequest): {
  type: string | undefined;
  body: string;
  values: Map<string, unknown[]>;
} {
  const values = new Map<string, unknown[]>();
  const resolved = request.entries.map(([name, value]): [string, unknown] => [
    name,
    isTokenRef(value) ? resolveTokenRef(value) : value,
  ]);
  if (request.encoding === 'json-value')
    return { type: 'application/json', body: JSON.stringify(request.jsonValue), values };
  if (request.encoding === 'json') {
    const object: Record<string, unknown> = {};
    resolved.forEach(([name, value], i) => {
      const shape = request.shapes[i % request.shapes.length];
      const shaped =
        shape === 'number'
          ? 42
          : shape === 'boolean'
            ? true
            : shape === 'null'
              ? null
              : shape === 'array'
                ? [value]
                : shape === 'object'
                  ? { value }
                  : value;
      Object.defineProperty(object, name, { value: shaped, enumerable: true, configurable: true, writable: true });
    });
    for (const [name, value] of Object.entries(object)) values.set(name, [value]);
    return { type: 'application/json', body: JSON.stringify(object), values };
  }
  const params = new URLSearchParams();
  for (const [name, value] of resolved) {
    params.append(name, String(value));
    values.set(wellFormed(name), [...(values.get(wellFormed(name)) ?? []), wellFormed(String(value))]);
  }
  return {
    type: request.encoding === 'form' ? 'application/x-www-form-urlencoded' : request.otherType,
    body: params.toString(),
    values,
  };
}

describe('POST /token, /introspect and /revoke with generated form and JSON bodies', () => {
  it('never answers 5xx; errors are exactly { error, error_description }; success only with real client credentials', async () => {
    await fc.assert(
      fc.asyncProperty(tokenRequest, async (request) => {
        const { type, body, values } = encodeTokenRequest(request);
        const response = await fetch(`${server.baseUrl}${request.endpoint}`, {
          method: 'POST',
          headers: type === undefined ? {} : { 'content-type': type },
          body: Buffer.from(body),
          redirect: 'manual',
        });
        const text = await response.text();
        const context = describeExchange(
          `POST ${request.endpoint} content-type=${JSON.stringify(type)}\n${body.slice(0, 600)}`,
          response,
          text,
        );
        expectNoServerError(response, context);
        expect(text, context).not.toMatch(STACK_TRACE);

        const single = (name: string) => {
          const given = values.get(name);
          return given?.length === 1 && typeof given[0] === 'string' ? given[0] : undefined;
        };
        // An RFC 7523 assertion beside the secret, even an empty one, is a second method (invalid_request).
        const asserted = values.has('client_assertion') || values.has('client_assertion_type');
        const realClient =
          !asserted &&
          ((single('client_id') === party.clientId && single('client_secret') === party.clientSecret) ||
            (single('client_id') === otherClient.clientId && single('client_secret') === otherClient.clientSecret));
        // 'other' sends the form-encoded text under another content type: parsed as a form only under a form type.
        const formUnderOtherType =
          request.encoding === 'other' && /^application\/x-www-form-urlencoded/.test(type ?? '');
        const jsonUnderOtherType = request.encoding === 'other' && /^application\/json/.test(type ?? '');
        const parsed = request.encoding === 'form' || request.encoding === 'json' || formUnderOtherType;
        const schemaOk = SCHEMA_FIELDS[request.endpoint]!.every((name) => {
          const given = values.get(name);
          return given === undefined || (given.length === 1 && typeof given[0] === 'string');
        });

        if (response.status === 200) {
          expect(realClient && parsed && schemaOk, context).toBe(true);
          const json = JSON.parse(text) as Record<string, unknown>;
          if (request.endpoint === '/token') {
            const real =
              single('code') === tokenArtifacts.code || single('refresh_token') === tokenArtifacts.refreshToken;
            expect(real, context).toBe(true);
            expect(json, context).toMatchObject({
              access_token: expect.any(String),
              token_type: 'Bearer',
              refresh_token: expect.any(String),
            });
          } else if (request.endpoint === '/introspect') {
            expect(typeof json.active, context).toBe('boolean');
          } else {
            expect(json, context).toEqual({});
          }
          return;
        }
        expect([400, 401, 413, 415], context).toContain(response.status);
        const error = expectErrorBody(text, response, context);
        if (response.status === 401) expect(error.error, context).toBe('invalid_client');
        if (
          request.encoding === 'json-value' &&
          (request.jsonValue === null || typeof request.jsonValue !== 'object' || Array.isArray(request.jsonValue))
        ) {
          expect(response.status, context).toBe(400);
        }
        if (request.encoding === 'other' && !parsed && !jsonUnderOtherType && body.length > 0)
          expect(response.status, context).toBe(415);
        if (jsonUnderOtherType) expect(response.status, context).toBe(400);
        if (parsed && !schemaOk) expect(response.status, context).toBe(400);
        // Well-formed fields and real client credentials: introspection and revocation answer 200 (RFC 7662, RFC 7009).
        const token = single('token');
        const hint = values.get('token_type_hint');
        if (
          request.endpoint !== '/token' &&
          parsed &&
          schemaOk &&
          realClient &&
          token !== undefined &&
          token !== '' &&
          codePoints(token) <= 4096 &&
          // A control character makes the token parameter malformed: 400 (src/http/schemas.ts, Token).
          // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
          !/[\u0000-\u001f\u007f]/.test(token) &&
          (hint === undefined || codePoints(String(hint[0])) <= 64) &&
          !body.includes('__proto__') &&
          !body.includes('constructor')
        ) {
          expect(response.status === 200 || (request.endpoint === '/revoke' && response.status === 400), context).toBe(
            true,
          );
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe('GET /api/check-status with generated request_id values', () => {
  type RequestIdValue = { $: 'pending' } | { $: 'used' } | string;
  const requestIdValue: fc.Arbitrary<RequestIdValue> = fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom<RequestIdValue>({ $: 'pending' }, { $: 'used' }) },
    {
      weight: 2,
      arbitrary: fc.oneof(
        b64(32).map((s) => `req_${s}`),
        printable({ minLength: 1, maxLength: 60 }),
      ),
    },
    { weight: 2, arbitrary: badString },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '%',
        '%zz',
        '%E0%A4%A',
        '+',
        '&',
        '=',
        '#',
        '?',
        '..',
        '../admin',
        'req_*',
        "req_' OR '1'='1",
        'null',
        'undefined',
        '[object Object]',
      ),
    },
  );
  let pendingRequestId: string;
  beforeAll(async () => {
    pendingRequestId = (await startFlow(server, party)).requestId;
  });

  it('answers 400 or 404 with exactly { error, error_description }, and 200 only for a real request', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { weight: 3, arbitrary: requestIdValue.map((id) => [id]) },
          { weight: 1, arbitrary: fc.array(requestIdValue, { maxLength: 3 }) },
        ),
        fc.array(
          fc.tuple(
            unknownName.filter((n) => wellFormed(n) !== 'request_id'),
            printable({ maxLength: 10 }),
          ),
          { maxLength: 2 },
        ),
        fc.option(
          fc.constantFrom(
            '&',
            '&&',
            '&request_id',
            '&request_id=',
            '&=',
            '&%',
            '&%zz=%',
            ';request_id=x',
            '&request_id=%',
          ),
          { nil: undefined },
        ),
        async (ids, extra, rawSuffix) => {
          const params = new URLSearchParams();
          const sent = ids.map((id) =>
            typeof id === 'string' ? id : id.$ === 'pending' ? pendingRequestId : usedRequestId,
          );
          for (const id of sent) params.append('request_id', id);
          for (const [name, value] of extra) params.append(name, value);
          const url = `${server.baseUrl}/api/check-status?${params.toString()}${rawSuffix ?? ''}`;
          fc.pre(url.length <= MAX_URL);
          const response = await fetch(url, { redirect: 'manual' });
          const text = await response.text();
          const context = describeExchange(`GET ${url.slice(0, 800)}`, response, text);
          expectNoServerError(response, context);
          expect(text, context).not.toMatch(STACK_TRACE);

          // A raw suffix that names request_id changes what the server reads; the others add unknown parameters.
          const precise = rawSuffix === undefined || !rawSuffix.includes('request_id');
          const real = precise && sent.length === 1 && (sent[0] === pendingRequestId || sent[0] === usedRequestId);
          if (!precise && response.status === 200) {
            expect(sent.includes(pendingRequestId) || sent.includes(usedRequestId), context).toBe(true);
            expect(['pending', 'authenticated'], context).toContain((JSON.parse(text) as { status: string }).status);
            return;
          }
          if (real) {
            expect(response.status, context).toBe(200);
            expect(JSON.parse(text), context).toEqual({
              status: sent[0] === pendingRequestId ? 'pending' : 'authenticated',
            });
            return;
          }
          expect([400, 404], context).toContain(response.status);
          const error = expectErrorBody(text, response, context);
          if (precise) {
            // Control characters make the request malformed (400); any other id names nothing (404).
            if (sent.length !== 1 || sent[0] === '' || hasControl(wellFormed(sent[0]!).replace(/[\x80-\x9f]/g, '')))
              expect(error.error, context).toBe('invalid_request');
            else if (codePoints(wellFormed(sent[0]!)) <= 128)
              expect([response.status, error.error], context).toEqual([404, 'not_found']);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// 4. GET|POST /userinfo

/** Characters fetch sends in a header value: HTAB, printable ASCII and obs-text (0x80–0xFF). */
const headerChar = fc.oneof(
  { weight: 10, arbitrary: printableChar },
  { weight: 1, arbitrary: fc.constant('\t') },
  { weight: 1, arbitrary: char(0x80, 0xff) },
);
const headerText = (constraints: { minLength?: number; maxLength?: number } = {}) =>
  fc.string({ unit: headerChar, ...constraints });

/** Edits of a real access token that certainly invalidate it (never the last character of the signature, whose low bits may be ignored). */
function mutatedToken(token: string) {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const signed = `${header}.${payload}`;
  return fc.oneof(
    fc
      .tuple(fc.nat({ max: signed.length - 1 }), b64Char)
      .map(([at, c]) => `${signed.slice(0, at) + c + signed.slice(at)}.${signature}`),
    fc
      .nat({ max: signed.length - 1 })
      .filter((at) => signed[at] !== '.')
      .map((at) => `${signed.slice(0, at) + signed.slice(at + 1)}.${signature}`),
    fc.integer({ min: 2, max: signature.length }).map((cut) => `${signed}.${signature.slice(0, -cut)}`),
    b64(1, 4).map((more) => `${token}${more}`),
    fc.constantFrom(
      `${signed}.`,
      `${signed}`,
      `${header}..${signature}`,
      `.${payload}.${signature}`,
      token.toUpperCase(),
      `${token}.${signature}`,
      `${token} ${token}`,
      `${token},${token}`,
    ),
  );
}

/** JWTs in the access-token format, signed with the server's secret (and kid) or not, that the server never issued. */
interface Forged {
  secret: string;
  kid: 'server' | 'random' | 'none';
  typ: string;
  jti: string;
  exp: number;
}
const forgedToken: fc.Arbitrary<Forged> = fc.record({
  secret: fc.constantFrom(
    TEST_JWT_SECRET,
    TEST_JWT_SECRET,
    'another-secret-of-at-least-32-bytes-000000',
    TEST_JWT_SECRET.toUpperCase(),
  ),
  kid: fc.constantFrom<Forged['kid']>('server', 'server', 'random', 'none'),
  typ: fc.constantFrom('at+jwt', 'at+jwt', 'JWT'),
  jti: b64(22).map((s) => `atk_${s}`),
  exp: fc.integer({ min: -7200, max: 7200 }),
});

const authorizationHeader = (realToken: string) =>
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            'Bearer ',
            'bearer ',
            'BEARER ',
            'Bearer  ',
            'Bearer\t',
            'Basic ',
            'Token ',
            'DPoP ',
            'MAC ',
            '',
          ),
          headerText({ maxLength: 120 }),
        )
        .map(([scheme, rest]) => scheme + rest),
    },
    { weight: 2, arbitrary: mutatedToken(realToken).map((t) => `Bearer ${t}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer ',
        'Bearer =',
        'Bearer ====',
        'Bearer a b',
        'Bearer a,Bearer b',
        'Basic Zm9vOmJhcg==',
        `Basic ${Buffer.from(`${party.clientId}:${party.clientSecret}`).toString('base64')}`,
        `bearer${realToken}`,
        `Bearer ${realToken}x`,
        `Bearer "${realToken}"`,
        `Bearer ${realToken};`,
        `${realToken}`,
      ),
    },
    { weight: 1, arbitrary: headerText({ maxLength: 60 }) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom('Bearer ', 'Bearer'), long).map(([scheme, value]) => scheme + value),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );

async function signForged(forged: Forged): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const kid =
    forged.kid === 'server' ? server.ctx.secrets.accessTokens.kid : forged.kid === 'random' ? 'k1' : undefined;
  return new SignJWT({ client_id: party.clientId, scope: 'openid email profile', model: 'm' })
    .setProtectedHeader({ alg: 'HS256', typ: forged.typ, ...(kid === undefined ? {} : { kid }) })
    .setIssuer(server.baseUrl)
    .setSubject(party.agentId)
    .setAudience(party.clientId)
    .setIssuedAt(now)
    .setExpirationTime(now + forged.exp)
    .setJti(forged.jti)
    .sign(new TextEncoder().encode(forged.secret));
}

describe('GET|POST /userinfo with generated Authorization headers', () => {
  it('answers 401 with WWW-Authenticate: Bearer… and exactly { error, error_description }', async () => {
    const realToken = userinfoToken;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST'),
        fc.oneof(
          { weight: 6, arbitrary: authorizationHeader(realToken).map((value) => ({ value })) },
          { weight: 1, arbitrary: forgedToken.map((forged) => ({ forged })) },
        ),
        async (method, header) => {
          let authorization: string | undefined;
          if ('value' in header) authorization = header.value;
          else {
            authorization = `Bearer ${await signForged(header.forged)}`;
          }
          const response = await send(`${server.baseUrl}/userinfo`, {
            method,
            headers: authorization === undefined ? {} : { authorization },
            redirect: 'manual',
          });
          if (response === undefined) return; // fetch refused the header value
          const text = await response.text();
          const context = describeExchange(
            `${method} /userinfo authorization=${JSON.stringify(authorization?.slice(0, 300))}`,
            response,
            text,
          );
          expectNoServerError(response, context);
          expect(response.status, context).toBe(401);
          expect(response.headers.get('www-authenticate') ?? '', context).toMatch(/^Bearer/);
          expectErrorBody(text, response, context);
        },
      ),
      { numRuns: 250 },
    );
  });

  // The route promises "POST /userinfo needs no body; accept any content type and ignore it"
  // (src/protocol/routes/userinfo.ts): a POST answers as a GET with the same Authorization would.
  it('answers POST as GET whatever the body and its content type', async () => {
    const realToken = userinfoToken;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<'valid' | 'none' | 'invalid'>('valid', 'none', 'invalid'),
        fc.option(
          fc.constantFrom(
            'application/json',
            'application/json; charset=utf-8',
            'application/x-www-form-urlencoded',
            'text/plain',
            'multipart/form-data; boundary=x',
            'application/octet-stream',
            'application/jwt',
          ),
          { nil: undefined },
        ),
        fc.oneof(
          fc.constantFrom('', '{}', '{', 'null', '[]', 'access_token=x', '--x--'),
          fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
          weird,
        ),
        async (token, type, body) => {
          const headers: Record<string, string> = {};
          if (token !== 'none') headers.authorization = `Bearer ${token === 'valid' ? realToken : 'not-a-token'}`;
          const asGet = await fetch(`${server.baseUrl}/userinfo`, { headers });
          await asGet.arrayBuffer();
          if (type !== undefined) headers['content-type'] = type;
          const response = await fetch(`${server.baseUrl}/userinfo`, {
            method: 'POST',
            headers,
            body: new TextEncoder().encode(body),
            redirect: 'manual',
          });
          const text = await response.text();
          const context = describeExchange(
            `POST /userinfo (token ${token}) content-type=${JSON.stringify(type)}\n${JSON.stringify(body)}`,
            response,
            text,
          );
          expectNoServerError(response, context);
          expect(response.status, context).toBe(asGet.status);
          if (response.status !== 200) {
            expect(response.headers.get('www-authenticate') ?? '', context).toMatch(/^Bearer/);
            expectErrorBody(text, response, context);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
