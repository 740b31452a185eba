/** The browser's step: POST /authorize/continue (docs/design.md §4). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authenticate,
  checkStatus,
  continueFlow,
  metaContent,
  type Party,
  postForm,
  setupParty,
  startFlow,
} from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
});
afterAll(() => server.close());

async function expectPage(response: Response, status: number, error: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('location')).toBeNull();
  const page = await response.text();
  expect(metaContent(page, 'error')).toBe(error);
}

describe('POST /authorize/continue', () => {
  it('before the agent authenticated: shows the page again, still pending', async () => {
    const started = await startFlow(server, party);
    const response = await continueFlow(server, started);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(metaContent(page, 'request-id')).toBe(started.requestId);
    expect(page).toContain('has not authenticated yet');
    expect((await checkStatus(server, started.requestId)).body.status).toBe('pending');
  });

  it('releases the code only to the browser holding the binding cookie (login CSRF)', async () => {
    const attacker = await startFlow(server, party);
    await authenticate(server, party, attacker.requestId);
    // A victim's browser with its own cookie, or with none, submits the attacker's request_id.
    const victim = await startFlow(server, party);
    await expectPage(
      await continueFlow(server, { requestId: attacker.requestId, cookie: victim.cookie }),
      403,
      'access_denied',
    );
    await expectPage(await continueFlow(server, { requestId: attacker.requestId, cookie: '' }), 403, 'access_denied');
    expect((await checkStatus(server, attacker.requestId)).body.status).toBe('authenticated');
    expect((await continueFlow(server, attacker)).status).toBe(302);
  });

  it('refuses a form posted from another site', async () => {
    const started = await startFlow(server, party);
    await authenticate(server, party, started.requestId);
    const foreign = await postForm(
      server,
      '/authorize/continue',
      { request_id: started.requestId },
      { cookie: started.cookie, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    );
    await expectPage(foreign, 403, 'access_denied');
    const same = await postForm(
      server,
      '/authorize/continue',
      { request_id: started.requestId },
      { cookie: started.cookie, origin: server.baseUrl, 'sec-fetch-site': 'same-origin' },
    );
    expect(same.status).toBe(302);
  });

  it('accepts Origin: null (what browsers send under no-referrer) unless the browser says cross-site', async () => {
    const started = await startFlow(server, party);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    for (const site of ['cross-site', 'same-site']) {
      const refused = await postForm(
        server,
        '/authorize/continue',
        { request_id: started.requestId },
        { cookie: started.cookie, origin: 'null', 'sec-fetch-site': site },
      );
      expect(refused.status, `Sec-Fetch-Site: ${site}`).toBe(403);
    }
    const accepted = await postForm(
      server,
      '/authorize/continue',
      { request_id: started.requestId },
      { cookie: started.cookie, origin: 'null', 'sec-fetch-site': 'same-origin' },
    );
    expect(accepted.status).toBe(302);
    // Without Sec-Fetch-Site (plain http off localhost), the binding cookie decides.
    const other = await startFlow(server, party);
    await authenticate(server, party, other.requestId);
    expect(
      (await postForm(server, '/authorize/continue', { request_id: other.requestId }, { origin: 'null' })).status,
    ).toBe(403);
    expect(
      (
        await postForm(
          server,
          '/authorize/continue',
          { request_id: other.requestId },
          { cookie: other.cookie, origin: 'null' },
        )
      ).status,
    ).toBe(302);
  });

  it('Cancel redirects with access_denied, state and iss, and the request becomes error', async () => {
    const started = await startFlow(server, party, { state: 's&t=1' });
    const response = await continueFlow(server, started, { action: 'cancel' });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('s&t=1');
    expect(location.searchParams.get('iss')).toBe(server.baseUrl);
    expect(location.searchParams.get('code')).toBeNull();
    expect((await checkStatus(server, started.requestId)).body).toMatchObject({
      status: 'error',
      error: 'access_denied',
    });
  });

  it('a completed request cannot be continued again', async () => {
    const started = await startFlow(server, party);
    await authenticate(server, party, started.requestId);
    expect((await continueFlow(server, started)).status).toBe(302);
    await expectPage(await continueFlow(server, started), 409, 'request_already_used');
    await expectPage(await continueFlow(server, started, { action: 'cancel' }), 409, 'request_already_used');
  });

  it('an unknown request is a 400 page', async () => {
    await expectPage(await continueFlow(server, { requestId: 'req_unknown', cookie: '' }), 400, 'invalid_request');
  });

  it('keeps the registered redirect_uri query and adds code, state and iss', async () => {
    const client = await server.createClient({ redirectUris: ['https://app.example/cb?tenant=a%20b'] });
    const other = { ...party, ...client };
    const started = await startFlow(server, other);
    await authenticate(server, other, started.requestId);
    const location = (await continueFlow(server, started)).headers.get('location')!;
    expect(location.startsWith('https://app.example/cb?tenant=a%20b&code=cod_')).toBe(true);
  });

  it('returns a non-ASCII state byte-identical, percent-encoded, on success and on Cancel (SPEC: returned unchanged)', async () => {
    const state = 'a b&c=d/é+%';
    const encoded = 'state=a%20b%26c%3Dd%2F%C3%A9%2B%25';
    const approved = await startFlow(server, party, { state });
    await authenticate(server, party, approved.requestId);
    const cancelled = await startFlow(server, party, { state });
    for (const response of [
      await continueFlow(server, approved),
      await continueFlow(server, cancelled, { action: 'cancel' }),
    ]) {
      expect(response.status).toBe(302);
      const location = response.headers.get('location')!;
      expect(location).toContain(`&${encoded}&`);
      // Form-style and RFC 3986 decoders alike give back the exact value.
      expect(new URL(location).searchParams.get('state')).toBe(state);
      const raw = location
        .split('?')[1]!
        .split('&')
        .find((pair) => pair.startsWith('state='))!;
      expect(decodeURIComponent(raw.slice('state='.length))).toBe(state);
    }
  });

  it('approval=manual: shows who authenticated and waits for the confirmation', async () => {
    const manual = {
      ...(await server.createAgent({ name: 'Research bot', ownerEmail: 'grace@example.com' })),
      ...(await server.createClient({ approval: 'manual' })),
    };
    const started = await startFlow(server, manual);
    await authenticate(server, manual, started.requestId, 'model-x');
    const confirm = await continueFlow(server, started);
    expect(confirm.status).toBe(200);
    const page = await confirm.text();
    expect(page).toContain(`<dd id="agent-name">Research bot <code>${manual.agentId}</code></dd>`);
    expect(page).toContain('<dd id="agent-owner">Ada Lovelace &lt;grace@example.com&gt;</dd>');
    expect(page).toContain('<dd id="agent-model">model-x</dd>');
    expect(page).toContain('name="confirmed" value="1"');
    expect((await checkStatus(server, started.requestId)).body.status).toBe('authenticated');
    const approved = await continueFlow(server, started, { confirmed: '1' });
    expect(approved.status).toBe(302);
    expect(new URL(approved.headers.get('location')!).searchParams.get('code')).toMatch(/^cod_/);
  });

  describe('after the request ended (issue 22): say what happened, and send this browser back', () => {
    /** The "Back to <site>" link of an error page, decoded, or undefined. */
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

    it('Cancel after expiry, from the browser that started it: 302 to the site with access_denied, state and iss', async () => {
      const started = await startFlow(server, party, { state: 'late & slow=/' });
      server.clock.advance(601);
      try {
        const response = await continueFlow(server, started, { action: 'cancel' });
        expect(response.status).toBe(302);
        const location = new URL(response.headers.get('location')!);
        expect(location.origin + location.pathname).toBe(party.redirectUri);
        expect(location.searchParams.get('error')).toBe('access_denied');
        expect(location.searchParams.get('error_description')).toMatch(/expired/);
        expect(location.searchParams.get('state')).toBe('late & slow=/');
        expect(location.searchParams.get('iss')).toBe(server.baseUrl);
        expect(location.searchParams.get('code')).toBeNull();
        // The request stays what it became: expired.
        expect((await checkStatus(server, started.requestId)).body).toMatchObject({
          status: 'error',
          error: 'request_expired',
        });
      } finally {
        server.clock.advance(-601);
      }
    });

    it('Cancel after expiry without the binding cookie: the page says it expired, not "another browser", and leads nowhere', async () => {
      const started = await startFlow(server, party);
      server.clock.advance(601);
      try {
        const response = await continueFlow(server, { requestId: started.requestId, cookie: '' }, { action: 'cancel' });
        expect(response.status).toBe(400);
        expect(response.headers.get('location')).toBeNull();
        const page = await response.text();
        expect(metaContent(page, 'error')).toBe('request_expired');
        expect(page).not.toContain('another browser');
      } finally {
        server.clock.advance(-601);
      }
    });

    it('the expired page a browser without the cookie sees names the expiry and has no way back carrying the state', async () => {
      const started = await startFlow(server, party, { state: 'private-state' });
      server.clock.advance(601);
      try {
        const response = await continueFlow(server, { requestId: started.requestId, cookie: '' });
        expect(response.status).toBe(400);
        const page = await response.text();
        expect(metaContent(page, 'error')).toBe('request_expired');
        expect(page).toContain('This sign-in request expired');
        expect(await backLink(page)).toBeUndefined();
        expect(page).not.toContain('private-state');
      } finally {
        server.clock.advance(-601);
      }
    });

    it('Continue after expiry: a 400 page in words, with "Back to <site>" carrying the error response', async () => {
      const named = { ...party, ...(await server.createClient({ name: 'Acme Notes' })) };
      const started = await startFlow(server, named, { state: 's/1' });
      server.clock.advance(601);
      try {
        const response = await continueFlow(server, started);
        expect(response.status).toBe(400);
        expect(response.headers.get('location')).toBeNull();
        const page = await response.text();
        expect(metaContent(page, 'error')).toBe('request_expired');
        expect(page).toContain('<code id="error">request_expired</code>');
        expect(page).toContain('This sign-in request expired');
        expect(page).toContain('>Back to Acme Notes</a>');
        const back = (await backLink(page))!;
        expect(back.origin + back.pathname).toBe(named.redirectUri);
        expect(back.searchParams.get('error')).toBe('access_denied');
        expect(back.searchParams.get('state')).toBe('s/1');
        expect(back.searchParams.get('iss')).toBe(server.baseUrl);
      } finally {
        server.clock.advance(-601);
      }
    });

    it('Cancel of a request cancelled in another tab goes back again; Continue shows the page with the way back', async () => {
      const started = await startFlow(server, party, { state: 'twice' });
      expect((await continueFlow(server, started, { action: 'cancel' })).status).toBe(302);
      const again = await continueFlow(server, started, { action: 'cancel' });
      expect(again.status).toBe(302);
      expect(new URL(again.headers.get('location')!).searchParams.get('state')).toBe('twice');
      const approve = await continueFlow(server, started);
      expect(approve.status).toBe(400);
      const page = await approve.text();
      expect(metaContent(page, 'error')).toBe('access_denied');
      expect((await backLink(page))?.searchParams.get('state')).toBe('twice');
    });

    it('a completed request is not cancelled after the fact, and its page offers no way back', async () => {
      const started = await startFlow(server, party);
      await authenticate(server, party, started.requestId);
      expect((await continueFlow(server, started)).status).toBe(302);
      const cancel = await continueFlow(server, started, { action: 'cancel' });
      expect(cancel.status).toBe(409);
      expect(await backLink(await cancel.text())).toBeUndefined();
    });
  });
});
