/**
 * The whole flow in a real browser: playwright-core drives Debian's Chromium against a real
 * agentauth server, and the client's redirect URI is a real HTTP server on 127.0.0.1.
 * The test plays the agent: it reads the request id from the page's DOM and authenticates
 * over the back channel; the browser has to reach the callback on its own (docs/design.md §4).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, setAgentPolicy } from '../src/domain/agent-policy.ts';
import { decideApproval } from '../src/domain/approvals.ts';
import { authenticate, authorizeUrl, checkStatus, type Party, pkcePair, redeem } from './helpers/flow.ts';
import {
  ARRIVAL_TIMEOUT,
  type CallbackHit,
  type CallbackServer,
  cspViolations,
  haveChromium,
  launchChromium,
  startCallbackServer,
  type WatchedPage,
  watchedPage,
  closeAll,
} from './helpers/browser.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

// ---------------------------------------------------------------------------------------------

/** A state an OAuth client could send that needs careful encoding on every hop. */
const AWKWARD_STATE = 'a state with spaces & amp=equals/slash?q+plus%25';

describe.skipIf(!haveChromium)('the flow in a real browser (Chromium)', () => {
  let server: TestServer;
  let callback: CallbackServer;
  let browser: Browser;
  let party: Party;
  /** Console and errors of scenario a, checked in scenario e. */
  let scenarioA: WatchedPage | undefined;
  let scenarioADone = false;

  beforeAll(async () => {
    [server, callback, browser] = await Promise.all([startTestServer(), startCallbackServer(), launchChromium()]);
    party = {
      ...(await server.createClient({ name: 'Acme Notes', redirectUris: [callback.uri] })),
      ...(await server.createAgent({ name: 'Research bot' })),
    };
  });

  afterAll(() => closeAll(browser, callback, server));

  /** Opens /authorize in the page with a fresh PKCE pair. */
  async function openAuthorize(page: Page, forParty: Party, state: string) {
    const { verifier, challenge } = pkcePair();
    const url = authorizeUrl(server, {
      client_id: forParty.clientId,
      redirect_uri: forParty.redirectUri,
      response_type: 'code',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const response = await page.goto(url);
    expect(response?.status()).toBe(200);
    // The agent's view: the request id as the DOM carries it, not as a regex over the source.
    const requestId = await page.locator('meta[name="request-id"]').getAttribute('content');
    expect(requestId).toMatch(/^req_[A-Za-z0-9_-]+$/);
    return { verifier, requestId: requestId!, response: response! };
  }

  function isCallback(url: URL): boolean {
    return url.origin === callback.origin && url.pathname === '/callback';
  }

  /** Waits for the browser to be at the callback and returns what the callback server recorded. */
  async function arrival(watched: WatchedPage, state: string): Promise<{ query: URLSearchParams; hit: CallbackHit }> {
    const { page } = watched;
    try {
      await page.waitForURL(isCallback, { timeout: ARRIVAL_TIMEOUT });
    } catch (error) {
      // Say where the browser is stuck and what it complained about (a CSP block shows here).
      const heading = await page
        .locator('h1')
        .first()
        .textContent({ timeout: 500 })
        .catch(() => null);
      throw new Error(
        `the browser did not reach the callback: ${String(error).split('\n')[0]}\n  at: ${page.url()}\n  heading: ${heading}\n  console:\n    ${watched.console.join('\n    ')}\n  page errors: ${watched.errors.join('; ')}`,
      );
    }
    const query = new URL(page.url()).searchParams;
    const hits = callback.hits.filter((hit) => hit.query.get('state') === state);
    expect(hits).toHaveLength(1);
    const hit = hits[0]!;
    // What the browser shows and what the server received are the same.
    expect([...hit.query]).toEqual([...query]);
    expect(await page.locator('#callback').textContent()).toBe('Callback received');
    return { query, hit };
  }

  it('a. with JavaScript and approval=auto, the browser reaches the callback unaided once the agent has authenticated', async () => {
    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      scenarioA = watched;
      const { page } = watched;
      const { verifier, requestId } = await openAuthorize(page, party, AWKWARD_STATE);
      expect(await checkStatus(server, requestId)).toEqual({ status: 200, body: { status: 'pending' } });
      expect(await page.locator('#client-name').textContent()).toBe('Acme Notes');

      const auth = await authenticate(server, party, requestId, 'claude-sonnet-4');
      expect(auth.status).toBe(200);
      expect(await auth.json()).toMatchObject({ status: 'authenticated' });

      // Nobody clicks: the page's script polls /api/check-status and submits the form.
      const { query, hit } = await arrival(watched, AWKWARD_STATE);
      expect(query.get('code')).toMatch(/^cod_[A-Za-z0-9_-]{43}$/);
      expect(query.get('state')).toBe(AWKWARD_STATE);
      expect(query.get('iss')).toBe(server.baseUrl);
      expect(query.get('error')).toBeNull();
      // Referrer-Policy: no-referrer holds across the redirect.
      expect(hit.headers.referer).toBeUndefined();

      const token = await redeem(server, party, query.get('code')!, verifier);
      expect(token.status).toBe(200);
      const tokens = (await token.json()) as Record<string, unknown>;
      expect(tokens).toMatchObject({
        token_type: 'Bearer',
        access_token: expect.any(String),
        refresh_token: expect.any(String),
      });

      expect(await checkStatus(server, requestId)).toEqual({ status: 200, body: { status: 'completed' } });
      scenarioADone = true;
    } finally {
      await context.close();
    }
  });

  it('a2. the page says which agent signed in (name, owner, model) before the browser goes on', async () => {
    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      // Everything the page says in its status line, reported as it happens (the page leaves soon after).
      const said: string[] = [];
      await page.exposeFunction('reportStatus', (text: string) => said.push(text));
      const { requestId } = await openAuthorize(page, party, 'state-shows-agent');
      await page.evaluate(() => {
        const status = document.getElementById('status')!;
        const report = (window as unknown as { reportStatus(text: string): void }).reportStatus;
        new MutationObserver(() => report(status.textContent ?? '')).observe(status, {
          childList: true,
          characterData: true,
          subtree: true,
        });
      });
      expect((await authenticate(server, party, requestId, 'claude-opus')).status).toBe(200);
      await arrival(watched, 'state-shows-agent');
      expect(said).toContain(
        'Signed in by the agent Research bot of Ada Lovelace <ada@example.com> (claude-opus). Continuing…',
      );
      expect(cspViolations(watched)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('b. without JavaScript, clicking "Continue" after the agent authenticated reaches the callback', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      const state = 'no-js state & more=/';
      const { requestId } = await openAuthorize(page, party, state);
      expect((await authenticate(server, party, requestId)).status).toBe(200);

      // Without a script nothing happens by itself.
      await page.waitForTimeout(1_500);
      expect(isCallback(new URL(page.url()))).toBe(false);
      expect(callback.hits.some((hit) => hit.query.get('state') === state)).toBe(false);

      await page.click('#approve');
      const { query } = await arrival(watched, state);
      expect(query.get('code')).toMatch(/^cod_[A-Za-z0-9_-]{43}$/);
      expect(query.get('state')).toBe(state);
      expect(query.get('iss')).toBe(server.baseUrl);
      expect(await checkStatus(server, requestId)).toEqual({ status: 200, body: { status: 'completed' } });
      expect(cspViolations(watched)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('c. "Cancel" reaches the callback with error=access_denied, the state and iss', async () => {
    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      const state = 'cancel me & please=/';
      const { requestId } = await openAuthorize(page, party, state);

      await page.click('#cancel');
      const { query } = await arrival(watched, state);
      expect(query.get('error')).toBe('access_denied');
      expect(query.get('error_description')).toBe('The user cancelled the authorization request.');
      expect(query.get('state')).toBe(state);
      expect(query.get('iss')).toBe(server.baseUrl);
      expect(query.get('code')).toBeNull();

      const status = await checkStatus(server, requestId);
      expect(status).toEqual({
        status: 200,
        body: { status: 'error', error: 'access_denied', error_description: expect.any(String) },
      });
      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("c2. an owner's denial: the page says nothing was shared; Back tells the website the owner denied it", async () => {
    const asking = await server.createAgent({ name: 'Asking bot', ownerName: 'Ada' });
    await setAgentPolicy(server.ctx, asking.agentId, { ...DEFAULT_POLICY, websites: 'ask' });
    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      const state = 'deny me';
      const { requestId } = await openAuthorize(page, { ...party, ...asking }, state);
      expect(await page.getByRole('heading', { name: 'What Acme Notes will receive' }).isVisible()).toBe(true);
      const response = await authenticate(server, { ...party, ...asking }, requestId);
      expect(response.status).toBe(202);
      const { approval_id } = (await response.json()) as { approval_id: string };
      await decideApproval(server.ctx, approval_id, 'deny', 'acc_owner');

      await expect
        .poll(() => page.locator('#status').textContent(), { timeout: ARRIVAL_TIMEOUT })
        .toBe("The agent's owner denied this sign-in. Nothing was shared with Acme Notes.");
      // What the website would have received no longer shows: nothing will be.
      expect(await page.getByRole('heading', { name: 'What Acme Notes will receive' }).isVisible()).toBe(false);
      await page.click('#cancel');
      const { query } = await arrival(watched, state);
      expect(query.get('error')).toBe('access_denied');
      expect(query.get('error_description')).toBe("The agent's owner denied this sign-in.");
      expect(query.get('state')).toBe(state);
      expect(query.get('code')).toBeNull();
      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('d. approval=manual: the page shows who authenticated and waits for the click', async () => {
    const manual: Party = {
      ...(await server.createClient({ name: 'Careful Bank', redirectUris: [callback.uri], approval: 'manual' })),
      ...(await server.createAgent({
        name: 'Ledger agent',
        ownerEmail: 'grace@example.com',
        ownerName: 'Grace Hopper',
      })),
    };
    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      const state = 'manual approval & state=/';
      const { verifier, requestId } = await openAuthorize(page, manual, state);
      expect((await authenticate(server, manual, requestId, 'gpt-5-mini-2025')).status).toBe(200);

      // The script submits the form on its own; the server answers with the confirmation page.
      await page.locator('#agent-details').waitFor({ state: 'visible', timeout: ARRIVAL_TIMEOUT });
      expect(await page.locator('#agent-name').textContent()).toBe(`Ledger agent ${manual.agentId}`);
      expect(await page.locator('#agent-owner').textContent()).toContain('grace@example.com');
      expect(await page.locator('#agent-model').textContent()).toBe('gpt-5-mini-2025');
      expect(await page.locator('#client-name').textContent()).toBe('Careful Bank');

      // And stays there: no code without the person's click.
      await page.waitForTimeout(1_500);
      expect(isCallback(new URL(page.url()))).toBe(false);
      expect(callback.hits.some((hit) => hit.query.get('state') === state)).toBe(false);
      expect(await checkStatus(server, requestId)).toEqual({ status: 200, body: { status: 'authenticated' } });

      await page.click('#approve');
      const { query } = await arrival(watched, state);
      expect(query.get('code')).toMatch(/^cod_[A-Za-z0-9_-]{43}$/);
      expect(query.get('state')).toBe(state);
      expect(query.get('iss')).toBe(server.baseUrl);
      expect((await redeem(server, manual, query.get('code')!, verifier)).status).toBe(200);
      expect(await checkStatus(server, requestId)).toEqual({ status: 200, body: { status: 'completed' } });
      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('e. scenario a ran without CSP violations and without page errors', () => {
    expect(scenarioA, 'scenario a must have run').toBeDefined();
    expect(scenarioADone, 'scenario a must have completed').toBe(true);
    expect(cspViolations(scenarioA!)).toEqual([]);
    expect(scenarioA!.errors).toEqual([]);
    // Nothing else went wrong either; Chromium's own favicon requests (404) are no page's doing.
    expect(scenarioA!.console.filter((line) => line.startsWith('error:') && !line.includes('/favicon.ico'))).toEqual(
      [],
    );
    expect(scenarioA!.failed).toEqual([]);
  });

  it('g. the page learns of the authentication by push, without polling, and exposes window.authRequest', async () => {
    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      const requested: string[] = [];
      page.on('request', (request) => requested.push(new URL(request.url()).pathname));
      const state = 'pushed';
      const { requestId } = await openAuthorize(page, party, state);
      // What agents written for the original service read through the DevTools protocol.
      await page.waitForFunction(() => (window as unknown as { authRequest?: unknown }).authRequest !== undefined);
      expect(
        await page.evaluate(
          () => (window as unknown as { authRequest: { request_id: string } }).authRequest.request_id,
        ),
      ).toBe(requestId);
      await expect.poll(() => server.ctx.statusEvents.waiting).toBe(1);
      // Longer than the polling interval: a polling page would have asked by now.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect((await authenticate(server, party, requestId)).status).toBe(200);
      await arrival(watched, state);
      expect(requested).toContain('/api/check-status/events');
      expect(requested).not.toContain('/api/check-status');
      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('h. where push fails, the page falls back to polling and still continues', async () => {
    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      await page.route('**/api/check-status/events*', (route) => route.abort());
      const requested: string[] = [];
      page.on('request', (request) => requested.push(new URL(request.url()).pathname));
      const state = 'polled';
      const { requestId } = await openAuthorize(page, party, state);
      expect((await authenticate(server, party, requestId)).status).toBe(200);
      await arrival(watched, state);
      expect(requested).toContain('/api/check-status');
    } finally {
      await context.close();
    }
  });

  it('f. the authorization page cannot be framed', async () => {
    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      const { response } = await openAuthorize(page, party, 'framing');
      const headers = response.headers();
      expect(headers['x-frame-options']).toBe('DENY');
      const csp = headers['content-security-policy'] ?? '';
      expect(csp.split(';').map((directive) => directive.trim())).toContain("frame-ancestors 'none'");
      expect(headers['cache-control']).toContain('no-store');
      expect(headers['referrer-policy']).toBe('no-referrer');

      // And Chromium really refuses to show it in a frame of another origin.
      const framer = await context.newPage();
      const refusal = framer.waitForEvent('console', {
        predicate: (message) => /frame-ancestors|X-Frame-Options/.test(message.text()),
        timeout: 5_000,
      });
      await framer.setContent(`<iframe id="victim" src="${page.url().replace(/&/g, '&amp;')}"></iframe>`);
      expect((await refusal).text()).toMatch(/has been blocked|Refused to (frame|display)/);
      const frame = framer.frames().find((f) => f !== framer.mainFrame());
      expect(frame).toBeDefined();
      expect(await frame!.locator('meta[name="request-id"]').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('renders the authorization page and the 400 error page (screenshots for review in /tmp)', async () => {
    const context = await browser.newContext({ viewport: { width: 900, height: 800 } });
    try {
      const { page } = await watchedPage(context);
      await openAuthorize(page, party, 'screenshot');
      await page.screenshot({ path: '/tmp/authorize-page.png', fullPage: true });

      const response = await page.goto(
        authorizeUrl(server, {
          client_id: 'cli_unknown',
          redirect_uri: callback.uri,
          response_type: 'code',
          state: 's',
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        }),
      );
      expect(response?.status()).toBe(400);
      expect(await page.locator('meta[name="error"]').getAttribute('content')).toBe('invalid_client');
      expect(await page.locator('#error').textContent()).toBe('invalid_client');
      await page.screenshot({ path: '/tmp/error-page.png', fullPage: true });
      // The error page never sends the browser to the unverified redirect_uri.
      expect(isCallback(new URL(page.url()))).toBe(false);
    } finally {
      await context.close();
    }
  });
});
