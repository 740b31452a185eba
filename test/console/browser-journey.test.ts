/**
 * The console's main journeys in real Chromium (issue 10): sign up by invitation with a passkey
 * (Chromium's virtual authenticator over CDP), sign out and back in with it, create an agent,
 * use it in a real sign-in to a test website, find that sign-in in its history, rotate its
 * secret with a grace period, and disconnect the website, whose token then goes inactive.
 */
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueLink } from '../../src/console/accounts.ts';
import { type CallbackServer, cspViolations, haveChromium, launchChromium, startCallbackServer, type WatchedPage, watchedPage } from '../helpers/browser.ts';
import { createPasswordAccount } from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** A platform authenticator that holds discoverable credentials and always says yes. */
async function addVirtualAuthenticator(context: BrowserContext, page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return { cdp, authenticatorId };
}

describe.skipIf(!haveChromium)('the console in a real browser (Chromium)', () => {
  let server: TestServer;
  let callback: CallbackServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    // WebAuthn's relying party must be a domain name: the console is at http://localhost:<port>.
    [server, callback, browser] = await Promise.all([startTestServer({ host: 'localhost' }), startCallbackServer(), launchChromium()]);
  });
  afterAll(async () => {
    const results = await Promise.allSettled([browser?.close(), callback?.close(), server?.close()]);
    const failed = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed.length > 0) throw failed[0]!.reason;
  });

  it('signs up by invitation with a passkey, signs out, and signs in again with the passkey', async () => {
    const inviter = await createPasswordAccount(server.ctx, { name: 'Irene Inviter', role: 'admin' });
    const { url } = await issueLink(server.ctx, 'invite', { role: 'member', createdBy: inviter.id });
    const context = await browser.newContext();
    try {
      const watched: WatchedPage = await watchedPage(context);
      const { page } = watched;
      const { cdp, authenticatorId } = await addVirtualAuthenticator(context, page);

      await page.goto(url);
      expect(await page.locator('h1').textContent()).toBe('Create your account');
      await page.getByLabel('Email').fill('passkey.person@example.com');
      await page.getByLabel('Name', { exact: true }).fill('Pat Passkey');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.waitForURL(/\/console\/account\?notice=welcome$/);
      expect(await page.locator('#notice').textContent()).toContain('Add a passkey or set a password');

      await page.getByLabel('Name of the new passkey').fill('Test laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.waitForURL(/notice=passkey_added$/);
      expect(await page.locator('#notice').textContent()).toBe('The passkey is added.');
      expect(await page.locator('table').first().textContent()).toContain('Test laptop');
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials).toHaveLength(1);
      expect(credentials[0]!.isResidentCredential).toBe(true);
      const account = await server.ctx.store.console.findAccountByEmail('passkey.person@example.com');
      expect(account).toMatchObject({ role: 'member', password_hash: null });
      expect(await server.ctx.store.console.listPasskeys(account!.id)).toEqual([expect.objectContaining({ name: 'Test laptop', id: credentials[0]!.credentialId.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_') })]);

      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL(/\/console\/sign-in$/);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.waitForURL((target) => target.pathname === '/console');
      expect(await page.locator('h1').textContent()).toBe('Hello, Pat Passkey');
      expect((await server.ctx.store.console.listPasskeys(account!.id))[0]!.last_used_at).not.toBeNull();

      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
