/**
 * The ConsoleStore contract (docs/design.md §11), on the project's engine: what must happen once
 * happens once, multi-row changes are whole, and owned agents follow their account.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountLinkRecord, AccountRecord } from '../../src/store/accounts.ts';
import { openStore } from '../../src/store/open.ts';
import type { Store } from '../../src/store/types.ts';
import { freshDatabase } from '../helpers/server.ts';

const NOW = 1_800_000_000;
let store: Store;
let dispose: () => Promise<void>;
let sequence = 0;
const unique = (prefix: string) => `${prefix}${++sequence}_${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentauth-console-store-'));
  const database = await freshDatabase(dir);
  store = await openStore(database.url);
  await store.migrate();
  dispose = async () => {
    await store.close();
    await database.dispose();
    rmSync(dir, { recursive: true, force: true });
  };
});
afterAll(() => dispose());

function account(overrides: Partial<AccountRecord> = {}): AccountRecord {
  const email = `${unique('p')}@example.com`;
  return {
    id: unique('acc_'),
    email,
    email_key: email,
    name: null,
    role: 'member',
    status: 'active',
    email_verified: false,
    password_hash: null,
    created_at: NOW,
    last_sign_in_at: null,
    version: 1,
    ...overrides,
  };
}

describe('ConsoleStore', () => {
  it('refuses a second account with the same email key', async () => {
    const first = account();
    expect(await store.accounts.insert(first)).toBe(true);
    expect(await store.accounts.insert(account({ email: first.email.toUpperCase(), email_key: first.email_key }))).toBe(
      false,
    );
    expect(await store.accounts.findByEmail(first.email_key)).toMatchObject({
      id: first.id,
      email_verified: false,
    });
  });

  it('an invitation is used once, and not at all when its account cannot be created', async () => {
    const taken = account();
    await store.accounts.insert(taken);
    const digest = unique('dig');
    await store.links.insert({
      digest,
      purpose: 'invite',
      account_id: null,
      email: null,
      role: 'member',
      created_by: null,
      created_at: NOW,
      expires_at: NOW + 60,
      used_at: null,
      revoked_at: null,
    });
    expect(await store.accounts.insertWithLink(account({ email_key: taken.email_key }), digest, NOW)).toBe(
      'email_taken',
    );
    expect((await store.links.find(digest))?.used_at).toBeNull();
    const results = await Promise.all(
      [account(), account(), account()].map((a) => store.accounts.insertWithLink(a, digest, NOW)),
    );
    expect(results.filter((r) => r === 'created')).toHaveLength(1);
    expect(results.filter((r) => r === null)).toHaveLength(2);
    expect(await store.accounts.insertWithLink(account(), digest, NOW)).toBeNull();
  });

  it('a link of another purpose, or expired, cannot be used', async () => {
    const digest = unique('dig');
    await store.links.insert({
      digest,
      purpose: 'setup',
      account_id: 'acc_x',
      email: null,
      role: null,
      created_by: null,
      created_at: NOW,
      expires_at: NOW + 60,
      used_at: null,
      revoked_at: null,
    });
    expect(await store.links.use(digest, 'invite', NOW)).toBe(false);
    expect(await store.links.use(digest, 'setup', NOW + 60)).toBe(false);
    expect(await store.links.use(digest, 'setup', NOW)).toBe(true);
    expect(await store.links.use(digest, 'setup', NOW)).toBe(false);
  });

  it("a link is revoked once, while outstanding, by its maker or by anyone when none is named; a disabled maker's link cannot be used", async () => {
    const maker = account();
    const other = account();
    await store.accounts.insert(maker);
    await store.accounts.insert(other);
    const link = (overrides: Partial<AccountLinkRecord> = {}): AccountLinkRecord => ({
      digest: unique('dig'),
      purpose: 'invite',
      account_id: null,
      email: null,
      role: 'member',
      created_by: maker.id,
      created_at: NOW,
      expires_at: NOW + 60,
      used_at: null,
      revoked_at: null,
      ...overrides,
    });
    const [first, second, others, setupFor, verify, expired] = [
      link(),
      link(),
      link({ created_by: other.id }),
      link({ purpose: 'setup', account_id: maker.id, role: null, created_by: null }),
      link({ purpose: 'verify', account_id: maker.id, role: null, created_by: null, email: maker.email }),
      link({ expires_at: NOW }),
    ];
    for (const each of [first, second, others, setupFor, verify, expired]) await store.links.insert(each!);
    const digests = (links: AccountLinkRecord[]) => links.map((each) => each.digest);
    expect(digests(await store.links.listOutstanding(NOW, maker.id)).sort()).toEqual(
      [first!.digest, second!.digest].sort(),
    );
    const every = digests(await store.links.listOutstanding(NOW));
    expect(every).toEqual(expect.arrayContaining([first!.digest, second!.digest, others!.digest, setupFor!.digest]));
    expect(every).not.toContain(verify!.digest);
    expect(every).not.toContain(expired!.digest);

    expect(await store.links.revoke(first!.digest, NOW, other.id)).toBe(false);
    expect(await store.links.revoke(first!.digest, NOW, maker.id)).toBe(true);
    expect(await store.links.revoke(first!.digest, NOW)).toBe(false);
    expect(await store.links.revoke(expired!.digest, NOW)).toBe(false);
    expect(await store.links.use(first!.digest, 'invite', NOW)).toBe(false);
    // What disabling the maker ends: the links it made and the setup links made for it.
    expect(await store.links.revokeAll(maker.id, NOW)).toBe(2);
    expect(await store.links.listOutstanding(NOW, maker.id)).toEqual([]);
    expect((await store.links.find(setupFor!.digest))?.revoked_at).toBe(NOW);
    expect((await store.links.find(verify!.digest))?.revoked_at).toBeNull();
    expect((await store.links.find(others!.digest))?.revoked_at).toBeNull();

    // A maker disabled without its links being ended: the use itself refuses the link.
    await store.accounts.update(other.id, { status: 'disabled' });
    expect(await store.links.use(others!.digest, 'invite', NOW)).toBe(false);
    expect(await store.accounts.insertWithLink(account(), others!.digest, NOW)).toBeNull();
    await store.accounts.update(other.id, { status: 'active' });
    expect(await store.accounts.insertWithLink(account(), others!.digest, NOW)).toBe('created');
  });

  it('a WebAuthn challenge is taken once, and not after it expired', async () => {
    await store.challenges.insert({ id: 'chl_once', challenge: 'c', account_id: null, expires_at: NOW + 300 });
    const taken = await Promise.all([1, 2, 3].map(() => store.challenges.take('chl_once', NOW)));
    expect(taken.filter(Boolean)).toHaveLength(1);
    await store.challenges.insert({ id: 'chl_old', challenge: 'c', account_id: null, expires_at: NOW });
    expect(await store.challenges.take('chl_old', NOW)).toBeUndefined();
  });

  it('a passkey counter only goes forward (0 stays allowed for authenticators without one)', async () => {
    const owner = account();
    await store.accounts.insert(owner);
    await store.passkeys.insert({
      id: 'pk_counting',
      account_id: owner.id,
      public_key: 'x',
      counter: 5,
      transports: null,
      name: 'Key',
      created_at: NOW,
      last_used_at: null,
    });
    expect(await store.passkeys.recordUse('pk_counting', 5, NOW)).toBe(false);
    expect(await store.passkeys.recordUse('pk_counting', 4, NOW)).toBe(false);
    expect(await store.passkeys.recordUse('pk_counting', 6, NOW)).toBe(true);
    await store.passkeys.insert({
      id: 'pk_zero',
      account_id: owner.id,
      public_key: 'x',
      counter: 0,
      transports: null,
      name: 'Synced',
      created_at: NOW,
      last_used_at: null,
    });
    expect(await store.passkeys.recordUse('pk_zero', 0, NOW)).toBe(true);
    expect(await store.passkeys.recordUse('pk_zero', 0, NOW + 1)).toBe(true);
    // Another account's passkey is neither renamed nor removed.
    expect(await store.passkeys.rename('pk_zero', 'acc_other', 'Mine now')).toBe(false);
    expect(await store.passkeys.delete('pk_zero', 'acc_other')).toBe(false);
  });

  it("an account's name and verification reach its agents' claims, not other agents'", async () => {
    const owner = account();
    await store.accounts.insert(owner);
    const agent = (id: string, accountId: string | null) => ({
      id,
      secret_digest: 'd',
      previous_secret_digest: null,
      previous_secret_expires_at: null,
      name: 'A',
      owner_email: owner.email,
      owner_name: null,
      owner_email_verified: false,
      status: 'active' as const,
      created_at: NOW,
      last_used_at: null,
      version: 1,
      account_id: accountId,
      policy: null,
    });
    await store.agents.insert(agent(unique('agt_owned'), owner.id));
    const cliAgent = unique('agt_cli');
    await store.agents.insert(agent(cliAgent, null));
    expect(await store.accounts.update(owner.id, { name: 'Ada', email_verified: true })).toBe(true);
    const [owned] = await store.agents.list({ accountId: owner.id });
    expect(owned).toMatchObject({ owner_name: 'Ada', owner_email_verified: true });
    expect(await store.agents.find(cliAgent)).toMatchObject({ owner_name: null, owner_email_verified: false });
  });

  it('purges expired sessions, challenges, links a day past expiry, and old console events', async () => {
    const owner = account();
    await store.accounts.insert(owner);
    await store.sessions.insert({
      id: unique('ses_'),
      digest: unique('d'),
      account_id: owner.id,
      created_at: NOW - 100,
      last_seen_at: NOW - 100,
      authenticated_at: NOW - 100,
      expires_at: NOW - 1,
      ip: null,
      user_agent: null,
      method: 'password',
    });
    const live = unique('ses_');
    await store.sessions.insert({
      id: live,
      digest: unique('d'),
      account_id: owner.id,
      created_at: NOW,
      last_seen_at: NOW,
      authenticated_at: NOW,
      expires_at: NOW + 100,
      ip: null,
      user_agent: null,
      method: 'password',
    });
    const recentLink = unique('dig');
    await store.links.insert({
      digest: recentLink,
      purpose: 'invite',
      account_id: null,
      email: null,
      role: 'member',
      created_by: null,
      created_at: NOW,
      expires_at: NOW - 10,
      used_at: null,
      revoked_at: null,
    });
    await store.activity.record({
      at: NOW - 1000,
      actor_id: null,
      action: 'old',
      target: null,
      ip: null,
      detail: null,
    });
    await store.activity.record({
      at: NOW,
      actor_id: owner.id,
      action: 'new',
      target: null,
      ip: null,
      detail: null,
    });
    await store.accounts.purge(NOW, NOW - 500);
    expect((await store.sessions.list(owner.id, NOW)).map((s) => s.id)).toEqual([live]);
    expect(await store.links.find(recentLink)).toBeDefined();
    const actions = (await store.activity.list({ limit: 100 })).map((e) => e.action);
    expect(actions).toContain('new');
    expect(actions).not.toContain('old');
    await store.accounts.purge(NOW + 86400, NOW - 500);
    expect(await store.links.find(recentLink)).toBeUndefined();
  });
});
