/**
 * The Store contract (docs/design.md §9), run against every engine: each exactly-once transition
 * has one winner, and the transactions write all of their rows or none.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/open.ts';
import { freshDatabase, TEST_ENGINE } from './helpers/server.ts';
import type { CodeRecord, GrantRecord, IssuedTokens } from '../src/store/tokens.ts';
import type { AuditEvent } from '../src/store/history.ts';
import type { AuthorizationRequestRecord } from '../src/store/requests.ts';
import type { Store } from '../src/store/types.ts';

interface Engine {
  name: string;
  open(): Promise<{ store: Store; dispose(): Promise<void> }>;
}

/** The store of the project's engine (vitest.config.ts runs this suite once per engine). */
const engines: Engine[] = [
  {
    name: TEST_ENGINE,
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'agentauth-store-'));
      const database = await freshDatabase(dir);
      const store = await openStore(database.url);
      return {
        store,
        dispose: async () => {
          await store.close();
          await database.dispose();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];

const NOW = 1_800_000_000;
let sequence = 0;
const unique = (prefix: string) => `${prefix}${++sequence}_${Math.random().toString(36).slice(2)}`;

function request(overrides: Partial<AuthorizationRequestRecord> = {}): AuthorizationRequestRecord {
  return {
    id: unique('req_'),
    client_id: 'cli_1',
    redirect_uri: 'https://app.example/cb',
    scope: 'openid',
    state: 's',
    code_challenge: 'c'.repeat(43),
    nonce: null,
    login_hint: null,
    resource: null,
    browser_digest: 'browser',
    status: 'pending',
    error: null,
    error_description: null,
    agent_id: null,
    model: null,
    authenticated_at: null,
    created_at: NOW,
    expires_at: NOW + 600,
    approval_id: null,
    ...overrides,
  };
}

function code(requestId: string): CodeRecord {
  return {
    digest: unique('code_'),
    request_id: requestId,
    client_id: 'cli_1',
    redirect_uri: 'https://app.example/cb',
    scope: 'openid',
    code_challenge: 'c'.repeat(43),
    nonce: null,
    resource: null,
    agent_id: 'agt_1',
    model: 'm',
    auth_time: NOW,
    expires_at: NOW + 600,
    redeemed_at: null,
    grant_id: null,
  };
}

function audit(agentId: string, requestId: string): AuditEvent {
  return {
    at: NOW,
    agent_id: agentId,
    request_id: requestId,
    client_id: 'cli_1',
    model: 'm',
    ip: '127.0.0.1',
    user_agent: null,
    outcome: 'authenticated',
  };
}

function grant(): GrantRecord {
  return {
    id: unique('grt_'),
    client_id: 'cli_1',
    agent_id: 'agt_1',
    scope: 'openid',
    model: 'm',
    auth_time: NOW,
    created_at: NOW,
    revoked_at: null,
    resource: null,
  };
}

function tokens(grantId: string): IssuedTokens {
  return {
    accessToken: {
      jti: unique('atk_'),
      grant_id: grantId,
      client_id: 'cli_1',
      scope: 'openid',
      expires_at: NOW + 3600,
      revoked_at: null,
    },
    refreshToken: {
      digest: unique('rft_'),
      grant_id: grantId,
      created_at: NOW,
      expires_at: NOW + 86400,
      used_at: null,
    },
  };
}

describe.each(engines)('Store on $name', (engine) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, dispose } = await engine.open());
    await store.migrate();
    await store.migrate(); // idempotent
  });
  afterAll(() => dispose());

  /** A request taken to completed, with its code stored: what a token exchange starts from. */
  async function issuedCode(): Promise<CodeRecord> {
    const r = request({ status: 'authenticated' });
    await store.requests.insert(r);
    const c = code(r.id);
    expect(await store.requests.complete(r.id, 'browser', NOW, c)).toBe(true);
    return c;
  }

  /** A redeemed code's grant and its first tokens. */
  async function redeemedGrant(): Promise<{ g: GrantRecord; t: IssuedTokens }> {
    const c = await issuedCode();
    const g = grant();
    const t = tokens(g.id);
    expect(await store.codes.redeem(c.digest, NOW, g, t)).toBe(true);
    return { g, t };
  }

  it('pending → authenticated has exactly one winner under concurrency', async () => {
    const r = request();
    await store.requests.insert(r);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.requests.authenticate(r.id, { agent_id: `agt_${i}`, model: 'm' }, NOW + 1, audit(`agt_${i}`, r.id)),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.requests.find(r.id)).toMatchObject({ status: 'authenticated', authenticated_at: NOW + 1 });
    // The winner's audit event was written with the transition; the losers' were rolled back with theirs.
    const winner = `agt_${results.indexOf(true)}`;
    const events = (
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.signIns.listEvents({ agent_id: `agt_${i}`, limit: 10 })),
      )
    )
      .flat()
      .filter((e) => e.request_id === r.id);
    expect(events.map((e) => e.agent_id)).toEqual([winner]);
  });

  it('a status change is heard by the listeners once committed; a unit that is void is heard by none', async () => {
    const heard: string[] = [];
    const stop = await store.watchStatus({ changed: (payload) => void heard.push(payload), resumed: () => {} });
    try {
      const expired = request();
      await store.requests.insert(expired);
      expect(
        await store.requests.authenticate(
          expired.id,
          { agent_id: 'agt_1', model: 'm' },
          NOW + 600,
          audit('agt_1', expired.id),
        ),
      ).toBe(false);
      const live = request();
      await store.requests.insert(live);
      expect(
        await store.requests.authenticate(live.id, { agent_id: 'agt_1', model: 'm' }, NOW + 1, audit('agt_1', live.id)),
      ).toBe(true);
      // PostgreSQL delivers NOTIFY asynchronously: wait for the one that must come.
      for (let waited = 0; !heard.includes(live.id) && waited < 5000; waited += 20)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(heard).toEqual([live.id]);
      expect(
        (await store.signIns.listEvents({ agent_id: 'agt_1', limit: 100 })).filter((e) => e.request_id === expired.id),
      ).toEqual([]);
    } finally {
      await stop();
    }
  });

  it('an expired request cannot be authenticated', async () => {
    const r = request();
    await store.requests.insert(r);
    expect(
      await store.requests.authenticate(r.id, { agent_id: 'agt_1', model: 'm' }, NOW + 600, audit('agt_1', r.id)),
    ).toBe(false);
    expect((await store.requests.find(r.id))!.status).toBe('pending');
  });

  it('authenticated → completed stores the code in the same transaction, once, for the bound browser only', async () => {
    const r = request({ status: 'authenticated', agent_id: 'agt_1', model: 'm', authenticated_at: NOW });
    await store.requests.insert(r);
    const wrongBrowser = code(r.id);
    expect(await store.requests.complete(r.id, 'other-browser', NOW + 1, wrongBrowser)).toBe(false);
    expect(await store.codes.find(wrongBrowser.digest)).toBeUndefined();
    const attempts = Array.from({ length: 5 }, () => code(r.id));
    const results = await Promise.all(attempts.map((c) => store.requests.complete(r.id, 'browser', NOW + 1, c)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const stored = await Promise.all(attempts.map((c) => store.codes.find(c.digest)));
    expect(stored.filter(Boolean)).toHaveLength(1);
    expect((await store.requests.find(r.id))!.status).toBe('completed');
  });

  it('failRequest moves pending or authenticated to error, never a completed request', async () => {
    const r = request();
    await store.requests.insert(r);
    expect(await store.requests.fail(r.id, 'browser', NOW, 'access_denied', 'cancelled')).toBe(true);
    expect(await store.requests.find(r.id)).toMatchObject({
      status: 'error',
      error: 'access_denied',
      error_description: 'cancelled',
    });
    const done = request({ status: 'completed' });
    await store.requests.insert(done);
    expect(await store.requests.fail(done.id, 'browser', NOW, 'access_denied', 'x')).toBe(false);
  });

  it('a code is redeemed once: one winner writes grant and tokens, losers write nothing', async () => {
    const c = await issuedCode();
    const attempts = Array.from({ length: 10 }, () => {
      const g = grant();
      return { g, t: tokens(g.id) };
    });
    const results = await Promise.all(attempts.map(({ g, t }) => store.codes.redeem(c.digest, NOW + 1, g, t)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = attempts[results.indexOf(true)]!;
    expect(await store.codes.find(c.digest)).toMatchObject({ redeemed_at: NOW + 1, grant_id: winner.g.id });
    for (const { g, t } of attempts) {
      const present = g === winner.g;
      expect(!!(await store.grants.find(g.id))).toBe(present);
      expect(!!(await store.accessTokens.find(t.accessToken.jti))).toBe(present);
      expect(!!(await store.refreshTokens.find(t.refreshToken.digest))).toBe(present);
    }
  });

  it('a refresh token rotates once under concurrency', async () => {
    const { g, t: first } = await redeemedGrant();
    const successors = Array.from({ length: 10 }, () => tokens(g.id));
    const results = await Promise.all(
      successors.map((t) => store.refreshTokens.rotate(first.refreshToken.digest, NOW + 1, t)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.refreshTokens.find(first.refreshToken.digest)).toMatchObject({ used_at: NOW + 1 });
    const stored = await Promise.all(successors.map((t) => store.refreshTokens.find(t.refreshToken.digest)));
    expect(stored.filter(Boolean)).toHaveLength(1);
  });

  it('revocation happens once and is idempotent', async () => {
    const { g, t } = await redeemedGrant();
    expect(
      (await Promise.all([store.grants.revoke(g.id, NOW), store.grants.revoke(g.id, NOW)])).filter(Boolean),
    ).toHaveLength(1);
    expect((await store.grants.find(g.id))!.revoked_at).toBe(NOW);
    expect(await store.accessTokens.revoke(t.accessToken.jti, NOW)).toBe(true);
    expect(await store.accessTokens.revoke(t.accessToken.jti, NOW)).toBe(false);
  });

  it('clients and agents round-trip, including redirect URI lists and booleans', async () => {
    await store.clients.insert({
      id: 'cli_rt',
      name: 'N',
      secret_sealed: 'v1.x',
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      redirect_uris: ['https://a/cb', 'http://localhost/cb'],
      status: 'active',
      approval: 'manual',
      account_id: null,
      created_at: NOW,
      token_endpoint_auth_method: 'client_secret_post',
      source: 'manual',
      registration_token_digest: null,
      resources: ['https://api.example/'],
      last_used_at: null,
      version: 1,
      jwks: null,
      jwks_uri: null,
    });
    expect(await store.clients.find('cli_rt')).toMatchObject({
      redirect_uris: ['https://a/cb', 'http://localhost/cb'],
      approval: 'manual',
      resources: ['https://api.example/'],
    });
    await store.agents.insert({
      id: 'agt_rt',
      secret_digest: 'd',
      previous_secret_digest: null,
      previous_secret_expires_at: null,
      name: 'A',
      owner_email: 'a@b.c',
      owner_name: null,
      owner_email_verified: true,
      status: 'active',
      created_at: NOW,
      last_used_at: null,
      version: 1,
      account_id: null,
      policy: null,
    });
    expect(await store.agents.find('agt_rt')).toMatchObject({
      owner_email_verified: true,
      owner_name: null,
      last_used_at: null,
      version: 1,
    });
    expect(await store.agents.update('agt_rt', { status: 'disabled' })).toBe(true);
    expect(await store.agents.update('agt_nobody', { status: 'disabled' })).toBe(false);
  });

  it('joined reads give every column, as the single-table reads do', async () => {
    await store.clients.insert({
      id: 'cli_join',
      name: 'Joined',
      secret_sealed: '',
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      redirect_uris: ['http://127.0.0.1/cb'],
      status: 'active',
      approval: 'auto',
      account_id: null,
      created_at: NOW,
      token_endpoint_auth_method: 'none',
      source: 'manual',
      registration_token_digest: null,
      resources: [],
      last_used_at: null,
      version: 1,
      jwks: null,
      jwks_uri: null,
    });
    await store.agents.insert({
      id: 'agt_join',
      secret_digest: 'd',
      previous_secret_digest: null,
      previous_secret_expires_at: null,
      name: 'A',
      owner_email: 'a@b.c',
      owner_name: 'Ada',
      owner_email_verified: true,
      status: 'active',
      created_at: NOW,
      last_used_at: null,
      version: 1,
      account_id: 'acc_1',
      policy: null,
    });
    const r = request({ client_id: 'cli_join', resource: 'https://mcp.example/mcp', status: 'authenticated' });
    await store.requests.insert(r);
    expect(await store.requests.findWithClient(r.id)).toEqual({
      request: await store.requests.find(r.id),
      client: await store.clients.find('cli_join'),
    });
    const c = { ...code(r.id), client_id: 'cli_join', agent_id: 'agt_join', resource: 'https://mcp.example/mcp' };
    expect(await store.requests.complete(r.id, 'browser', NOW, c)).toBe(true);
    expect(await store.codes.findWithCaller('cli_join', c.digest)).toEqual({
      client: await store.clients.find('cli_join'),
      code: { code: await store.codes.find(c.digest), agent: await store.agents.find('agt_join') },
    });
    expect(await store.codes.findWithCaller('cli_nobody', c.digest)).toEqual({
      client: undefined,
      code: { code: await store.codes.find(c.digest), agent: await store.agents.find('agt_join') },
    });

    expect(await store.requests.findWithAgent('agt_join', r.id)).toEqual({
      agent: await store.agents.find('agt_join'),
      found: await store.requests.findWithClient(r.id),
    });
    expect(await store.requests.findWithAgent('agt_none', r.id)).toEqual({
      agent: undefined,
      found: await store.requests.findWithClient(r.id),
    });
    expect(await store.requests.findWithAgent('agt_join', 'req_none')).toEqual({
      agent: await store.agents.find('agt_join'),
      found: undefined,
    });

    // A throttle's counter comes along where the limiters keep theirs in the database
    // (PostgreSQL), read as the limiter itself reads it; elsewhere the limiter is asked.
    const limiter = await store.createLimiter({ keyPrefix: 'ip', points: 5, duration: 60 });
    await limiter.penalty('192.0.2.9', 2);
    const withCounter = await store.requests.findWithAgent('agt_join', r.id, limiter.getKey('192.0.2.9'));
    const noCounter = await store.requests.findWithAgent('agt_join', r.id, limiter.getKey('192.0.2.10'));
    expect(withCounter.agent).toEqual(await store.agents.find('agt_join'));
    expect(withCounter.found).toEqual(await store.requests.findWithClient(r.id));
    if (store.engine === 'postgres') {
      const own = await limiter.get('192.0.2.9');
      expect(withCounter.failures?.consumedPoints).toBe(own?.consumedPoints);
      expect(withCounter.failures?.consumedPoints).toBe(2);
      expect(withCounter.failures?.msBeforeNext).toBeGreaterThan(50_000);
      expect(withCounter.failures?.msBeforeNext).toBeLessThanOrEqual(60_000);
      expect(noCounter.failures).toBeNull();
    } else {
      expect(withCounter.failures).toBeUndefined();
      expect(noCounter.failures).toBeUndefined();
    }

    // A row whose client or agent is gone still comes back, without it.
    const orphan = request({ client_id: 'cli_gone' });
    await store.requests.insert(orphan);
    expect(await store.requests.findWithClient(orphan.id)).toEqual({
      request: await store.requests.find(orphan.id),
      client: undefined,
    });
    expect(await store.requests.findWithClient('req_none')).toBeUndefined();
    expect(await store.codes.findWithCaller('cli_join', 'none')).toEqual({
      client: await store.clients.find('cli_join'),
      code: undefined,
    });
  });

  it('reads the calling client with the token it presents, in one row whatever exists', async () => {
    const { g, t } = await redeemedGrant();
    await store.clients.insert({
      id: 'cli_caller',
      name: 'Caller',
      secret_sealed: 'v1.x',
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      redirect_uris: [],
      status: 'active',
      approval: 'auto',
      account_id: null,
      created_at: NOW,
      token_endpoint_auth_method: 'client_secret_post',
      source: 'manual',
      registration_token_digest: null,
      resources: ['https://api.example/'],
      last_used_at: null,
      version: 1,
      jwks: null,
      jwks_uri: null,
    });
    const caller = await store.clients.find('cli_caller');
    expect(await store.accessTokens.findWithCaller('cli_caller', t.accessToken.jti)).toEqual({
      client: caller,
      token: await store.accessTokens.findContext(t.accessToken.jti),
    });
    expect(await store.refreshTokens.findWithCaller('cli_caller', t.refreshToken.digest)).toEqual({
      client: caller,
      token: await store.refreshTokens.findContext(t.refreshToken.digest),
    });
    expect((await store.refreshTokens.findWithCaller('cli_caller', t.refreshToken.digest)).token?.grant.id).toBe(g.id);
    expect(await store.accessTokens.findWithCaller('cli_nobody', t.accessToken.jti)).toEqual({
      client: undefined,
      token: await store.accessTokens.findContext(t.accessToken.jti),
    });
    expect(await store.accessTokens.findWithCaller('cli_caller', 'atk_none')).toEqual({
      client: caller,
      token: undefined,
    });
    expect(await store.refreshTokens.findWithCaller('cli_nobody', 'none')).toEqual({
      client: undefined,
      token: undefined,
    });
  });

  it('purge deletes only what expired before the cut-off', async () => {
    const old = request({ expires_at: NOW - 10 });
    const fresh = request({ expires_at: NOW + 10 });
    await store.requests.insert(old);
    await store.requests.insert(fresh);
    await store.signIns.record({
      at: NOW - 100,
      agent_id: 'agt_1',
      request_id: old.id,
      client_id: null,
      model: null,
      ip: null,
      user_agent: null,
      outcome: 'x',
    });
    const counts = await store.purge({ expiredBefore: NOW, unauthenticatedBefore: NOW, auditBefore: NOW - 50 });
    expect(counts.requests).toBeGreaterThanOrEqual(1);
    expect(counts.auditEvents).toBeGreaterThanOrEqual(1);
    expect(await store.requests.find(old.id)).toBeUndefined();
    expect(await store.requests.find(fresh.id)).toBeDefined();
  });

  it('purge deletes a backlog larger than its batch in several transactions, and nothing fresh', async () => {
    const expired = Array.from({ length: 25 }, () => request({ expires_at: NOW - 10 }));
    const fresh = Array.from({ length: 3 }, () => request({ expires_at: NOW + 10 }));
    await Promise.all([...expired, ...fresh].map((r) => store.requests.insert(r)));
    const counts = await store.purge({ expiredBefore: NOW, unauthenticatedBefore: NOW, auditBefore: NOW - 50 }, 10);
    expect(counts.requests).toBeGreaterThanOrEqual(25);
    for (const r of expired) expect(await store.requests.find(r.id)).toBeUndefined();
    for (const r of fresh) expect(await store.requests.find(r.id)).toBeDefined();
  });
});
