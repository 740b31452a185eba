/**
 * Issue 39's journey in real Chromium: a website asks, through openid-client (a library nobody
 * here wrote, OpenID CIBA), whether the agent may pay; the owner, signed in to the console with a
 * passkey (Chromium's virtual authenticator), sees the action arrive on the approvals page without
 * a reload, reads it in words (escaped: the website's markup shows as text), with the website's
 * message quoted as its own, opens it and approves it with the passkey alone; the library then
 * receives a token whose authorization_details are the approved action, and the agent's SDK says
 * it was approved.
 */
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentAuth } from '../../packages/agent/src/index.ts';
import {
  addVirtualAuthenticator,
  ARRIVAL_TIMEOUT,
  closeAll,
  cspViolations,
  haveChromium,
  launchChromium,
  watchedPage,
} from '../helpers/browser.ts';
import { createPasswordAccount, TEST_PASSWORD } from '../helpers/console.ts';
import { auditor } from '../helpers/page-audit.ts';
import { VIEWPORTS } from '../helpers/page-tour.ts';
import { obtainTokens } from '../helpers/flow.ts';
import { createOwnedAgent } from '../helpers/owned.ts';
import { PAYMENT } from '../helpers/action-requests.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const PAY = [{ type: 'payment', amount: 20, currency: 'EUR', payee: 'Acme <i>Ltd</i>' }];

describe.skipIf(!haveChromium)('approving an action with a passkey, live, in Chromium', () => {
  let server: TestServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    // WebAuthn's relying party must be a domain name: the console is at http://localhost:<port>.
    [server, browser] = await Promise.all([
      startTestServer({ host: 'localhost', env: { ACTION_APPROVALS: 'on' } }),
      launchChromium(),
    ]);
  });
  afterAll(() => closeAll(browser, server));

  it('the action appears in words, one passkey approves it, and openid-client gets a token for it', async () => {
    const owner = await createPasswordAccount(server.ctx, { email: 'ada@example.com', name: 'Ada' });
    const shop = await server.createClient({ name: 'Acme Notes', redirectUris: ['https://notes.example/callback'] });
    await server.ctx.store.clients.update(shop.clientId, { action_types: [PAYMENT] });
    const { agent, secret } = await createOwnedAgent(server.ctx, owner, 'Research assistant');
    await obtainTokens(server, { ...shop, agentId: agent.id, agentSecret: secret }, { scope: 'openid' });
    const config = await client.discovery(
      new URL(server.baseUrl),
      shop.clientId,
      { id_token_signed_response_alg: 'HS256' },
      client.ClientSecretBasic(shop.clientSecret),
      { execute: [client.allowInsecureRequests] },
    );

    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      await addVirtualAuthenticator(await context.newCDPSession(page));

      // Sign in with the password once to add a passkey; the decision then needs only the passkey.
      await page.goto(`${server.baseUrl}/console/sign-in`);
      await page.getByLabel('Email', { exact: true }).fill(owner.email);
      await page.getByLabel('Password', { exact: true }).fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/console');
      await page.goto(`${server.baseUrl}/console/account`);
      await page.getByLabel('Name of the new passkey').fill('Laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.waitForURL(/notice=passkey_added$/);

      await page.goto(`${server.baseUrl}/console/approvals`);
      await expect.poll(() => page.locator('#no-pending').count()).toBe(1);
      await page.evaluate(() => {
        (window as unknown as { unreloaded: boolean }).unreloaded = true;
      });

      // The website asks, through openid-client.
      const asked = await client.initiateBackchannelAuthentication(config, {
        scope: 'openid',
        login_hint: agent.id,
        binding_message: 'Order <b>1142</b>',
        authorization_details: JSON.stringify(PAY),
      });
      const approval = (
        await server.ctx.store.approvals.list({ accountId: owner.id, status: 'pending', now: server.clock(), limit: 5 })
      ).find((each) => each.kind === 'action')!;

      // It arrives live, in words, the website's markup as text.
      const row = page.locator(`tr[data-approval="${approval.id}"]`);
      await row.waitFor({ timeout: ARRIVAL_TIMEOUT });
      expect(await page.evaluate(() => (window as unknown as { unreloaded?: boolean }).unreloaded)).toBe(true);
      expect(await row.textContent()).toContain('Pay 20 EUR to Acme <i>Ltd</i>');
      expect(await row.locator('i').count()).toBe(0);
      expect(await row.textContent()).toContain('Acme Notes says: Order <b>1142</b>');

      await row.locator('a', { hasText: 'Decide' }).click();
      await page.waitForURL((url) => url.pathname === `/console/approvals/${approval.id}`);
      expect(await page.locator('#approval-question').textContent()).toBe(
        'Acme Notes asks whether Research assistant may:',
      );
      expect(await page.locator('#approval-action').textContent()).toBe('Pay 20 EUR to Acme <i>Ltd</i>');
      expect(await page.locator('#approval-binding-message').textContent()).toBe('Acme Notes says: Order <b>1142</b>');
      expect(await page.locator('#approval-binding-message b').count()).toBe(0);
      // The JSON is there, folded, as the website sent it.
      await page.locator('#approval-details-json summary').click();
      expect(JSON.parse((await page.locator('#approval-details-json code').textContent())!)).toEqual(PAY);
      expect(await page.getByRole('button', { name: /Always/ }).count()).toBe(0);

      // The new page passes the page audit at both sizes (overflow, axe, targets on a phone), as
      // does the agent's page with its actions form; then back to the desktop.
      const audit = auditor(context);
      const findings: string[] = [];
      const auditHere = async (name: string) => {
        for (const size of ['phone', 'desktop'] as const) {
          await page.setViewportSize(VIEWPORTS[size]);
          for (const finding of await audit.audit(page, size === 'phone'))
            findings.push(`${name} @ ${size}: ${finding.check}: ${finding.detail}`);
        }
      };
      await auditHere('action approval');
      await page.goto(`${server.baseUrl}/console/agents/${agent.id}`);
      expect(await page.locator('#action-0 legend').textContent()).toBe('Actions at Acme Notes');
      await auditHere('agent page with the actions form');
      expect(findings).toEqual([]);
      await page.goto(`${server.baseUrl}/console/approvals/${approval.id}`);

      // The passkey alone decides (the password field left empty).
      await page.getByRole('button', { name: 'Approve', exact: true }).click();
      await page.waitForURL(/notice=action_approved$/);
      expect(await page.locator('#approval-outcome').textContent()).toContain('Approved by you');
      expect(await server.ctx.store.approvals.find(approval.id)).toMatchObject({
        status: 'approved',
        decided_by: owner.id,
      });
      const decided = (await server.ctx.store.activity.list({ limit: 50 })).find(
        (event) => event.action === 'approval.approve_action' && event.target === approval.id,
      );
      expect(decided?.detail).toMatch(/: Pay 20 EUR to Acme <i>Ltd<\/i>; confirmed with a passkey$/);

      // The library receives the token for exactly this action; the agent hears it was approved.
      const tokens = await client.pollBackchannelAuthenticationGrant(config, { ...asked, interval: 0.01 });
      expect(tokens.authorization_details).toEqual(PAY);
      expect(decodeJwt(tokens.access_token)).toMatchObject({ sub: agent.id, authorization_details: PAY });
      const sdk = new AgentAuth({ issuer: server.baseUrl, agentId: agent.id, agentSecret: secret });
      const [told] = await sdk.listActions();
      expect(told).toMatchObject({
        status: 'approved',
        message: 'Your owner approved: Pay 20 EUR to Acme <i>Ltd</i> (Acme Notes)',
      });

      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);
});
