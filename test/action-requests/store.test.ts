/**
 * The action requests' storage (docs/design.md §21) on both engines: the flood limits guard the
 * insert in its own statement, an owner's decision spends its approval once, tokens issue once,
 * a poll too soon grows the stored interval, and a ping is claimed by one caller only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../../src/crypto.ts';
import type { ActionRequestRecord } from '../../src/store/action-requests.ts';
import type { ApprovalRecord } from '../../src/store/approvals.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

let count = 0;
function actionRequest(overrides: Partial<ActionRequestRecord> = {}): ActionRequestRecord {
  const now = server.clock();
  count += 1;
  return {
    id: `act_store${count}`,
    auth_req_id_digest: digest(`auth-req-${count}`),
    client_id: 'cli_store',
    agent_id: 'agt_store',
    grant_id: 'grt_store',
    scope: 'openid',
    authorization_details: [{ type: 'payment', amount: 20, currency: 'EUR', payee: 'Acme' }],
    binding_message: 'W4-9',
    delivery_mode: 'ping',
    notification_token_sealed: null,
    notification_endpoint: 'https://example.com/ping',
    status: 'pending',
    answered_by: null,
    decided_at: null,
    decided_by: null,
    poll_interval: 5,
    next_poll_at: now,
    created_at: now,
    expires_at: now + 300,
    approval_id: null,
    ip: '127.0.0.1',
    notify_at: null,
    notify_attempts: 0,
    notify_lease_until: null,
    notified_at: null,
    ...overrides,
  };
}

const audit = (request: ActionRequestRecord) => ({
  at: request.created_at,
  agent_id: request.agent_id,
  request_id: request.id,
  client_id: request.client_id,
  model: null,
  ip: null,
  user_agent: null,
  outcome: 'action_pending',
});

describe('action requests in the store', () => {
  it('refuses a sixth pending request of one agent at one website, in the insert itself', async () => {
    const store = server.ctx.store.actionRequests;
    const limits = { perWebsite: 5, perAgent: 20 };
    const agent = { agent_id: 'agt_flood' };
    for (let i = 0; i < 5; i++) {
      const request = actionRequest(agent);
      expect(await store.open(request, limits, { audit: audit(request) })).toBe(true);
    }
    const sixth = actionRequest(agent);
    expect(await store.open(sixth, limits, { audit: audit(sixth) })).toBe(false);
    expect(await store.find(sixth.id)).toBeUndefined();
    // Another website still may, up to the agent's own limit.
    const elsewhere = actionRequest({ ...agent, client_id: 'cli_other' });
    expect(await store.open(elsewhere, limits, { audit: audit(elsewhere) })).toBe(true);
    expect(
      await store.open(
        actionRequest({ ...agent, client_id: 'cli_third' }),
        { perWebsite: 5, perAgent: 6 },
        { audit: audit(elsewhere) },
      ),
    ).toBe(false);
  });

  it('decides once with its approval, issues once, and claims the ping once', async () => {
    const store = server.ctx.store.actionRequests;
    const now = server.clock();
    const request = actionRequest({ approval_id: 'apr_store1' });
    const approval: ApprovalRecord = {
      id: 'apr_store1',
      kind: 'action',
      request_id: request.id,
      agent_id: request.agent_id,
      client_id: request.client_id,
      model: '',
      scope: request.scope,
      ip: null,
      user_agent: null,
      status: 'pending',
      decision: null,
      created_at: now,
      expires_at: request.expires_at,
      decided_at: null,
      decided_by: null,
    };
    expect(await store.open(request, { perWebsite: 5, perAgent: 20 }, { approval, audit: audit(request) })).toBe(true);
    expect(await store.findByDigest(request.auth_req_id_digest)).toMatchObject({
      id: request.id,
      authorization_details: request.authorization_details,
    });

    // A poll in time, then one too soon: the interval grows by 5 and is stored.
    expect(await store.poll(request.id, now, 5)).toBe(true);
    expect(await store.poll(request.id, now + 1, 5)).toBe(false);
    expect((await store.find(request.id))?.poll_interval).toBe(10);

    const decision = { status: 'approved' as const, by: 'acc_x', now };
    expect(await store.decide(request, approval, decision, audit(request))).toBe(true);
    expect(await store.decide(request, approval, { ...decision, status: 'denied' }, audit(request))).toBe(false);
    const decided = await store.find(request.id);
    expect(decided).toMatchObject({
      status: 'approved',
      answered_by: 'owner',
      decided_by: 'acc_x',
      notify_at: now * 1000,
    });

    const claimed = await store.claimNotifications(now * 1000, now * 1000 + 30_000, 10);
    expect(claimed.map((each) => each.id)).toContain(request.id);
    expect((await store.claimNotifications(now * 1000, now * 1000 + 30_000, 10)).map((each) => each.id)).not.toContain(
      request.id,
    );
    await store.notified(request.id, { delivered: true, nowMs: now * 1000, retryAtMs: null });
    expect((await store.find(request.id))?.notify_at).toBeNull();

    const token = {
      jti: 'atk_store1',
      grant_id: 'grt_store',
      client_id: request.client_id,
      scope: 'openid',
      expires_at: now + 300,
      revoked_at: null,
    };
    expect(await store.issue(request.id, now, token, audit(request))).toBe(true);
    expect(await store.issue(request.id, now, { ...token, jti: 'atk_store2' }, audit(request))).toBe(false);
    expect((await store.find(request.id))?.status).toBe('issued');
  });

  it('expires pending requests once, with their pings due', async () => {
    const store = server.ctx.store.actionRequests;
    const request = actionRequest({ agent_id: 'agt_expiring' });
    expect(await store.open(request, { perWebsite: 5, perAgent: 20 }, { audit: audit(request) })).toBe(true);
    const later = request.expires_at + 1;
    expect(await store.expire(later)).toBeGreaterThanOrEqual(1);
    expect(await store.find(request.id)).toMatchObject({ status: 'expired', notify_at: later * 1000 });
    expect(await store.expire(later)).toBe(0);
  });
});
