/**
 * The authorization page as a person uses it (issue 22), in a real Chromium against a real
 * server: handing the request over (Copy), the countdown, Continue only when it can succeed, the
 * signed-in state, Cancel after expiry, the way back from error pages, and a phone's width.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, setAgentPolicy } from '../src/domain/agent-policy.ts';
import { decideApproval } from '../src/domain/approvals.ts';
import { authenticate, authorizeUrl, type Party, pkcePair } from './helpers/flow.ts';
import {
  ARRIVAL_TIMEOUT,
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

const PHONE = { width: 390, height: 844 };

describe.skipIf(!haveChromium)('the authorization page in a real browser (issue 22)', () => {
  let server: TestServer;
  let callback: CallbackServer;
  let browser: Browser;
  let party: Party;

  beforeAll(async () => {
    [server, callback, browser] = await Promise.all([startTestServer(), startCallbackServer(), launchChromium()]);
    party = {
      ...(await server.createClient({ name: 'Acme Notes', redirectUris: [callback.uri] })),
      ...(await server.createAgent({ name: 'Research bot' })),
    };
  });

  afterAll(() => closeAll(browser, callback, server));

  function urlFor(forParty: Party, state: string, extra: Record<string, string> = {}): string {
    return authorizeUrl(server, {
      client_id: forParty.clientId,
      redirect_uri: forParty.redirectUri,
      response_type: 'code',
      state,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      ...extra,
    });
  }

  async function open(page: Page, forParty: Party, state: string): Promise<string> {
    const response = await page.goto(urlFor(forParty, state));
    expect(response?.status()).toBe(200);
    return (await page.locator('meta[name="request-id"]').getAttribute('content'))!;
  }

  async function atCallback(page: Page): Promise<URLSearchParams> {
    await page.waitForURL((url) => url.origin === callback.origin && url.pathname === '/callback', {
      timeout: ARRIVAL_TIMEOUT,
    });
    return new URL(page.url()).searchParams;
  }

  async function withContext<T>(
    options: Parameters<Browser['newContext']>[0],
    run: (context: BrowserContext, watched: WatchedPage) => Promise<T>,
  ): Promise<T> {
    const context = await browser.newContext(options);
    try {
      const watched = await watchedPage(context);
      const result = await run(context, watched);
      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
      return result;
    } finally {
      await context.close();
    }
  }

  /** How far the page scrolls sideways (0: not at all). */
  const sidewaysScroll = (page: Page) =>
    page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  it('Copy puts the ready sentence on the clipboard, "Copy request ID only" the id, in one click each', async () => {
    await withContext({}, async (context, { page }) => {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
      const requestId = await open(page, party, 'copy');
      await page.getByRole('button', { name: 'Copy', exact: true }).click();
      await expect.poll(() => page.locator('#copy-feedback').textContent()).toContain('Copied the sentence');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
        `Sign me in to Acme Notes with agentauth request ${requestId}`,
      );
      await page.getByRole('button', { name: 'Copy request ID only' }).click();
      await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(requestId);
      // The id is 36 mixed-case characters: the page shows it whole, inside the sentence.
      expect(await page.locator('#request-id').textContent()).toBe(requestId);
    });
  });

  it('shows the time left and counts it down; scopes are in words only', async () => {
    await withContext({}, async (_context, { page }) => {
      await open(page, party, 'countdown');
      const seconds = async () => {
        const text = (await page.locator('#time-left').textContent()) ?? '';
        const match = /Time left: (\d+):(\d\d)/.exec(text);
        expect(match, text).not.toBeNull();
        return Number(match![1]) * 60 + Number(match![2]);
      };
      const first = await seconds();
      expect(first).toBeGreaterThan(590);
      expect(first).toBeLessThanOrEqual(600);
      await page.waitForTimeout(2_200);
      expect(await seconds()).toBeLessThanOrEqual(first - 2);
      const scopes = await page.locator('#scopes li').allTextContents();
      expect(scopes).toEqual([
        'Sign in with the identity of your AI agent',
        "Your agent owner's email address",
        "Your agent owner's name",
      ]);
      expect(await page.locator('#scopes code').count()).toBe(0);
      // Whose page this is, and help for a person without an agent.
      expect(await page.locator('.auth-header').textContent()).toContain('agentauth');
      await page.getByText('What is this? How do I set up an agent?').click();
      await expect.poll(() => page.locator('#about a[href="/console"]').isVisible()).toBe(true);
    });
  });

  it('with script, Continue appears only once the agent has signed in; the signed-in state is shown, then the browser goes on', async () => {
    await withContext({}, async (_context, { page }) => {
      const requestId = await open(page, party, 'continue-when-ready');
      // Waiting: no Continue that could only fail, and a waiting panel.
      await page.waitForFunction(() => document.getElementById('approve')?.hidden === true);
      expect(await page.locator('#approve').isVisible()).toBe(false);
      expect(await page.locator('#progress').getAttribute('data-state')).toBe('waiting');
      expect(await page.locator('#cancel').isVisible()).toBe(true);

      expect((await authenticate(server, party, requestId, 'claude-opus')).status).toBe(200);
      const signedIn = page.locator('#progress[data-state="signed-in"]');
      await signedIn.waitFor({ state: 'visible', timeout: ARRIVAL_TIMEOUT });
      const since = Date.now();
      const approve = page.getByRole('button', { name: 'Continue to Acme Notes' });
      await approve.waitFor({ state: 'visible' });
      await expect
        .poll(() => page.locator('#status').textContent())
        .toBe('Signed in by the agent Research bot of Ada Lovelace <ada@example.com> (claude-opus). Continuing…');
      // Unmistakable: a green panel, which stays long enough to be read.
      const colour = await signedIn.evaluate((element) => getComputedStyle(element).borderLeftColor);
      expect(colour).toBe('rgb(21, 128, 61)');
      await page.waitForTimeout(Math.max(0, 1_000 - (Date.now() - since)));
      expect(new URL(page.url()).origin).toBe(server.baseUrl);
      expect(await signedIn.isVisible()).toBe(true);

      const query = await atCallback(page);
      expect(query.get('code')).toMatch(/^cod_/);
      expect(query.get('state')).toBe('continue-when-ready');
    });
  });

  /** An agent of Ada Lovelace's whose policy asks her about every new website. */
  async function askingParty(): Promise<Party> {
    const agent = await server.createAgent({ name: 'Asking bot' });
    await setAgentPolicy(server.ctx, agent.agentId, { ...DEFAULT_POLICY, websites: 'ask' });
    return { ...party, ...agent };
  }
  const WAITING_FOR_ADA =
    'Waiting for approval from Ada Lovelace. Your agent asked its owner to allow signing in to Acme Notes; this page continues as soon as they approve.';

  it("while the agent's owner is asked, the page says whose approval it waits for (never an email), then goes on once approved", async () => {
    const asking = await askingParty();
    await withContext({}, async (_context, { page }) => {
      const requestId = await open(page, asking, 'owner-approves');
      expect((await authenticate(server, asking, requestId)).status).toBe(202);
      await page.locator('#progress[data-state="approval"]').waitFor({ timeout: ARRIVAL_TIMEOUT });
      await expect.poll(() => page.locator('#status').textContent()).toBe(WAITING_FOR_ADA);
      expect(await page.content()).not.toContain('ada@example.com');
      // The request is held for this agent: nothing more to hand over.
      expect(await page.locator('.handover').isVisible()).toBe(false);
      expect(await page.locator('#approve').isVisible()).toBe(false);
      expect(await page.locator('#cancel').isVisible()).toBe(true);

      const approvalId = (await server.ctx.store.requests.find(requestId))!.approval_id!;
      await decideApproval(server.ctx, approvalId, 'once', 'acc_owner');
      const query = await atCallback(page);
      expect(query.get('code')).toMatch(/^cod_/);
      expect(query.get('state')).toBe('owner-approves');
    });
  });

  it('without script, Continue while the owner is asked shows the same words; after the approval it goes on', async () => {
    const asking = await askingParty();
    await withContext({ javaScriptEnabled: false }, async (_context, { page }) => {
      const requestId = await open(page, asking, 'owner-approves-no-script');
      expect((await authenticate(server, asking, requestId)).status).toBe(202);
      await page.click('#approve');
      expect(await page.locator('#status').textContent()).toBe(WAITING_FOR_ADA);
      expect(await page.locator('#progress').getAttribute('data-state')).toBe('approval');
      expect(await page.locator('.handover').isVisible()).toBe(false);
      // A reload (the form posted again) says the same.
      await page.reload();
      expect(await page.locator('#status').textContent()).toBe(WAITING_FOR_ADA);

      const approvalId = (await server.ctx.store.requests.find(requestId))!.approval_id!;
      await decideApproval(server.ctx, approvalId, 'once', 'acc_owner');
      await page.click('#approve');
      const query = await atCallback(page);
      expect(query.get('code')).toMatch(/^cod_/);
    });
  });

  it('without script, the form works as before: Continue and Cancel post, the sentence and time are plain text', async () => {
    await withContext({ javaScriptEnabled: false }, async (_context, { page }) => {
      const requestId = await open(page, party, 'no-script');
      expect(await page.locator('#approve').isVisible()).toBe(true);
      expect(await page.locator('#copy-actions').isVisible()).toBe(false);
      expect(await page.locator('#time-left').textContent()).toBe('This request stays valid for 10 minutes.');
      expect(await page.locator('#handover-sentence').textContent()).toBe(
        `Sign me in to Acme Notes with agentauth request ${requestId}`,
      );
      // Too early: the page comes back and says so.
      await page.click('#approve');
      expect(await page.locator('#status').textContent()).toContain('has not authenticated yet');
      expect((await authenticate(server, party, requestId)).status).toBe(200);
      await page.click('#approve');
      const query = await atCallback(page);
      expect(query.get('code')).toMatch(/^cod_/);
      expect(query.get('state')).toBe('no-script');
    });
  });

  it('after expiry the page says so and Cancel, now "Back to Acme Notes", sends the browser back with access_denied and the state', async () => {
    await withContext({}, async (_context, { page }) => {
      // The page learns of the expiry from the status (polled here; the server's clock is moved).
      await page.route('**/api/check-status/events*', (route) => route.abort());
      await open(page, party, 'expired & gone=/');
      server.clock.advance(601);
      try {
        await page.locator('#progress[data-state="expired"]').waitFor({ timeout: ARRIVAL_TIMEOUT });
        expect(await page.locator('#status').textContent()).toContain('expired');
        expect(await page.locator('#approve').isVisible()).toBe(false);
        expect(await page.locator('.handover').isVisible()).toBe(false);
        await page.getByRole('button', { name: 'Back to Acme Notes' }).click();
        const query = await atCallback(page);
        expect(query.get('error')).toBe('access_denied');
        expect(query.get('error_description')).toMatch(/expired/);
        expect(query.get('state')).toBe('expired & gone=/');
        expect(query.get('iss')).toBe(server.baseUrl);
        expect(query.get('code')).toBeNull();
      } finally {
        server.clock.advance(-601);
      }
    });
  });

  it('Cancel after expiry without script still goes back; a browser that lost its cookie is told the request expired', async () => {
    await withContext({ javaScriptEnabled: false }, async (context, { page }) => {
      await open(page, party, 'late-no-script');
      const other = await context.newPage();
      await open(other, party, 'late-no-cookie');
      server.clock.advance(601);
      try {
        await page.click('#cancel');
        const query = await atCallback(page);
        expect(query.get('error')).toBe('access_denied');
        expect(query.get('state')).toBe('late-no-script');

        await context.clearCookies();
        await other.click('#cancel');
        expect(await other.locator('h1').textContent()).toBe('This sign-in request expired');
        expect(await other.locator('#error').textContent()).toBe('request_expired');
        expect(await other.textContent('body')).not.toContain('another browser');
        expect(await other.locator('#back-to-site').count()).toBe(0);
      } finally {
        server.clock.advance(-601);
      }
    });
  });

  it('error pages offer "Back to <site>" only where the redirect_uri was validated, and it leads there with the error and state', async () => {
    await withContext({}, async (_context, { page }) => {
      const unknown = await page.goto(urlFor({ ...party, clientId: 'cli_nobody' }, 's1'));
      expect(unknown?.status()).toBe(400);
      expect(await page.locator('#error').textContent()).toBe('invalid_client');
      expect(await page.locator('#back-to-site').count()).toBe(0);
      expect(await page.locator('h1').textContent()).toBe('This sign-in link does not work');

      const foreign = await page.goto(urlFor({ ...party, redirectUri: 'https://evil.example/cb' }, 's2'));
      expect(foreign?.status()).toBe(400);
      expect(await page.locator('#back-to-site').count()).toBe(0);

      const bad = await page.goto(urlFor(party, 'state for the way back', { code_challenge: 'short' }));
      expect(bad?.status()).toBe(400);
      expect(await page.locator('meta[name="error"]').getAttribute('content')).toBe('invalid_request');
      expect(await page.locator('#error-description').textContent()).toContain('code_challenge');
      await page.getByRole('link', { name: 'Back to Acme Notes' }).click();
      const query = await atCallback(page);
      expect(query.get('error')).toBe('invalid_request');
      expect(query.get('state')).toBe('state for the way back');
      expect(query.get('iss')).toBe(server.baseUrl);
    });
  });

  it('at phone width (390 px), no page of the flow scrolls sideways, the manual approval with a long owner least of all', async () => {
    const manual: Party = {
      ...(await server.createClient({ name: 'Careful Bank', redirectUris: [callback.uri], approval: 'manual' })),
      ...(await server.createAgent({
        name: 'Ledger agent with a rather long descriptive name',
        ownerEmail: 'maximilianalexandervonhabsburglothringen@averyveryverylongcompanydomainname.example.com',
        ownerName: 'Maximilian Alexander von Habsburg-Lothringen',
      })),
    };
    await withContext({ viewport: PHONE }, async (_context, { page }) => {
      const requestId = await open(page, manual, 'phone');
      expect(await sidewaysScroll(page)).toBe(0);
      expect((await authenticate(server, manual, requestId, 'gpt-5-mini-2025')).status).toBe(200);
      await page.locator('#agent-details').waitFor({ state: 'visible', timeout: ARRIVAL_TIMEOUT });
      expect(await page.locator('#agent-owner').textContent()).toContain('maximilianalexander');
      expect(await sidewaysScroll(page)).toBe(0);
      await page.goto(urlFor(manual, 'phone-error', { code_challenge: 'short' }));
      expect(await sidewaysScroll(page)).toBe(0);
    });
  });
});
