/**
 * Email verification (issue 10, item 6): a link mailed through a real SMTP server on loopback
 * (smtp-server), confirmed with a button, used once; the agents of the account then say
 * email_verified true. Without SMTP_URL an administrator verifies the email instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnedAgent } from '../helpers/owned.ts';

import type { AccountRecord } from '../../src/store/accounts.ts';
import { ConsoleSession, createPasswordAccount, noticeOf, signIn } from '../helpers/console.ts';
import { obtainTokens, type Party } from '../helpers/flow.ts';
import { startMailbox } from '../helpers/mailbox.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** The claims of a JWT's payload (the id token is the server's own: its signature is tested elsewhere). */
const payloadOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

async function userinfo(server: TestServer, accessToken: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

/** A website and an agent of the account, ready for the flow. */
async function partyOf(server: TestServer, account: AccountRecord): Promise<Party> {
  const { agent, secret } = await createOwnedAgent(server.ctx, account, 'Verified-or-not bot');
  return { ...(await server.createClient({ name: 'Claims Reader' })), agentId: agent.id, agentSecret: secret };
}

/** What the website learns about the agent's owner: id token and userinfo agree. */
async function emailVerifiedClaim(server: TestServer, party: Party): Promise<boolean> {
  const tokens = await obtainTokens(server, party, { scope: 'openid email', nonce: 'n-1' });
  const idToken = payloadOf(tokens.id_token!);
  const info = await userinfo(server, tokens.access_token);
  expect(info.email_verified).toBe(idToken.email_verified);
  expect(info.email).toBe(idToken.email);
  return idToken.email_verified as boolean;
}

describe('email verification by mail (SMTP_URL set)', () => {
  let server: TestServer;
  let mailbox: Awaited<ReturnType<typeof startMailbox>>;
  beforeAll(async () => {
    mailbox = await startMailbox();
    server = await startTestServer({ env: { SMTP_URL: mailbox.url, SMTP_FROM: 'agentauth <no-reply@id.example>' } });
  });
  afterAll(async () => {
    await server.close();
    await mailbox.close();
  });

  it('mails a link that verifies the email once, after a button; the agents then say email_verified true', async () => {
    const account = await createPasswordAccount(server.ctx, { email: 'Vera@Example.com', name: 'Vera' });
    const party = await partyOf(server, account);
    expect(await emailVerifiedClaim(server, party)).toBe(false);

    const session = await signIn(server.baseUrl, account.email);
    const before = await session.get('/console/account');
    expect(before.text).toContain('not verified');
    expect(before.text).toContain('action="/console/account/verify-email"');

    const sent = await session.post('/console/account/verify-email');
    expect(sent.status).toBe(303);
    expect(sent.location).toBe('/console/account?notice=verification_sent');
    expect(noticeOf(await session.get(sent.location!))).toBe('A verification link is on its way to your email.');

    const mail = await mailbox.next();
    // The envelope's recipient (SMTP domains are case-insensitive; nodemailer lower-cases them).
    expect(mail.to.map((address) => address.toLowerCase())).toEqual(['vera@example.com']);
    expect(mail.headers).toMatch(/^To: Vera@Example\.com$/im);
    expect(mail.headers).toMatch(/^From: agentauth <no-reply@id\.example>$/im);
    expect(mail.headers).toMatch(/^Subject: Verify your email for agentauth$/im);
    expect(mail.text).toContain('Hello Vera');
    const url = new RegExp(`${server.baseUrl.replace(/\./g, '\\.')}/console/verify-email/lnk_[A-Za-z0-9_-]+`).exec(
      mail.text,
    )?.[0];
    expect(url).toBeDefined();
    const path = url!.replace(server.baseUrl, '');

    // Opening the link (a person, a mail scanner, a link preview) verifies nothing by itself.
    const visitor = new ConsoleSession(server.baseUrl);
    const landing = await visitor.get(path);
    expect(landing.status).toBe(200);
    expect(landing.text).toContain('Verify your email');
    expect(landing.text).toContain(`action="${path}"`);
    expect(landing.text).toContain('Verify my email');
    expect((await server.ctx.store.accounts.find(account.id))?.email_verified).toBe(false);
    expect(await emailVerifiedClaim(server, party)).toBe(false);

    // The button's post answers 303 (a reload re-posts nothing) to a page that names no address.
    const confirmed = await visitor.submit(path);
    expect(confirmed.posted.status).toBe(303);
    expect(confirmed.posted.location).toBe('/console/email-verified');
    expect(confirmed.status).toBe(200);
    expect(confirmed.text).toContain('Your email address is verified.');
    expect(confirmed.text).not.toContain('Vera@Example.com');
    expect((await server.ctx.store.accounts.find(account.id))?.email_verified).toBe(true);
    const after = await session.get('/console/account');
    expect(after.text).toContain('<span class="badge ok">verified</span>');
    expect(after.text).not.toContain('action="/console/account/verify-email"');

    // The link works once.
    const twice = await visitor.post(path);
    expect(twice.status).toBe(404);
    expect(twice.text).toContain('This link has already been used.');
    const reopened = await new ConsoleSession(server.baseUrl).get(path);
    expect(reopened.status).toBe(404);
    expect(reopened.text).toContain('already been used');

    // Every agent of the account, the one made before and one made after, now says verified.
    expect(await emailVerifiedClaim(server, party)).toBe(true);
    const later = await createOwnedAgent(server.ctx, (await server.ctx.store.accounts.find(account.id))!, 'Later bot');
    expect(await emailVerifiedClaim(server, { ...party, agentId: later.agent.id, agentSecret: later.secret })).toBe(
      true,
    );

    const actions = (await server.ctx.store.activity.list({ limit: 100 }))
      .filter((event) => event.target === account.id)
      .map((event) => event.action);
    expect(actions).toEqual(expect.arrayContaining(['account.send_verification', 'account.verify_email']));
  });

  it('a link is for its own purpose only, and an unknown one answers a 404 page', async () => {
    const account = await createPasswordAccount(server.ctx);
    const session = await signIn(server.baseUrl, account.email);
    await session.get('/console/account');
    await session.post('/console/account/verify-email');
    const mail = await mailbox.next();
    expect(mail.to).toEqual([account.email]);
    const token = /\/console\/verify-email\/(lnk_[A-Za-z0-9_-]+)/.exec(mail.text)![1];
    // A verification token is not a setup link: it signs nobody in.
    expect((await new ConsoleSession(server.baseUrl).get(`/console/setup/${token}`)).status).toBe(404);
    const unknown = await new ConsoleSession(server.baseUrl).get('/console/verify-email/lnk_unknown');
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('This link is not valid.');
    expect((await server.ctx.store.accounts.find(account.id))?.email_verified).toBe(false);
  });
});

describe('email verification without SMTP_URL: an administrator verifies', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('offers no button to send a link, and answers a request for one 400 with who verifies instead', async () => {
    const account = await createPasswordAccount(server.ctx);
    const session = await signIn(server.baseUrl, account.email);
    const page = await session.get('/console/account');
    expect(page.text).not.toContain('action="/console/account/verify-email"');
    expect(page.text).toContain('until an administrator verifies it');
    const refused = await session.post('/console/account/verify-email');
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('until an administrator verifies it');
    expect((await server.ctx.store.accounts.find(account.id))?.email_verified).toBe(false);
  });

  it('an admin marks a member’s email verified, and the member’s agents say so', async () => {
    const member = await createPasswordAccount(server.ctx, { email: 'member.mo@example.com' });
    const party = await partyOf(server, member);
    expect(await emailVerifiedClaim(server, party)).toBe(false);

    const admin = await createPasswordAccount(server.ctx, { role: 'admin' });
    const session = await signIn(server.baseUrl, admin.email);
    const before = await session.get('/console/admin');
    expect(before.text).toContain(`/console/admin/accounts/${member.id}/verify-email`);
    const marked = await session.post(`/console/admin/accounts/${member.id}/verify-email`);
    expect(marked.status).toBe(303);
    expect(marked.location).toBe('/console/admin?notice=email_verified');
    expect(noticeOf(await session.get(marked.location!))).toBe('The email is marked verified.');

    expect((await server.ctx.store.accounts.find(member.id))?.email_verified).toBe(true);
    expect((await server.ctx.store.agents.find(party.agentId))?.owner_email_verified).toBe(true);
    expect(await emailVerifiedClaim(server, party)).toBe(true);
    const event = (await server.ctx.store.activity.list({ limit: 100 })).find(
      (e) => e.action === 'admin.verify_email' && e.target === member.id,
    );
    expect(event).toMatchObject({ actor_id: admin.id, actor_email: admin.email });
  });
});
