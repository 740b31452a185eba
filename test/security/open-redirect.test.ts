/**
 * Open redirects through redirect_uri (RFC 9700 §4.1, §2.1: exact string matching; RFC 6749
 * §10.15; docs/design.md §4: nothing is ever redirected before the client and redirect_uri are
 * known good, and every validation failure is the 400 page).
 *
 * Every attack sends an otherwise valid authorization request whose redirect_uri differs from
 * the registered one, and expects the 400 HTML error page: no Location header, no request id,
 * and the attacker's URI nowhere in the page.
 *
 * Already covered elsewhere (not repeated here): test/authorize.test.ts
 * "400 invalid_request, never a redirect, for a redirect_uri with %s" (five near misses) and
 * test/properties.test.ts "answers 400 invalid_request, never 200, when redirect_uri differs
 * from the registered one in any way" (generated one-character edits).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../../src/domain/clients.ts';
import { redirectUriProblem } from '../../src/domain/rules/client.ts';
import {
  authenticate,
  authorizeUrl,
  continueFlow,
  metaContent,
  type Party,
  pkcePair,
  setupParty,
  startFlow,
} from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { expectErrorPage, expectNoLeak } from './support.ts';

let server: TestServer;
/** Registered: http://localhost:8080/callback */
let party: Party;
/** Registered: https://app.example/cb */
let httpsClient: { clientId: string; redirectUri: string };
/** Registered: http://[::1]:8080/callback */
let ipv6Client: { clientId: string; redirectUri: string };
const { challenge } = pkcePair();

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server, { redirectUris: ['http://localhost:8080/callback'] });
  httpsClient = await server.createClient({ redirectUris: ['https://app.example/cb'] });
  ipv6Client = await server.createClient({ redirectUris: ['http://[::1]:8080/callback'] });
});
afterAll(() => server?.close());

function params(clientId: string, redirectUri: string | undefined): Record<string, string | undefined> {
  return {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    state: 'xyz',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
}

/** The attack fails: 400 page, invalid_request, no Location, no request, the URI not echoed. */
async function expectRefused(clientId: string, redirectUri: string | undefined, url?: string) {
  const response = await fetch(url ?? authorizeUrl(server, params(clientId, redirectUri)), { redirect: 'manual' });
  const { page } = await expectErrorPage(
    response,
    400,
    'invalid_request',
    `redirect_uri=${JSON.stringify(redirectUri)}`,
  );
  expect(response.headers.get('refresh')).toBeNull();
  expect(page).not.toMatch(/http-equiv/i);
  expect(page).not.toContain('evil.example');
  expect(response.headers.get('set-cookie')).toBeNull();
}

const A = 'http://localhost:8080/callback';

describe('open redirect through redirect_uri at GET /authorize (exact matching, RFC 9700 §4.1.3)', () => {
  it('control: the registered redirect_uri itself is accepted (200 page, no redirect)', async () => {
    const response = await fetch(authorizeUrl(server, params(party.clientId, A)), { redirect: 'manual' });
    expect(response.status).toBe(200);
    expect(response.headers.get('location')).toBeNull();
    expect(metaContent(await response.text(), 'request-id')).toMatch(/^req_/);
  });

  it.each([
    ['an unregistered host', 'https://evil.example/callback'],
    ['an unregistered path on the registered origin', 'http://localhost:8080/other'],
    ['no redirect_uri at all (no default is ever used)', undefined],
    ['an empty redirect_uri', ''],
  ])('unregistered redirect_uri — %s — gets the 400 page, no Location', async (_case, uri) => {
    await expectRefused(party.clientId, uri);
  });

  it.each([
    ['trailing slash', `${A}/`],
    ['empty query', `${A}?`],
    ['upper-case host', 'http://LOCALHOST:8080/callback'],
    ['mixed-case host', 'http://LocalHost:8080/callback'],
    ['upper-case scheme', 'HTTP://localhost:8080/callback'],
    ['upper-case path', 'http://localhost:8080/CALLBACK'],
    ['extra path segment', `${A}/extra`],
    ['double slash in path', 'http://localhost:8080//callback'],
    ['dot segments', 'http://localhost:8080/x/../callback'],
    ['extra query parameter', `${A}?next=https://evil.example/`],
    ['different port', 'http://localhost:8081/callback'],
    ['port dropped', 'http://localhost/callback'],
    ['port with a leading zero', 'http://localhost:08080/callback'],
    ['https instead of the registered http', 'https://localhost:8080/callback'],
    ['a prefix of the registered URI', 'http://localhost:8080/call'],
    ['the registered URI as a prefix', `${A}evil`],
  ])('near-miss redirect_uri — %s — gets the 400 page, no Location', async (_case, uri) => {
    await expectRefused(party.clientId, uri);
  });

  it.each([
    ['http instead of the registered https (downgrade)', 'http://app.example/cb'],
    ['explicit default port :443', 'https://app.example:443/cb'],
    ['upper-case host', 'https://APP.example/cb'],
    ['trailing dot in the host', 'https://app.example./cb'],
    ['registered host as a subdomain of the attacker', 'https://app.example.evil.example/cb'],
    ['attacker subdomain of the registered host', 'https://evil.app.example/cb'],
  ])('near-miss of an https redirect_uri — %s — gets the 400 page', async (_case, uri) => {
    await expectRefused(httpsClient.clientId, uri);
  });

  it.each([
    ['registered authority as userinfo before the attacker host', 'http://localhost:8080@evil.example/callback'],
    ['attacker userinfo before the registered host', 'http://evil@localhost:8080/callback'],
    ['user and password', 'http://user:pass@localhost:8080/callback'],
    ['empty userinfo', 'http://@localhost:8080/callback'],
    ['registered authority and a colon as userinfo', 'http://localhost:8080:@evil.example/callback'],
  ])('userinfo in redirect_uri — %s — gets the 400 page', async (_case, uri) => {
    await expectRefused(party.clientId, uri);
  });

  it.each([
    ['encoded path letter', 'http://localhost:8080/%63allback'],
    ['encoded host letter', 'http://%6cocalhost:8080/callback'],
    ['encoded @ after the registered authority', 'http://localhost:8080%40evil.example/callback'],
    ['encoded / inside the path', 'http://localhost:8080/callback%2F..%2F..%2Fevil.example'],
    ['encoded / after the authority', 'http://localhost:8080%2Fcallback'],
    ['encoded colon before the port', 'http://localhost%3A8080/callback'],
    ['encoded NUL after the path', `${A}%00`],
    ['the whole URI percent-encoded once more', encodeURIComponent(A)],
    ['encoded fragment separator', `${A}%23@evil.example`],
  ])('percent-encoded variant — %s — gets the 400 page', async (_case, uri) => {
    await expectRefused(party.clientId, uri);
  });

  it.each([
    ['empty fragment', `${A}#`],
    ['fragment', `${A}#fragment`],
    ['fragment hiding an authority', `${A}#@evil.example`],
  ])('fragment in redirect_uri — %s — gets the 400 page', async (_case, uri) => {
    await expectRefused(party.clientId, uri);
  });

  it.each([
    ['javascript:', 'javascript:alert(document.domain)'],
    ['javascript: with the registered URI as a comment', `javascript://localhost:8080/callback%0aalert(1)`],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['data: with the registered URI', `data:,${A}`],
    ['file:', 'file:///etc/passwd'],
    ['vbscript:', 'vbscript:msgbox(1)'],
    ['custom scheme', 'com.evil.app:/callback'],
    ['custom scheme with the registered authority', 'evil://localhost:8080/callback'],
    ['ftp:', 'ftp://localhost:8080/callback'],
    ['scheme-relative', '//evil.example/callback'],
    ['relative path', '/callback'],
  ])('other scheme or relative reference — %s — gets the 400 page', async (_case, uri) => {
    await expectRefused(party.clientId, uri);
  });

  it.each([
    ['127.0.0.1 for localhost', 'http://127.0.0.1:8080/callback'],
    ['[::1] for localhost', 'http://[::1]:8080/callback'],
    ['IPv4-mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]:8080/callback'],
    ['0.0.0.0', 'http://0.0.0.0:8080/callback'],
    ['decimal IPv4', 'http://2130706433:8080/callback'],
    ['hexadecimal IPv4', 'http://0x7f000001:8080/callback'],
    ['localhost with a trailing dot', 'http://localhost.:8080/callback'],
    ['localhost as a subdomain of the attacker', 'http://localhost.evil.example:8080/callback'],
  ])('localhost confusion — %s — gets the 400 page', async (_case, uri) => {
    await expectRefused(party.clientId, uri);
  });

  it.each([
    ['expanded IPv6 loopback', 'http://[0:0:0:0:0:0:0:1]:8080/callback'],
    ['zero-compressed differently', 'http://[::0:1]:8080/callback'],
    ['upper-case hex', 'http://[::0001]:8080/callback'],
    ['localhost for [::1]', 'http://localhost:8080/callback'],
    ['127.0.0.1 for [::1]', 'http://127.0.0.1:8080/callback'],
    ['zone identifier', 'http://[::1%25eth0]:8080/callback'],
  ])('IPv6 loopback confusion — %s — gets the 400 page', async (_case, uri) => {
    await expectRefused(ipv6Client.clientId, uri);
  });

  it.each([
    ['backslash-@ after the authority', 'http://localhost:8080\\@evil.example'],
    ['backslash-@ with the path', 'http://localhost:8080\\@evil.example/callback'],
    ['backslashes for slashes', 'http:\\\\localhost:8080\\callback'],
    ['backslash dot segments', 'http://localhost:8080/callback\\..\\..\\evil.example'],
    ['slash-backslash scheme-relative', '/\\evil.example/callback'],
    ['tab inside the URI (removed by URL parsers)', 'http://localhost:8080/call\tback'],
    ['newline inside the URI (removed by URL parsers)', 'http://localhost:8080/call\nback'],
    ['leading space', ` ${A}`],
    ['trailing space', `${A} `],
    ['raw NUL', `${A}\u0000`],
  ])('parser confusion — %s — gets the 400 page', async (_case, uri) => {
    await expectRefused(party.clientId, uri);
  });

  it('parameter pollution: the registered redirect_uri plus an attacker one, in either order, gets the 400 page', async () => {
    const base = authorizeUrl(server, params(party.clientId, A));
    await expectRefused(party.clientId, A, `${base}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`);
    const withoutUri = authorizeUrl(server, params(party.clientId, undefined));
    await expectRefused(
      party.clientId,
      A,
      `${withoutUri}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}&redirect_uri=${encodeURIComponent(A)}`,
    );
  });

  it("another client's registered redirect_uri is not accepted for this client", async () => {
    await expectRefused(party.clientId, httpsClient.redirectUri);
  });

  it('an invalid request with an unknown client and an attacker redirect_uri is the 400 page (invalid_client), never a redirect', async () => {
    const response = await fetch(authorizeUrl(server, params('cli_unknown', 'https://evil.example/cb')), {
      redirect: 'manual',
    });
    const { page } = await expectErrorPage(response, 400, 'invalid_client');
    expect(page).not.toContain('evil.example');
  });

  it('errors after a good client and redirect_uri (unsupported response_type, PKCE, scope) are still the 400 page, not redirected to the client', async () => {
    for (const extra of [
      { response_type: 'token' },
      { code_challenge_method: 'plain' },
      { scope: 'admin' },
      { state: undefined },
    ]) {
      const response = await fetch(authorizeUrl(server, { ...params(party.clientId, A), ...extra }), {
        redirect: 'manual',
      });
      await expectErrorPage(response, 400, undefined, JSON.stringify(extra));
    }
  });
});

describe('registration refuses redirect URIs that could become open redirects', () => {
  const register = (uri: string) => registerClient(server.ctx, { name: 'Registration test', redirectUris: [uri] });

  it.each([
    ['https://app.example/cb#x', /fragment/],
    ['https://app.example/cb#', /fragment/],
    ['http://localhost:8080/callback#frag', /fragment/],
  ])('refuses a fragment: %s', async (uri, message) => {
    await expect(register(uri)).rejects.toThrow(message);
  });

  it.each([
    ['https://user@app.example/cb'],
    ['https://user:password@app.example/cb'],
    ['http://localhost:8080@evil.example/callback'],
    ['http://evil@localhost:8080/callback'],
  ])('refuses user information: %s', async (uri) => {
    await expect(register(uri)).rejects.toThrow(/user information/);
  });

  it.each([
    ['http://app.example/cb'],
    ['http://localhost.evil.example/cb'],
    ['http://127.0.0.2/cb'],
    ['http://0.0.0.0/cb'],
    ['http://[::ffff:127.0.0.1]/cb'],
    ['ftp://app.example/cb'],
    ['javascript:alert(1)'],
    ['data:text/html,<script>alert(1)</script>'],
    ['file:///etc/passwd'],
    ['com.example.app:/callback'],
  ])('refuses a non-https URI that is not loopback: %s', async (uri) => {
    await expect(register(uri)).rejects.toThrow(/https/);
  });

  it.each([
    ['https://app.example/cb?code=planted'],
    ['https://app.example/cb?a=1&state=fixed'],
    ['https://app.example/cb?iss=https%3A%2F%2Fevil.example'],
    ['http://localhost:8080/callback?error=x'],
    ['https://app.example/cb?error_description='],
  ])('refuses a query that already carries a parameter the server appends: %s', async (uri) => {
    await expect(register(uri)).rejects.toThrow(/must not already carry/);
  });

  it.each([['/callback'], ['//app.example/cb'], ['app.example/cb'], ['']])(
    'refuses a relative reference: %s',
    async (uri) => {
      await expect(register(uri)).rejects.toThrow(/absolute/);
    },
  );

  it.each([
    ['https://app.example/cb'],
    ['http://localhost:8080/callback'],
    ['http://127.0.0.1:8080/callback'],
    ['http://[::1]:8080/callback'],
    ['https://app.example/cb?codes=1&tenant=a'],
  ])('control: accepts %s', async (uri) => {
    await expect(register(uri)).resolves.toMatchObject({ client: { redirect_uris: [uri] } });
  });

  // WHATWG URL parsing silently repairs these (removes tab/newline, percent-encodes NUL and
  // spaces, strips leading spaces, reads "\\" as "/"), so redirectUriProblem sees a harmless
  // URL while the raw string is stored and later sent verbatim in the Location header, where
  // other parsers read it differently (Python's urllib: "http://localhost:8080\\@evil.example"
  // has the host evil.example) or Node refuses to send it (next test).
  it('refuses URIs that URL parsers repair or read differently (control characters, whitespace, backslash)', async () => {
    const candidates = [
      'http://localhost:8080/cb\u0000',
      'http://localhost:8080/cb\n',
      'http://localhost:8080/c\tb',
      'http://localhost:8080/c b',
      ' http://localhost:8080/cb',
      'http://localhost:8080\\@evil.example',
    ];
    const accepted = candidates.filter((uri) => redirectUriProblem(uri) === null);
    expect(accepted, 'redirectUriProblem accepted these').toEqual([]);
  });

  it('header injection through a registered redirect URI: a URI that cannot go into a Location header never turns the continue step into a 5xx', async () => {
    const uri = 'http://localhost:8080/cb\u0000x';
    let registered: Awaited<ReturnType<typeof register>>;
    try {
      registered = await register(uri);
    } catch {
      return; // refused at registration: the attack cannot be set up
    }
    const victim = { ...party, clientId: registered.client.id, clientSecret: registered.secret, redirectUri: uri };
    const started = await startFlow(server, victim);
    expect((await authenticate(server, victim, started.requestId)).status).toBe(200);
    const response = await continueFlow(server, started);
    const text = await response.text();
    expect(response.status, `POST /authorize/continue → ${response.status} ${text.slice(0, 300)}`).toBeLessThan(500);
    expectNoLeak(text);
  });
});
