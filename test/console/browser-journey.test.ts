/**
 * The console's main journeys in real Chromium (issue 10): sign up by invitation with a passkey
 * (Chromium's virtual authenticator over CDP), sign out and back in with it, create an agent,
 * use it in a real sign-in to a test website, find that sign-in in its history, rotate its
 * secret with a grace period, and disconnect the website, whose token then goes inactive.
 */
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueLink } from '../../src/domain/accounts.ts';
import {
  ARRIVAL_TIMEOUT,
  type CallbackServer,
  cspViolations,
  haveChromium,
  launchChromium,
  startCallbackServer,
  type WatchedPage,
  watchedPage,
  addVirtualAuthenticator as addAuthenticator,
  closeAll,
} from '../helpers/browser.ts';
import { createPasswordAccount, TEST_PASSWORD } from '../helpers/console.ts';
import { authenticate, authorizeUrl, pkcePair, postForm, redeem, startFlow, type Tokens } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** A virtual authenticator on the page, and the DevTools session that controls it. */
async function addVirtualAuthenticator(
  context: BrowserContext,
  page: Page,
): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await context.newCDPSession(page);
  return { cdp, authenticatorId: await addAuthenticator(cdp) };
}

describe.skipIf(!haveChromium)('the console in a real browser (Chromium)', () => {
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
      const account = await server.ctx.store.accounts.findByEmail('passkey.person@example.com');
      expect(account).toMatchObject({ role: 'member', password_hash: null });
      expect(await server.ctx.store.passkeys.list(account!.id)).toEqual([
        expect.objectContaining({
          name: 'Test laptop',
          id: credentials[0]!.credentialId.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'),
        }),
      ]);

      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL(/\/console\/sign-in$/);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.waitForURL((target) => target.pathname === '/console');
      expect(await page.locator('h1').textContent()).toBe('Hello, Pat Passkey');
      expect((await server.ctx.store.passkeys.list(account!.id))[0]!.last_used_at).not.toBeNull();

      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('creates a website and an agent, signs in for real, reads the history, rotates with grace, and disconnects the site', async () => {
    const owner = await createPasswordAccount(server.ctx, { email: 'olivia@example.com', name: 'Olivia Owner' });
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      page.on('dialog', (dialog) => void dialog.accept());

      // Sign in with the password, from the page that asked for it.
      await page.goto(`${server.baseUrl}/console/websites`);
      await page.waitForURL(/\/console\/sign-in\?next=/);
      await page.getByLabel('Email', { exact: true }).fill(owner.email);
      await page.getByLabel('Password', { exact: true }).fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/console/websites');

      // The website: its secret is shown once.
      await page.getByLabel('Name').fill('Acme Notes');
      await page.getByLabel('Redirect URIs').fill(callback.uri);
      await page.getByRole('button', { name: 'Register website' }).click();
      const clientId = (await page.locator('#client-id').textContent())!;
      const clientSecret = (await page.locator('#client-secret').textContent())!;
      expect(clientId).toMatch(/^cli_/);
      expect(clientSecret).toMatch(/^cls_/);

      // The agent: the copy button puts the secret on the clipboard.
      await page.getByRole('link', { name: 'Agents' }).click();
      await page.getByLabel('Name').fill('Research assistant');
      await page.getByRole('button', { name: 'Create agent' }).click();
      const agentId = (await page.locator('#agent-id').textContent())!;
      const agentSecret = (await page.locator('#agent-secret').textContent())!;
      expect(agentSecret).toMatch(/^aas_/);
      await page.locator('button.copy[data-copy="agent-secret"]').click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(agentSecret);
      expect(await page.locator('#notice').textContent()).toBe('Copied to the clipboard.');

      // A real sign-in to the website: the browser at /authorize, the agent over the back channel.
      const party = { clientId, clientSecret, redirectUri: callback.uri, agentId, agentSecret };
      const signInPage = await context.newPage();
      const { verifier, challenge } = pkcePair();
      await signInPage.goto(
        authorizeUrl(server, {
          client_id: clientId,
          redirect_uri: callback.uri,
          response_type: 'code',
          state: 'journey',
          scope: 'openid email profile',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        }),
      );
      const requestId = (await signInPage.locator('meta[name="request-id"]').getAttribute('content'))!;
      expect((await authenticate(server, party, requestId, 'journey-model-1')).status).toBe(200);
      await signInPage.waitForURL((url) => url.origin === callback.origin, { timeout: ARRIVAL_TIMEOUT });
      const code = new URL(signInPage.url()).searchParams.get('code')!;
      const tokenResponse = await redeem(server, party, code, verifier);
      expect(tokenResponse.status).toBe(200);
      const tokens = (await tokenResponse.json()) as Tokens;
      const userinfo = (await (
        await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
      ).json()) as Record<string, unknown>;
      expect(userinfo).toMatchObject({
        sub: agentId,
        email: 'olivia@example.com',
        name: 'Olivia Owner',
        email_verified: false,
      });

      // The sign-in in the agent's history, its chart and its connected sites.
      await page.goto(`${server.baseUrl}/console/agents/${agentId}`);
      expect(await page.locator('#sign-in-chart').getAttribute('aria-label')).toBe(
        'Successful sign-ins per day over the last 30 days: 1 in total',
      );
      const history = page.getByRole('table', { name: 'Sign-ins, newest first' });
      await expect.poll(() => history.textContent()).toContain('journey-model-1');
      expect(await history.textContent()).toContain('Acme Notes');
      expect(await history.textContent()).toContain('Signed in');
      const sites = page.getByRole('table', { name: 'Websites holding tokens of this agent' });
      expect(await sites.textContent()).toContain('Acme Notes');

      // Rotate with a grace period of an hour: the old secret still signs in, the new one too.
      await page.getByLabel('The old secret stops working').selectOption('3600');
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      const newSecret = (await page.locator('#agent-secret').textContent())!;
      expect(newSecret).not.toBe(agentSecret);
      const during = await startFlow(server, party);
      expect((await authenticate(server, party, during.requestId)).status).toBe(200);
      const withNew = await startFlow(server, party);
      expect((await authenticate(server, { ...party, agentSecret: newSecret }, withNew.requestId)).status).toBe(200);
      server.clock.advance(3601);
      const after = await startFlow(server, party);
      expect((await authenticate(server, party, after.requestId)).status).toBe(401);
      server.clock.advance(-3601);

      // Disconnect the website: its token goes inactive.
      const introspect = async () =>
        (await (
          await postForm(server, '/introspect', {
            token: tokens.access_token,
            client_id: clientId,
            client_secret: clientSecret,
          })
        ).json()) as { active: boolean };
      expect(await introspect()).toMatchObject({ active: true });
      await page.goto(`${server.baseUrl}/console/agents/${agentId}`);
      await page.getByRole('button', { name: 'Disconnect' }).click();
      await page.waitForURL(/notice=site_revoked$/);
      expect(await page.locator('#notice').textContent()).toContain('disconnected');
      expect(await introspect()).toEqual({ active: false });

      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('after the re-authentication window, removing the password asks to confirm with a passkey first, and then goes through', async () => {
    const owner = await createPasswordAccount(server.ctx, { email: 'rita@example.com', name: 'Rita Reauth' });
    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      page.on('dialog', (dialog) => void dialog.accept());
      await addVirtualAuthenticator(context, page);

      await page.goto(`${server.baseUrl}/console/account`);
      await page.waitForURL(/\/console\/sign-in\?next=/);
      await page.getByLabel('Email', { exact: true }).fill(owner.email);
      await page.getByLabel('Password', { exact: true }).fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/console/account');
      // Right after signing in, adding a passkey needs nothing more.
      await page.getByLabel('Name of the new passkey').fill('Phone');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.waitForURL(/notice=passkey_added$/);

      // Five minutes later (a session left open), the password cannot be removed on the session alone.
      server.clock.advance(301);
      await page.getByRole('button', { name: 'Remove my password' }).click();
      await page.waitForURL((url) => url.pathname === '/console/account/confirm');
      expect(await page.locator('h1').textContent()).toBe('Confirm it is you');
      expect((await server.ctx.store.accounts.find(owner.id))!.password_hash).not.toBeNull();

      await page.getByRole('button', { name: 'Confirm with a passkey' }).click();
      await page.waitForURL((url) => url.pathname === '/console/account' && url.search === '');
      await page.getByRole('button', { name: 'Remove my password' }).click();
      await page.waitForURL(/notice=password_removed$/);
      expect((await server.ctx.store.accounts.find(owner.id))!.password_hash).toBeNull();
      const actions = (await server.ctx.store.activity.list({ limit: 100 }))
        .filter((event) => event.target === owner.id)
        .map((event) => event.action);
      expect(actions).toEqual(
        expect.arrayContaining(['account.add_passkey', 'account.reauthenticate', 'account.remove_password']),
      );

      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
