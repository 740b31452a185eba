/**
 * A console full of realistic data, for the layout tests and screenshots: long names, emails and
 * redirect URIs, long user agents, hostile text, many rows. An admin and a member, each with a
 * session cookie value to put in a browser.
 */
import { createAccount } from '../../src/domain/accounts.ts';
import { createOwnedAgent, createOwnedClient } from './owned.ts';

import { recordConsoleEvent } from '../../src/console/events.ts';
import { startSession } from '../../src/console/sessions.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { obtainTokens } from './flow.ts';
import type { TestServer } from './server.ts';

export const LONG_USER_AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.70',
  'agentauth-python/0.1.0 (Python 3.11)',
  'agentauth-agent-js/0.3.0',
  `research-crawler/2.7.1 (+https://very-long-company-name-for-testing.example/bots/research-crawler-documentation?${'x'.repeat(120)})`,
];

const OUTCOMES = [
  'authenticated',
  'authenticated',
  'invalid_credentials',
  'authenticated',
  'request_expired',
  'throttled',
  'request_mismatch',
];

export interface ConsoleData {
  admin: AccountRecord;
  member: AccountRecord;
  /** Session cookie values (agentauth_console) of the admin and the member. */
  adminCookie: string;
  memberCookie: string;
  agentId: string;
  clientId: string;
}

export async function seedConsole(server: TestServer): Promise<ConsoleData> {
  const { ctx } = server;
  const suffix = Math.random().toString(36).slice(2, 8);
  const admin = await createAccount(ctx, {
    email: `administrator.with.a.rather.long.address.${suffix}@operations.example-company.com`,
    name: 'Ada Augusta King, Countess of Lovelace',
    role: 'admin',
    password: 'correct horse battery staple',
    emailVerified: true,
  });
  const member = await createAccount(ctx, {
    email: `grace.brewster.murray.hopper.${suffix}@navy-research-laboratory.example.org`,
    name: 'Grace Brewster Murray Hopper',
    role: 'member',
    password: 'correct horse battery staple',
  });
  for (let i = 0; i < 12; i++)
    await createAccount(ctx, {
      email: `person-number-${i}-with-long-mailbox-name.${suffix}@subdomain.example.com`,
      name: i % 2 === 0 ? `Person ${i} with a longer display name than most` : undefined,
      role: i % 5 === 0 ? 'admin' : 'member',
      password: 'correct horse battery staple',
    });

  const { client, secret: clientSecret } = await createOwnedClient(ctx, member, {
    name: 'The Quarterly Procurement and Vendor Management Portal of the Northern Region',
    redirect_uris: `https://procurement.northern-region.example-enterprise.com/oauth2/callback/agentauth/v1/return-to-dashboard\nhttp://localhost:8080/callback`,
  });
  if (clientSecret === null) throw new Error('a confidential website has a secret');
  const { client: second } = await createOwnedClient(ctx, member, {
    name: 'Notes',
    redirect_uris: 'https://notes.example/cb',
  });
  const { agent, secret: agentSecret } = await createOwnedAgent(
    ctx,
    member,
    'Research assistant for the quarterly procurement review and vendor comparisons',
  );
  await createOwnedAgent(ctx, member, 'Shopping helper');
  // Live grants, so that the agent has connected sites.
  await obtainTokens(server, {
    clientId: client.id,
    clientSecret,
    redirectUri: 'http://localhost:8080/callback',
    agentId: agent.id,
    agentSecret,
  });

  const now = ctx.clock();
  for (let i = 0; i < 45; i++)
    await ctx.store.signIns.record({
      at: now - i * 5400,
      agent_id: agent.id,
      request_id: null,
      client_id: i % 3 === 0 ? second.id : client.id,
      model: i % 4 === 0 ? '=HYPERLINK("https://evil.example","click")' : 'claude-sonnet-4-5-20250929-extended-context',
      ip: i % 2 === 0 ? '2001:db8:85a3:1234:5678:8a2e:370:7334' : '198.51.100.23',
      user_agent: LONG_USER_AGENTS[i % LONG_USER_AGENTS.length]!,
      outcome: OUTCOMES[i % OUTCOMES.length]!,
    });
  for (let i = 0; i < 10; i++)
    await recordConsoleEvent(
      ctx,
      admin,
      'admin.setup_link',
      member.id,
      '2001:db8:85a3:1234:5678:8a2e:370:7334',
      `a detail that is rather long: ${'lorem ipsum dolor sit amet '.repeat(4)}`,
    );

  for (let i = 0; i < 3; i++)
    await ctx.store.passkeys.insert({
      id: `passkey-${suffix}-${i}`,
      account_id: member.id,
      public_key: 'AA',
      counter: 0,
      transports: null,
      name: i === 0 ? 'The YubiKey 5C NFC on the keyring with the office keys and the bicycle lock' : `Phone ${i}`,
      created_at: now - i * 86400,
      last_used_at: i === 2 ? null : now,
    });
  for (const userAgent of LONG_USER_AGENTS.slice(0, 4))
    await startSession(ctx, member, 'password', { ip: '2001:db8:85a3:1234:5678:8a2e:370:7334', userAgent });
  const memberCookie = await startSession(ctx, member, 'password', {
    ip: '127.0.0.1',
    userAgent: LONG_USER_AGENTS[0],
  });
  const adminCookie = await startSession(ctx, admin, 'password', { ip: '127.0.0.1', userAgent: LONG_USER_AGENTS[2] });
  return { admin, member, adminCookie, memberCookie, agentId: agent.id, clientId: client.id };
}
