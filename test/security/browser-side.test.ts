/**
 * Attacks through the browser (docs/design.md §4): cross-site scripting through every value the
 * pages render, login CSRF with a foreign request_id, cross-site submission of the continue
 * form, and the binding cookie's attributes (theft by script, cross-site sending, tossing).
 *
 * Related tests elsewhere: test/authorize.test.ts "escapes the client name", "escapes every
 * value it renders on the error page", "sets an HttpOnly SameSite=Lax binding cookie …";
 * test/continue.test.ts "releases the code only to the browser holding the binding cookie
 * (login CSRF)", "refuses a form posted from another site", "accepts Origin: null (…) unless
 * the browser says cross-site"; test/browser.test.ts (the flow in real Chromium). The tests
 * below cover every rendered value and each forged header separately.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/web/html.ts';
import {
  authenticate,
  authorizeUrl,
  checkStatus,
  continueFlow,
  metaContent,
  type Party,
  pkcePair,
  postForm,
  setupParty,
  startFlow,
} from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { expectErrorPage } from './support.ts';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
});
afterAll(() => server?.close());

const SCRIPT = '<script>alert(1)</script>';
const ATTRIBUTE_BREAK = '"><img src=x onerror=alert(1)>';
const SINGLE_QUOTE_BREAK = "'><svg onload=alert(1)>";
const PAYLOADS = [SCRIPT, ATTRIBUTE_BREAK, SINGLE_QUOTE_BREAK];

/** The raw payload is absent, its escaped form is present; nothing executable slipped through. */
function expectEscaped(page: string, payload: string, context: string) {
  expect(page, context).not.toContain(payload);
  expect(page, context).toContain(escapeHtml(payload));
  expect(page, context).not.toMatch(/<script>alert|<img src=x|<svg onload/i);
  // The only script on our pages is the external one (beside it, the data block the original
  // service's SDKs read, never executed: test/original-sdk-compat.test.ts).
  for (const tag of page.match(/<script\b[^>]*>/gi) ?? [])
    expect(
      ['<script src="/assets/authorize.js" defer>', '<script type="text/plain" id="auth-request">'],
      context,
    ).toContain(tag);
}

describe('cross-site scripting through rendered values', () => {
  it('XSS via the client name: escaped on the authorization page (title, heading, meta) and on the confirmation page', async () => {
    const name = `${SCRIPT}${ATTRIBUTE_BREAK}${SINGLE_QUOTE_BREAK}`;
    const evil = { ...party, ...(await server.createClient({ name })) };
    const started = await startFlow(server, evil);
    expectEscaped(started.page, SCRIPT, 'authorization page');
    expectEscaped(started.page, ATTRIBUTE_BREAK, 'authorization page');
    expectEscaped(started.page, SINGLE_QUOTE_BREAK, 'authorization page');
    expect(metaContent(started.page, 'client-name')).toBe(escapeHtml(name));
    expect(started.page).toContain(`<title>Authorize ${escapeHtml(name)} — agentauth</title>`);

    const pending = await (await continueFlow(server, started)).text();
    expectEscaped(pending, ATTRIBUTE_BREAK, 'continue-with-pending page');

    const manual = { ...party, ...(await server.createClient({ name, approval: 'manual' })) };
    const confirm = await startFlow(server, manual);
    await authenticate(server, manual, confirm.requestId);
    const page = await (await continueFlow(server, confirm)).text();
    expect(page).toContain('id="agent-details"');
    for (const payload of PAYLOADS) expectEscaped(page, payload, 'confirmation page');
  });

  it('XSS via the agent name, owner email and model on the confirmation page (approval=manual)', async () => {
    const agent = await server.createAgent({
      name: SCRIPT,
      ownerEmail: `"><svg/onload=alert(1)>@evil.example`,
      ownerName: SINGLE_QUOTE_BREAK,
    });
    const manual = { ...agent, ...(await server.createClient({ approval: 'manual' })) };
    const started = await startFlow(server, manual);
    expect((await authenticate(server, manual, started.requestId, ATTRIBUTE_BREAK)).status).toBe(200);
    const response = await continueFlow(server, started);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain(`<dd id="agent-name">${escapeHtml(SCRIPT)} <code>${manual.agentId}</code></dd>`);
    expect(page).toContain(
      `<dd id="agent-owner">${escapeHtml(`${SINGLE_QUOTE_BREAK} <"><svg/onload=alert(1)>@evil.example>`)}</dd>`,
    );
    expect(page).toContain(`<dd id="agent-model">${escapeHtml(ATTRIBUTE_BREAK)}</dd>`);
    expectEscaped(page, SCRIPT, 'agent name');
    expectEscaped(page, ATTRIBUTE_BREAK, 'model');
    expectEscaped(page, SINGLE_QUOTE_BREAK, 'owner name');
    expect(page).not.toContain('<svg/onload');
  });

  it('XSS via scope: only known scopes reach a page, and an unknown value echoed in the error description is escaped (text and meta attribute)', async () => {
    const base = {
      client_id: party.clientId,
      redirect_uri: party.redirectUri,
      response_type: 'code',
      state: 's',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    };
    for (const payload of [
      '<script>alert(1)</script>',
      '"><svg/onload=alert(1)>',
      "'><svg/onload=alert(1)>",
      `openid ${SCRIPT}`,
      `openid ${ATTRIBUTE_BREAK}`,
    ]) {
      const response = await fetch(authorizeUrl(server, { ...base, scope: payload }), { redirect: 'manual' });
      const { page, description } = await expectErrorPage(response, 400, 'invalid_scope', payload);
      expect(page, payload).not.toMatch(/<script>alert|<svg\/onload|<img src=x/);
      expect(description, payload).not.toMatch(/[<>"']/);
      expect(page, payload).toMatch(/&lt;(script|svg|img)/);
    }
  });

  it('XSS via the other /authorize parameters: none is echoed unescaped on the error page', async () => {
    const good = {
      client_id: party.clientId,
      redirect_uri: party.redirectUri,
      response_type: 'code',
      state: 's',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    };
    for (const name of [
      'client_id',
      'redirect_uri',
      'response_type',
      'code_challenge',
      'code_challenge_method',
      'nonce',
      'state',
    ]) {
      for (const payload of PAYLOADS) {
        const response = await fetch(
          authorizeUrl(server, { ...good, [name]: payload, ...(name === 'state' ? { scope: 'bogus' } : {}) }),
          { redirect: 'manual' },
        );
        const page = await response.text();
        expect(page, `${name}=${payload}`).not.toContain(payload);
        expect(page, `${name}=${payload}`).not.toMatch(/<script>alert|<img src=x|<svg onload/);
      }
    }
  });

  it('state is never rendered on any page (authorization, pending, confirmation, error), raw, escaped or encoded', async () => {
    const state = `STATE-${SCRIPT}-${ATTRIBUTE_BREAK}-marker`;
    const forms = [state, escapeHtml(state), encodeURIComponent(state), 'STATE-', 'marker'];
    const pages: Array<[string, string]> = [];
    const started = await startFlow(server, party, { state });
    pages.push(['authorization page', started.page]);
    pages.push(['continue-with-pending page', await (await continueFlow(server, started)).text()]);
    const manual = { ...party, ...(await server.createClient({ approval: 'manual' })) };
    const confirm = await startFlow(server, manual, { state });
    await authenticate(server, manual, confirm.requestId);
    pages.push(['confirmation page', await (await continueFlow(server, confirm)).text()]);
    pages.push([
      'error page (bad scope)',
      await (
        await fetch(
          authorizeUrl(server, {
            client_id: party.clientId,
            redirect_uri: party.redirectUri,
            response_type: 'code',
            state,
            code_challenge: pkcePair().challenge,
            code_challenge_method: 'S256',
            scope: 'bogus',
          }),
        )
      ).text(),
    ]);
    pages.push([
      'error page (continue from another browser)',
      await (await continueFlow(server, { requestId: started.requestId, cookie: '' })).text(),
    ]);
    for (const [name, page] of pages)
      for (const form of forms) expect(page, `${name} contains ${form}`).not.toContain(form);
  });
});

describe('login CSRF and cross-site submission of the continue form', () => {
  async function authenticatedFlow() {
    const started = await startFlow(server, party);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    return started;
  }

  it("login CSRF via a foreign request_id: the victim's browser (its own cookie, no cookie, or forged ones) submitting the attacker's request_id gets 403, no code", async () => {
    const attacker = await authenticatedFlow();
    const victim = await startFlow(server, party);
    const stored = (await server.ctx.store.requests.find(attacker.requestId))!;
    const cookieName = attacker.cookie.split('=')[0]!;
    const forged = [
      victim.cookie,
      '',
      `${cookieName}=`,
      `${cookieName}=${stored.browser_digest}`,
      `${cookieName}=${attacker.requestId}`,
      `${cookieName}=${'A'.repeat(43)}`,
      `${cookieName}=${attacker.cookie.split('=')[1]!.toLowerCase()}`,
    ];
    for (const cookie of forged) {
      for (const action of ['approve', 'cancel']) {
        const response = await postForm(
          server,
          '/authorize/continue',
          { request_id: attacker.requestId, action },
          cookie ? { cookie } : {},
        );
        const { page } = await expectErrorPage(
          response,
          403,
          'access_denied',
          `cookie ${JSON.stringify(cookie)} action ${action}`,
        );
        expect(page).not.toContain('cod_');
      }
    }
    // Nothing changed: no code was issued, the request was not cancelled.
    expect((await checkStatus(server, attacker.requestId)).body.status).toBe('authenticated');
    expect((await continueFlow(server, attacker)).status).toBe(302);
  });

  it.each([
    ['Origin of another site', { origin: 'https://evil.example' }],
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site (a sibling subdomain)', { 'sec-fetch-site': 'same-site' }],
    ['both, as a browser sends them', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
    [
      'Origin: null with Sec-Fetch-Site: cross-site (sandboxed iframe, data: URL)',
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
    ],
    ['our host on another port', { origin: 'http://127.0.0.1:1' }],
    ['our origin as a prefix of the attacker origin', { origin: 'ORIGIN.evil.example' }],
  ])(
    'cross-site submission of the continue form (%s) gets 403 for approve and cancel, and the request is untouched',
    async (_case, headers: Record<string, string>) => {
      const started = await authenticatedFlow();
      const forged = Object.fromEntries(
        Object.entries(headers).map(([k, v]) => [k, v.replace('ORIGIN', server.baseUrl)]),
      );
      for (const action of ['approve', 'cancel']) {
        const response = await postForm(
          server,
          '/authorize/continue',
          { request_id: started.requestId, action },
          { cookie: started.cookie, ...forged },
        );
        await expectErrorPage(response, 403, 'access_denied', `${JSON.stringify(forged)} ${action}`);
      }
      expect((await checkStatus(server, started.requestId)).body.status).toBe('authenticated');
      // Control: the same browser posting from our own page continues.
      const own = await postForm(
        server,
        '/authorize/continue',
        { request_id: started.requestId },
        { cookie: started.cookie, origin: server.baseUrl, 'sec-fetch-site': 'same-origin' },
      );
      expect(own.status).toBe(302);
    },
  );
});

describe('the browser binding cookie', () => {
  function attributes(setCookie: string): { name: string; value: string; attrs: Map<string, string> } {
    const [pair, ...rest] = setCookie.split(';').map((part) => part.trim());
    const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)];
    const attrs = new Map(rest.map((part) => [part.split('=')[0]!.toLowerCase(), part.split('=').slice(1).join('=')]));
    return { name, value, attrs };
  }

  it('cookie theft and cross-site sending: the binding cookie is HttpOnly and SameSite=Lax, host-only, Path=/', async () => {
    const { response } = await startFlow(server, party);
    const cookie = attributes(response.headers.get('set-cookie')!);
    expect(cookie.name).toBe('agentauth_browser');
    expect(cookie.attrs.has('httponly')).toBe(true);
    expect(cookie.attrs.get('samesite')?.toLowerCase()).toBe('lax');
    expect(cookie.attrs.get('path')).toBe('/');
    expect(cookie.attrs.has('domain')).toBe(false);
  });

  describe('under an https BASE_URL', () => {
    let secure: TestServer;
    let target: TestServer;
    let secureParty: Party;
    beforeAll(async () => {
      secure = await startTestServer({ env: { BASE_URL: 'https://auth.example.test' } });
      // Same issuer, reached over plain HTTP on its own address (the test plays the TLS proxy).
      target = { ...secure, baseUrl: secure.url } as TestServer;
      secureParty = await setupParty(secure);
    });
    afterAll(() => secure?.close());

    it('the binding cookie is __Host- prefixed, Secure, HttpOnly, SameSite=Lax, Path=/ and has no Domain', async () => {
      const { response } = await startFlow(target, secureParty);
      const setCookie = response.headers.get('set-cookie')!;
      const cookie = attributes(setCookie);
      expect(cookie.name, setCookie).toBe('__Host-agentauth_browser');
      expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
      expect(cookie.attrs.has('secure'), setCookie).toBe(true);
      expect(cookie.attrs.has('httponly'), setCookie).toBe(true);
      expect(cookie.attrs.get('samesite')?.toLowerCase(), setCookie).toBe('lax');
      expect(cookie.attrs.get('path'), setCookie).toBe('/');
      expect(cookie.attrs.has('domain'), setCookie).toBe(false);
    });

    it('cookie tossing: a binding planted under the unprefixed name (settable from a sibling subdomain) is ignored, so the attacker cannot continue the victim’s request', async () => {
      const planted = 'P'.repeat(43);
      const { challenge } = pkcePair();
      const response = await fetch(
        authorizeUrl(target, {
          client_id: secureParty.clientId,
          redirect_uri: secureParty.redirectUri,
          response_type: 'code',
          state: 's',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        }),
        { headers: { cookie: `agentauth_browser=${planted}` } },
      );
      const page = await response.text();
      const issued = attributes(response.headers.get('set-cookie')!);
      expect(issued.name).toBe('__Host-agentauth_browser');
      expect(issued.value).not.toBe(planted);
      const requestId = metaContent(page, 'request-id')!;
      expect((await authenticate(target, secureParty, requestId)).status).toBe(200);
      for (const cookie of [`agentauth_browser=${planted}`, `__Host-agentauth_browser=${planted}`]) {
        const attempt = await postForm(target, '/authorize/continue', { request_id: requestId }, { cookie });
        await expectErrorPage(attempt, 403, 'access_denied', cookie);
      }
      const victim = await postForm(
        target,
        '/authorize/continue',
        { request_id: requestId },
        {
          cookie: `__Host-agentauth_browser=${issued.value}`,
          origin: 'https://auth.example.test',
          'sec-fetch-site': 'same-origin',
        },
      );
      expect(victim.status).toBe(302);
    });

    it('under https, an Origin of the plain-http issuer is foreign: 403', async () => {
      const started = await startFlow(target, secureParty);
      await authenticate(target, secureParty, started.requestId);
      const response = await postForm(
        target,
        '/authorize/continue',
        { request_id: started.requestId },
        { cookie: started.cookie, origin: 'http://auth.example.test' },
      );
      await expectErrorPage(response, 403, 'access_denied');
    });
  });
});
