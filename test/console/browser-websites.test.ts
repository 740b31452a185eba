/**
 * Issue 22 in real Chromium: a new account follows the overview's steps, registers a website
 * (its secret shown once: a reload and the back button do not show it again or register a
 * second one), edits it (a bad redirect URI is the form again), runs Test sign-in to a real
 * callback with an agent, and deletes it after the confirmation that says what ends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ARRIVAL_TIMEOUT,
  type CallbackServer,
  cspViolations,
  haveChromium,
  launchChromium,
  startCallbackServer,
  watchedPage,
  closeAll,
} from '../helpers/browser.ts';
import { createPasswordAccount, TEST_PASSWORD } from '../helpers/console.ts';
import { authenticate } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe.skipIf(!haveChromium)('websites in a real browser (Chromium)', () => {
  let server: TestServer;
  let callback: CallbackServer;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    [server, callback, browser] = await Promise.all([startTestServer(), startCallbackServer(), launchChromium()]);
  });
  afterAll(() => closeAll(browser, callback, server));

  it('registers, edits, tests a sign-in and deletes a website', async () => {
    const owner = await createPasswordAccount(server.ctx, { email: 'wendy@example.com', name: 'Wendy Web' });
    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      await page.goto(`${server.baseUrl}/console/sign-in`);
      await page.getByLabel('Email', { exact: true }).fill(owner.email);
      await page.getByLabel('Password', { exact: true }).fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/console');

      // The overview: the issuer, and the first step as the one button.
      expect(await page.locator('#issuer').textContent()).toBe(server.baseUrl);
      expect(await page.locator('li[aria-current="step"] strong').textContent()).toBe('Register a website');
      await page.getByRole('link', { name: 'Register a website' }).click();
      await page.waitForURL((url) => url.pathname === '/console/websites');

      // Register: the secret once, at the page the 303 led to.
      await page.getByLabel('Name').fill('Wendy’s shop');
      await page.getByLabel('Redirect URIs').fill('https://shop.example/callbak');
      await page.getByRole('button', { name: 'Register website' }).click();
      await page.waitForURL(/\/console\/websites\/cli_[^/]+\/created$/);
      const clientId = (await page.locator('#client-id').textContent())!;
      const secret = (await page.locator('#client-secret').textContent())!;
      expect(secret).toMatch(/^cls_/);
      // A reload neither shows the secret again nor registers a second website.
      await page.reload();
      await page.waitForURL((url) => url.pathname === `/console/websites/${clientId}`);
      expect(await page.content()).not.toContain(secret);
      expect(await page.locator('#notice').textContent()).toContain('shown only once');
      await page.goBack();
      expect(await page.content()).not.toContain(secret);
      expect(await server.ctx.store.clients.list({ accountId: owner.id })).toHaveLength(1);

      // Edit: the typo in the redirect URI. A refused URI is the form again with its message.
      await page.goto(`${server.baseUrl}/console/websites/${clientId}`);
      const uris = page.getByLabel('Redirect URIs');
      await uris.fill('http://shop.example/callback');
      await page.getByRole('button', { name: 'Save changes' }).click();
      expect(await page.locator('#field-redirect_uris-error').textContent()).toContain('must use https');
      expect(await uris.inputValue()).toBe('http://shop.example/callback');
      await uris.fill(callback.uri);
      await page.getByLabel('Approval').selectOption('auto');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.waitForURL(/\?notice=website_updated$/);
      expect(await page.locator('#notice').textContent()).toBe('The website is saved.');
      expect(await page.locator('.uris').first().textContent()).toContain(callback.uri);

      // Test sign-in: the real authorization page; the agent signs in; the browser reaches the callback.
      const agent = await server.createAgent();
      await page.getByRole('button', { name: 'Test sign-in' }).click();
      await page.waitForURL((url) => url.pathname === '/authorize');
      expect(await page.content()).toContain('Wendy’s shop');
      const requestId = (await page.locator('meta[name="request-id"]').getAttribute('content'))!;
      const party = { clientId, clientSecret: secret, redirectUri: callback.uri, ...agent };
      expect((await authenticate(server, party, requestId, 'test-model')).status).toBe(200);
      await page.waitForURL((url) => url.origin === callback.origin, { timeout: ARRIVAL_TIMEOUT });
      const [hit] = callback.hits;
      expect(hit?.query.get('code')).toMatch(/^cod_/);
      expect(hit?.query.get('state')).toMatch(/^test_/);
      expect(hit?.query.get('iss')).toBe(server.baseUrl);
      // The sign-in is in the website's history, and the overview's last step is done.
      await page.goto(`${server.baseUrl}/console/websites/${clientId}`);
      expect(await page.getByRole('table', { name: 'Sign-ins, newest first' }).textContent()).toContain(agent.agentId);

      // Delete, after a confirmation that says what ends.
      let asked = '';
      page.once('dialog', (dialog) => {
        asked = dialog.message();
        void dialog.accept();
      });
      await page.getByRole('button', { name: 'Delete website' }).click();
      await page.waitForURL(/\/console\/websites\?notice=website_deleted$/);
      expect(asked).toMatch(/^Delete the website Wendy’s shop\? .*every grant it holds is revoked/);
      expect(await page.locator('#notice').textContent()).toContain('The website is deleted');
      expect(await server.ctx.store.clients.find(clientId)).toBeUndefined();
      expect(await page.locator('#no-websites').isVisible()).toBe(true);

      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('dismissing the confirmation deletes nothing', async () => {
    const owner = await createPasswordAccount(server.ctx);
    const client = await server.createClient({ name: 'Kept', accountId: owner.id });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${server.baseUrl}/console/sign-in`);
      await page.getByLabel('Email', { exact: true }).fill(owner.email);
      await page.getByLabel('Password', { exact: true }).fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/console');
      await page.goto(`${server.baseUrl}/console/websites/${client.clientId}`);
      page.once('dialog', (dialog) => void dialog.dismiss());
      await page.getByRole('button', { name: 'Delete website' }).click();
      await page.waitForTimeout(300);
      expect(new URL(page.url()).pathname).toBe(`/console/websites/${client.clientId}`);
      expect(await server.ctx.store.clients.find(client.clientId)).toBeDefined();
    } finally {
      await context.close();
    }
  });
});
