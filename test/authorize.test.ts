/** GET /authorize: docs/contract.md's error rows, the page, and docs/design.md §4. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeUrl, metaContent, type Party, pkcePair, setupParty } from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { digest } from '../src/crypto.ts';

let server: TestServer;
let party: Party;
let inactiveClientId: string;
const { challenge } = pkcePair();

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
  const inactive = await server.createClient();
  await server.ctx.store.clients.update(inactive.clientId, { status: 'inactive' });
  inactiveClientId = inactive.clientId;
});
afterAll(() => server.close());

function valid(): Record<string, string | undefined> {
  return {
    client_id: party.clientId,
    redirect_uri: party.redirectUri,
    response_type: 'code',
    state: 'abc123',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
}

async function get(
  params: Record<string, string | undefined>,
  extra = '',
): Promise<{ status: number; page: string; response: Response }> {
  const response = await fetch(authorizeUrl(server, params) + extra, { redirect: 'manual' });
  return { status: response.status, page: await response.text(), response };
}

async function expectErrorPage(
  params: Record<string, string | undefined>,
  error: string,
  description: RegExp,
  extra = '',
) {
  const { status, page, response } = await get(params, extra);
  expect(status).toBe(400);
  expect(response.headers.get('location')).toBeNull();
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  expect(metaContent(page, 'error')).toBe(error);
  expect(metaContent(page, 'error-description')).toMatch(description);
  expect(page).toContain(`<code id="error">${error}</code>`);
  expect(metaContent(page, 'request-id')).toBeUndefined();
}

describe('GET /authorize errors (docs/contract.md table)', () => {
  it.each(['client_id', 'redirect_uri', 'response_type', 'state', 'code_challenge', 'code_challenge_method'])(
    '400 invalid_request when %s is missing',
    async (name) => {
      const params = valid();
      delete params[name];
      await expectErrorPage(params, 'invalid_request', new RegExp(`${name} is required`));
    },
  );

  it('400 invalid_client for an unknown client', async () => {
    await expectErrorPage({ ...valid(), client_id: 'cli_nobody' }, 'invalid_client', /unknown or inactive/);
  });

  it('400 invalid_client for an inactive client', async () => {
    await expectErrorPage({ ...valid(), client_id: inactiveClientId }, 'invalid_client', /unknown or inactive/);
  });

  it('400 unsupported_response_type when response_type is not code', async () => {
    await expectErrorPage({ ...valid(), response_type: 'token' }, 'unsupported_response_type', /must be code/);
  });

  it('400 invalid_request for code_challenge_method plain (S256 only)', async () => {
    await expectErrorPage({ ...valid(), code_challenge_method: 'plain' }, 'invalid_request', /S256/);
  });

  it('400 invalid_request for a code_challenge that is not a base64url SHA-256', async () => {
    await expectErrorPage({ ...valid(), code_challenge: 'short' }, 'invalid_request', /code_challenge/);
  });

  it.each([
    ['an unregistered URI', 'https://evil.example/callback'],
    ['a trailing slash', 'http://localhost:8080/callback/'],
    ['an extra query', 'http://localhost:8080/callback?x=1'],
    ['another port', 'http://localhost:8081/callback'],
    ['userinfo', 'http://evil@localhost:8080/callback'],
  ])('400 invalid_request, never a redirect, for a redirect_uri with %s', async (_case, redirectUri) => {
    await expectErrorPage({ ...valid(), redirect_uri: redirectUri }, 'invalid_request', /redirect_uri/);
  });

  it('checks the client before the redirect_uri, and both before anything else', async () => {
    await expectErrorPage(
      { client_id: 'cli_nobody', redirect_uri: 'https://evil.example/', response_type: 'token' },
      'invalid_client',
      /unknown/,
    );
    await expectErrorPage(
      { ...valid(), redirect_uri: 'https://evil.example/', response_type: 'token' },
      'invalid_request',
      /redirect_uri/,
    );
  });
});

describe('GET /authorize decisions (docs/design.md §4)', () => {
  it('a parameter given twice is invalid_request', async () => {
    await expectErrorPage(valid(), 'invalid_request', /state was given more than once/, '&state=again');
  });

  it('an unknown scope value is invalid_scope', async () => {
    await expectErrorPage({ ...valid(), scope: 'openid admin' }, 'invalid_scope', /admin/);
  });

  it('state may be any text without control characters; a control character or broken UTF-8 is invalid_request', async () => {
    for (const state of ['a b&c=d/é+%', '日本語 ✓ 🙂', '"<>\\`{}|^'])
      expect((await get({ ...valid(), state })).status, state).toBe(200);
    for (const state of ['line\nbreak', 'tab\there', 'del\x7f', 'c1\x85'])
      await expectErrorPage({ ...valid(), state }, 'invalid_request', /state must not contain control characters/);
    const { state: _omitted, ...rest } = valid();
    await expectErrorPage(rest, 'invalid_request', /state must be percent-encoded UTF-8/, '&state=%C3%28');
    await expectErrorPage(rest, 'invalid_request', /state must be percent-encoded UTF-8/, '&state=ok%ED%A0%80');
  });

  it('login_hint must be an agent_id', async () => {
    for (const login_hint of ['ada@example.com', 'agt_', 'agt_a b', `agt_${'a'.repeat(130)}`]) {
      await expectErrorPage({ ...valid(), login_hint }, 'invalid_request', /login_hint/);
    }
    expect((await get({ ...valid(), login_hint: 'agt_AbC-_9' })).status).toBe(200);
  });

  it('unknown parameters are ignored', async () => {
    expect((await get({ ...valid(), prompt: 'consent', foo: 'bar' })).status).toBe(200);
  });

  it('escapes every value it renders on the error page', async () => {
    const { page } = await get({ ...valid(), scope: '<script>alert(1)</script>' });
    expect(page).not.toContain('<script>alert(1)</script>');
    expect(page).toContain('&lt;script&gt;');
  });
});

describe('the authorization page', () => {
  it('carries the request id and agent metadata, and stores a pending request', async () => {
    const { status, page, response } = await get({ ...valid(), scope: 'openid email', nonce: 'n-123' });
    expect(status).toBe(200);
    const requestId = metaContent(page, 'request-id')!;
    expect(requestId).toMatch(/^req_[A-Za-z0-9_-]{32}$/);
    expect(metaContent(page, 'agent-authenticate-endpoint')).toBe(`${server.baseUrl}/api/agent/authenticate`);
    expect(metaContent(page, 'client-name')).toBe('Test App');
    expect(metaContent(page, 'redirect-host')).toBe('localhost:8080');
    expect(metaContent(page, 'scope')).toBe('openid email');
    expect(page).toMatch(/<form method="post" action="\/authorize\/continue"/);
    expect(page).toContain('<script src="/assets/authorize.js" defer></script>');
    const stored = await server.ctx.store.requests.find(requestId);
    expect(stored).toMatchObject({
      status: 'pending',
      client_id: party.clientId,
      scope: 'openid email',
      nonce: 'n-123',
      state: 'abc123',
    });
    expect(stored!.expires_at - stored!.created_at).toBe(600);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('defaults scope to openid email profile', async () => {
    const { page } = await get(valid());
    expect(metaContent(page, 'scope')).toBe('openid email profile');
  });

  it('sets an HttpOnly SameSite=Lax binding cookie whose digest is stored, and reuses it', async () => {
    const first = await get(valid());
    const cookie = first.response.headers.get('set-cookie')!;
    // It outlives the request (600 s) by a day, so that Cancel after expiry still knows this
    // browser (issue 22: it used to expire with the request).
    expect(cookie).toMatch(
      /^agentauth_browser=[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}; Max-Age=87000; Path=\/; HttpOnly; SameSite=Lax$/,
    );
    const value = cookie.split(';')[0]!;
    expect((await server.ctx.store.requests.find(metaContent(first.page, 'request-id')!))!.browser_digest).toBe(
      digest(value.slice('agentauth_browser='.length)),
    );
    const second = await fetch(authorizeUrl(server, valid()), { headers: { cookie: value } });
    expect(second.headers.get('set-cookie')!.split(';')[0]).toBe(value);
  });

  it('replaces a binding cookie it did not issue (fixation): planted values are never bound to a request', async () => {
    const issued = (await get(valid())).response.headers
      .get('set-cookie')!
      .split(';')[0]!
      .slice('agentauth_browser='.length);
    const [random] = issued.split('.');
    const planted = ['A'.repeat(43), `${random}.${'B'.repeat(43)}`, `${random}`, `${issued}.x`, 'anything'];
    for (const value of planted) {
      const response = await fetch(authorizeUrl(server, valid()), {
        headers: { cookie: `agentauth_browser=${value}` },
      });
      expect(response.status).toBe(200);
      const replaced = response.headers.get('set-cookie')!.split(';')[0]!.slice('agentauth_browser='.length);
      expect(replaced, value).not.toBe(value);
      const requestId = metaContent(await response.text(), 'request-id')!;
      const stored = (await server.ctx.store.requests.find(requestId))!.browser_digest;
      expect(stored).toBe(digest(replaced));
      expect(stored).not.toBe(digest(value));
    }
  });

  it('sends the security headers of docs/design.md §4', async () => {
    for (const { response } of [await get(valid()), await get({ ...valid(), client_id: 'cli_nobody' })]) {
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
    }
  });

  it('lets the continue form reach the client origin (CSP form-action)', async () => {
    const { response } = await get(valid());
    expect(response.headers.get('content-security-policy')).toContain("form-action 'self' http://localhost:8080");
  });

  it('escapes the client name', async () => {
    const evil = await server.createClient({ name: '<img src=x onerror=alert(1)> "quoted"' });
    const { page } = await get({ ...valid(), client_id: evil.clientId, redirect_uri: evil.redirectUri });
    expect(page).not.toContain('<img src=x');
    expect(metaContent(page, 'client-name')).toBe('&lt;img src=x onerror=alert(1)&gt; &quot;quoted&quot;');
  });
});

describe('"Back to <site>" on the 400 page (issue 22, docs/design.md §4)', () => {
  async function backLink(page: string): Promise<URL | undefined> {
    // The link is to our /authorize/return with a sealed ticket (the state is never in a page);
    // following it must answer the 302 to the website.
    const href = /<a class="button" id="back-to-site" href="([^"]*)">/.exec(page)?.[1];
    if (href === undefined) return undefined;
    expect(href).toMatch(/^\/authorize\/return\?ticket=[A-Za-z0-9_.-]+$/);
    const response = await fetch(new URL(href, server.baseUrl), { redirect: 'manual' });
    expect(response.status).toBe(302);
    return new URL(response.headers.get('location')!);
  }

  it('is offered once the client and redirect_uri are known good, carrying the RFC 6749 §4.1.2.1 error response', async () => {
    for (const [params, error] of [
      [{ ...valid(), code_challenge: 'short' }, 'invalid_request'],
      [{ ...valid(), response_type: 'token' }, 'unsupported_response_type'],
      [{ ...valid(), scope: 'openid admin' }, 'invalid_scope'],
      [{ ...valid(), code_challenge_method: undefined }, 'invalid_request'],
    ] as const) {
      const { status, page } = await get(params);
      expect(status).toBe(400);
      expect(metaContent(page, 'error')).toBe(error);
      expect(page).toContain('>Back to Test App</a>');
      const back = (await backLink(page))!;
      expect(back.origin + back.pathname).toBe(party.redirectUri);
      expect(back.searchParams.get('error')).toBe(error);
      expect(back.searchParams.get('error_description')).toBe(metaContent(page, 'error-description'));
      expect(back.searchParams.get('state')).toBe('abc123');
      expect(back.searchParams.get('iss')).toBe(server.baseUrl);
      // The developer's words stay on the page, under the person's.
      expect(page).toContain('Details for the website');
    }
  });

  it('carries no state when the state itself is missing or unusable', async () => {
    for (const params of [
      { ...valid(), state: undefined },
      { ...valid(), state: 'bad\u0001state' },
    ]) {
      const { status, page } = await get(params);
      expect(status).toBe(400);
      const back = (await backLink(page))!;
      expect(back.searchParams.get('error')).toBe('invalid_request');
      expect(back.searchParams.has('state')).toBe(false);
    }
  });

  it('is never offered before the client and redirect_uri are proven (no open redirect)', async () => {
    for (const params of [
      { ...valid(), client_id: 'cli_nobody' },
      { ...valid(), client_id: inactiveClientId },
      { ...valid(), redirect_uri: 'https://evil.example/callback' },
      { ...valid(), redirect_uri: undefined },
    ]) {
      const { status, page } = await get(params);
      expect(status).toBe(400);
      expect(await backLink(page)).toBeUndefined();
      expect(page).not.toContain('evil.example/callback?');
    }
  });

  it('keeps the state out of the page: the link holds it sealed', async () => {
    const state = 'secret-state-marker';
    const { page } = await get({ ...valid(), state, code_challenge: 'short' });
    expect(page).not.toContain('secret-state');
    expect((await backLink(page))!.searchParams.get('state')).toBe(state);
  });

  it('/authorize/return refuses a tampered or foreign ticket, an expired one, and one whose website was switched off', async () => {
    const tampered = await fetch(new URL('/authorize/return?ticket=v1.abc.def.ghi.jkl', server.baseUrl), {
      redirect: 'manual',
    });
    expect(tampered.status).toBe(400);
    expect(metaContent(await tampered.text(), 'error')).toBe('invalid_request');

    const href = (page: string) => /id="back-to-site" href="([^"]*)"/.exec(page)![1]!.replace(/&amp;/g, '&');
    const follow = (link: string) => fetch(new URL(link, server.baseUrl), { redirect: 'manual' });

    const late = href((await get({ ...valid(), code_challenge: 'short' })).page);
    server.clock.advance(3601);
    try {
      const expired = await follow(late);
      expect(expired.status).toBe(400);
      expect(expired.headers.get('location')).toBeNull();
    } finally {
      server.clock.advance(-3601);
    }

    const other = await server.createClient({ name: 'Soon Gone' });
    const link = href(
      (await get({ ...valid(), client_id: other.clientId, redirect_uri: other.redirectUri, code_challenge: 'short' }))
        .page,
    );
    await server.ctx.store.clients.update(other.clientId, { status: 'inactive' });
    const gone = await follow(link);
    expect(gone.status).toBe(400);
    expect(gone.headers.get('location')).toBeNull();
    expect(metaContent(await gone.text(), 'error')).toBe('invalid_client');
  });
});
