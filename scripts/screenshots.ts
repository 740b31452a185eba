/**
 * npm run screenshots: pictures of the real pages (the authorization page and the console's)
 * for the README and the docs, written to
 * docs/screenshots/. Starts a server on a temporary SQLite database, makes an admin, a website
 * and an agent, runs real sign-ins (plus older audit events, so the 30-day chart has a shape),
 * and drives Debian's Chromium through the pages at desktop and phone widths.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { loadConfig } from '../src/config.ts';
import { createAccount, issueLink } from '../src/console/accounts.ts';
import { createOwnedAgent } from '../src/console/agents.ts';
import { createOwnedClient } from '../src/console/clients.ts';
import { startServer } from '../src/server.ts';
import { launchChromium, startCallbackServer } from '../test/helpers/browser.ts';
import { authorizeUrl, obtainTokens, type Party, pkcePair } from '../test/helpers/flow.ts';
import { freePort } from '../test/helpers/net.ts';
import type { TestServer } from '../test/helpers/server.ts';

const OUT = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const PASSWORD = 'correct horse battery staple';
const DESKTOP = { width: 1200, height: 860 };
const PHONE = { width: 390, height: 844 };

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'agentauth-screenshots-'));
  const port = await freePort();
  const config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://localhost:${port}`,
    DATABASE_URL: `sqlite:${join(dir, 'agentauth.db')}`,
    JWT_SECRET: 'screenshots-secret-of-at-least-32-bytes!',
    LOG_LEVEL: 'silent',
  });
  const server = await startServer(config, { warn: () => {} });
  const callback = await startCallbackServer();
  const browser = await launchChromium();
  try {
    const { ctx } = server;
    const ada = await createAccount(ctx, {
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      role: 'admin',
      password: PASSWORD,
      emailVerified: true,
    });
    const grace = await createAccount(ctx, {
      email: 'grace@example.com',
      name: 'Grace Hopper',
      role: 'member',
      password: PASSWORD,
    });
    // Unused links, listed on the account page and the admin's: two invitations and a setup link.
    await issueLink(ctx, 'invite', { role: 'member', createdBy: ada.id });
    await issueLink(ctx, 'setup', { accountId: grace.id, createdBy: ada.id });
    await issueLink(ctx, 'invite', { role: 'member', createdBy: grace.id });
    const { client, secret: clientSecret } = await createOwnedClient(ctx, ada, {
      name: 'Acme Notes',
      redirect_uris: callback.uri,
    });
    if (clientSecret === null) throw new Error('a confidential website has a secret');
    await createOwnedClient(ctx, ada, {
      name: 'Travel Planner',
      redirect_uris: `${callback.origin}/travel`,
      approval: 'manual',
    });
    const { agent, secret: agentSecret } = await createOwnedAgent(ctx, ada, 'Research assistant');
    await createOwnedAgent(ctx, ada, 'Shopping helper');
    const party: Party = {
      clientId: client.id,
      clientSecret,
      redirectUri: callback.uri,
      agentId: agent.id,
      agentSecret,
    };
    const target = { baseUrl: config.baseUrl } as TestServer;
    for (let i = 0; i < 3; i++) await obtainTokens(target, party);
    // Earlier days of use, so that the chart shows a month rather than one bar.
    const now = ctx.clock();
    for (let day = 1; day < 30; day++) {
      for (let n = 0; n < (day * 7) % 5; n++) {
        await ctx.store.recordAuditEvent({
          at: now - day * 86400 - n * 600,
          agent_id: agent.id,
          request_id: `req_earlier${day}_${n}`,
          client_id: client.id,
          model: 'claude-sonnet-4',
          ip: '192.0.2.10',
          user_agent: 'research-assistant/1.4',
          outcome: 'authenticated',
        });
      }
    }
    await ctx.store.recordAuditEvent({
      at: now - 7200,
      agent_id: agent.id,
      request_id: 'req_wrong',
      client_id: client.id,
      model: 'claude-sonnet-4',
      ip: '198.51.100.23',
      user_agent: 'curl/8.5.0',
      outcome: 'invalid_credentials',
    });

    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const shot = async (name: string, path: string, viewport = DESKTOP) => {
      await page.setViewportSize(viewport);
      await page.goto(`${config.baseUrl}${path}`);
      await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
      process.stdout.write(`docs/screenshots/${name}.png\n`);
    };
    // The page every person signing in through an agent sees, before the agent has signed in.
    const authorize = new URL(
      authorizeUrl(target, {
        client_id: client.id,
        redirect_uri: callback.uri,
        response_type: 'code',
        scope: 'openid email profile',
        state: 'screenshot',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      }),
    );
    await shot('authorize', `${authorize.pathname}${authorize.search}`);
    await shot('authorize-phone', `${authorize.pathname}${authorize.search}`, PHONE);
    await shot('sign-in', '/console/sign-in');
    await signIn(page, config.baseUrl);
    await shot('overview', '/console');
    await shot('agents', '/console/agents');
    await shot('agent', `/console/agents/${agent.id}`);
    await shot('agent-phone', `/console/agents/${agent.id}`, PHONE);
    await page.setViewportSize(DESKTOP);
    await page.goto(`${config.baseUrl}/console/agents`);
    await page.getByLabel('Name').fill('Calendar agent');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.screenshot({ path: join(OUT, 'agent-created.png'), fullPage: true });
    process.stdout.write('docs/screenshots/agent-created.png\n');
    await shot('websites', '/console/websites');
    await shot('website', `/console/websites/${client.id}`);
    await shot('account', '/console/account');
    await shot('admin', '/console/admin');
    await shot('admin-links', '/console/admin/links');
    await shot('admin-events', '/console/admin/events');
    await context.close();
  } finally {
    await browser.close();
    await callback.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function signIn(page: Page, baseUrl: string): Promise<void> {
  await page.goto(`${baseUrl}/console/sign-in`);
  await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/console');
}

main().catch((error: unknown) => {
  process.stderr.write(`screenshots failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
