/**
 * "Ask me" end to end in real Chromium (issue 24, "Done means"): the owner, signed in to the
 * console with a passkey (Chromium's virtual authenticator), watches the approvals page; in
 * another tab of the same browser a website sends the person to sign in; the agent
 * authenticates and waits; the approval appears on the owner's page without a reload (the
 * approvals stream), the owner approves it once with the passkey, and the sign-in tab lands on
 * the website's redirect with a code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnedAgent } from '../helpers/owned.ts';

import { DEFAULT_POLICY, setAgentPolicy } from '../../src/domain/agent-policy.ts';
import {
  addVirtualAuthenticator,
  ARRIVAL_TIMEOUT,
  type CallbackServer,
  closeAll,
  cspViolations,
  haveChromium,
  launchChromium,
  startCallbackServer,
  watchedPage,
} from '../helpers/browser.ts';
import { createPasswordAccount, TEST_PASSWORD } from '../helpers/console.ts';
import { authenticate, authorizeUrl, checkStatus, pkcePair } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe.skipIf(!haveChromium)('approving a sign-in with a passkey, live, in Chromium', () => {
  let server: TestServer;
  let callback: CallbackServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    // WebAuthn's relying party must be a domain name: the console is at http://localhost:<port>.
    [server, callback, browser] = await Promise.all([
      startTestServer({ host: 'localhost' }),
      startCallbackServer(),
      launchChromium(),
    ]);
  });
  afterAll(() => closeAll(browser, callback, server));

  it('the approval appears without a reload, one passkey approves it, and the browser lands on the website', async () => {
    const owner = await createPasswordAccount(server.ctx, { email: 'ada@example.com', name: 'Ada' });
    const website = await server.createClient({ name: 'Acme Notes', redirectUris: [callback.uri] });
    const { agent, secret } = await createOwnedAgent(server.ctx, owner, 'Research assistant');
    await setAgentPolicy(server.ctx, agent.id, { ...DEFAULT_POLICY, websites: 'ask' });

    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      const cdp = await context.newCDPSession(page);
      await addVirtualAuthenticator(cdp);

      // Sign in with the password once to add a passkey, sign out, and sign in with the passkey.
      await page.goto(`${server.baseUrl}/console/sign-in`);
      await page.getByLabel('Email', { exact: true }).fill(owner.email);
      await page.getByLabel('Password', { exact: true }).fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/console');
      await page.goto(`${server.baseUrl}/console/account`);
      await page.getByLabel('Name of the new passkey').fill('Laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.waitForURL(/notice=passkey_added$/);
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/console/sign-in');
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.waitForURL((url) => url.pathname === '/console');
      const session = (await server.ctx.store.activity.list({ limit: 50 })).find(
        (event) => event.action === 'account.sign_in' && event.target === owner.id && event.detail === 'passkey',
      );
      expect(session).toBeDefined();

      await page.goto(`${server.baseUrl}/console/approvals`);
      await expect.poll(() => page.locator('#no-pending').count()).toBe(1);
      expect(await page.locator('#approvals-badge').isHidden()).toBe(true);
      // Marks this document: a reload would lose the mark.
      await page.evaluate(() => {
        (window as unknown as { unreloaded: boolean }).unreloaded = true;
      });

      // Another tab: the website sends the person to sign in, and the agent authenticates.
      const signInTab = await context.newPage();
      await signInTab.goto(
        authorizeUrl(server, {
          client_id: website.clientId,
          redirect_uri: website.redirectUri,
          response_type: 'code',
          scope: 'openid email',
          state: 'browser-approval',
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        }),
      );
      const requestId = (await signInTab.locator('meta[name="request-id"]').getAttribute('content'))!;
      const asked = await authenticate(
        server,
        { ...website, agentId: agent.id, agentSecret: secret },
        requestId,
        'claude-sonnet-4',
      );
      expect(asked.status).toBe(202);
      const { approval_id: approvalId } = (await asked.json()) as { approval_id: string };

      // The owner's page shows it live: the row, and the badge.
      await page.locator(`tr[data-approval="${approvalId}"]`).waitFor({ timeout: ARRIVAL_TIMEOUT });
      expect(await page.locator('#approvals-count').textContent()).toBe('1');
      expect(await page.locator('#approvals-badge').isVisible()).toBe(true);
      expect(await page.evaluate(() => (window as unknown as { unreloaded?: boolean }).unreloaded)).toBe(true);
      expect(await page.locator(`tr[data-approval="${approvalId}"]`).textContent()).toContain('Acme Notes');

      // One passkey approves it (the password field left empty).
      await page.locator(`tr[data-approval="${approvalId}"] a`, { hasText: 'Decide' }).click();
      await page.waitForURL((url) => url.pathname === `/console/approvals/${approvalId}`);
      await page.getByRole('button', { name: 'Approve once' }).click();
      await page.waitForURL(/notice=approval_approved$/);
      expect(await page.locator('#approval-outcome').textContent()).toContain('Approved once by you');
      expect((await server.ctx.store.approvals.find(approvalId))!).toMatchObject({
        status: 'approved',
        decision: 'once',
        decided_by: owner.id,
      });
      const actions = (await server.ctx.store.activity.list({ limit: 50 }))
        .filter((event) => event.actor_id === owner.id)
        .map((event) => event.action);
      expect(actions).toEqual(expect.arrayContaining(['account.reauthenticate', 'approval.approve_once']));

      // The sign-in tab goes on by itself and lands on the website with a code.
      await signInTab.waitForURL((url) => url.href.startsWith(callback.uri), { timeout: ARRIVAL_TIMEOUT });
      const hit = callback.hits.at(-1)!;
      expect(hit.query.get('code')).toBeTruthy();
      expect(hit.query.get('state')).toBe('browser-approval');
      expect((await checkStatus(server, requestId)).body).toMatchObject({ status: 'completed' });

      // The badge went back to nothing, still without a reload of the approval page's document.
      await expect.poll(() => page.locator('#approvals-badge').isHidden()).toBe(true);
      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
