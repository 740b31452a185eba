/**
 * The policy for actions (issue 39, docs/design.md §21): per website, how an owner answers its
 * action requests: always (up to an amount in a currency), never, or ask (the default). The rule
 * (actionAnswer) as the protocol calls it, and its doors: the API's policy body, the CLI's
 * --action and the console's actions form (shown only where ACTION_APPROVALS is on), each change
 * recorded in words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionAnswer, DEFAULT_POLICY } from '../../src/domain/agent-policy.ts';
import type { ActionType } from '../../src/domain/authorization-details.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import type { ActionRule } from '../../src/store/agents.ts';
import { accountWithKey } from '../helpers/api.ts';
import { type ConsoleSession, createPasswordAccount, noticeOf, signIn } from '../helpers/console.ts';
import { obtainTokens } from '../helpers/flow.ts';
import { createOwnedAgent } from '../helpers/owned.ts';
import { cliOn } from '../helpers/remote-cli.ts';
import { PAYMENT } from '../helpers/action-requests.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const DELETION: ActionType = {
  type: 'delete_note',
  description: 'Delete the note {title}',
  fields: { title: { type: 'string', required: true } },
};
const TYPES = [PAYMENT, DELETION];
const pay = (amount: unknown, currency: unknown = 'EUR') => ({ type: 'payment', amount, currency, payee: 'Acme' });
const withRule = (rule: ActionRule) => ({ ...DEFAULT_POLICY, actions: [rule] });
const upTo50 = withRule({ client_id: 'cli_shop', answer: 'always', up_to: { amount: 50, currency: 'EUR' } });

describe('actionAnswer: what the policy answers for the owner', () => {
  it('asks by default, and for a website without a rule', () => {
    expect(actionAnswer(DEFAULT_POLICY, 'cli_shop', [pay(1)], TYPES)).toBe('ask');
    expect(actionAnswer(upTo50, 'cli_other', [pay(1)], TYPES)).toBe('ask');
    expect(actionAnswer(withRule({ client_id: 'cli_shop', answer: 'ask' }), 'cli_shop', [pay(1)], TYPES)).toBe('ask');
  });

  it('denies under never, and allows anything under always without a limit', () => {
    const never = withRule({ client_id: 'cli_shop', answer: 'never' });
    expect(actionAnswer(never, 'cli_shop', [pay(1)], TYPES)).toBe('deny');
    const always = withRule({ client_id: 'cli_shop', answer: 'always' });
    expect(actionAnswer(always, 'cli_shop', [pay(10_000, 'USD'), { type: 'delete_note', title: 'x' }], TYPES)).toBe(
      'allow',
    );
  });

  it('allows up to the limit in its currency, and asks beyond it or in another', () => {
    expect(actionAnswer(upTo50, 'cli_shop', [pay(20)], TYPES)).toBe('allow');
    expect(actionAnswer(upTo50, 'cli_shop', [pay(50)], TYPES)).toBe('allow');
    expect(actionAnswer(upTo50, 'cli_shop', [pay(20, 'eur')], TYPES)).toBe('allow');
    expect(actionAnswer(upTo50, 'cli_shop', [pay(50.01)], TYPES)).toBe('ask');
    expect(actionAnswer(upTo50, 'cli_shop', [pay(20, 'USD')], TYPES)).toBe('ask');
    // Together: two payments of 30 are 60, beyond 50; sums as a person reads them.
    expect(actionAnswer(upTo50, 'cli_shop', [pay(30), pay(30)], TYPES)).toBe('ask');
    const cents = withRule({ client_id: 'cli_shop', answer: 'always', up_to: { amount: 0.3, currency: 'EUR' } });
    expect(actionAnswer(cents, 'cli_shop', [pay(0.1), pay(0.2)], TYPES)).toBe('allow');
  });

  it('asks about what a limit cannot measure: no amount field, an unknown type, an amount that is not a number', () => {
    expect(actionAnswer(upTo50, 'cli_shop', [{ type: 'delete_note', title: 'Diary' }], TYPES)).toBe('ask');
    expect(actionAnswer(upTo50, 'cli_shop', [pay(20), { type: 'delete_note', title: 'Diary' }], TYPES)).toBe('ask');
    expect(actionAnswer(upTo50, 'cli_shop', [{ type: 'refund', amount: 1, currency: 'EUR' }], TYPES)).toBe('ask');
    expect(actionAnswer(upTo50, 'cli_shop', [pay('20')], TYPES)).toBe('ask');
    expect(actionAnswer(upTo50, 'cli_shop', [pay(-5)], TYPES)).toBe('ask');
    expect(actionAnswer(upTo50, 'cli_shop', [{ type: 'payment', amount: 20, payee: 'Acme' }], TYPES)).toBe('ask');
    expect(actionAnswer(upTo50, 'cli_shop', [], TYPES)).toBe('ask');
  });
});

let server: TestServer;
let shop: { clientId: string; clientSecret: string; redirectUri: string };
let notes: { clientId: string };
let owner: AccountRecord;
let session: ConsoleSession;

beforeAll(async () => {
  server = await startTestServer({ env: { ACTION_APPROVALS: 'on' } });
  shop = await server.createClient({ name: 'Acme Shop' });
  await server.ctx.store.clients.update(shop.clientId, { action_types: TYPES });
  notes = await server.createClient({ name: 'Acme Notes' });
  owner = await createPasswordAccount(server.ctx, { email: 'ada@example.org', name: 'Ada' });
  session = await signIn(server.baseUrl, owner.email);
});
afterAll(() => server.close());

describe('the policy for actions through the API', () => {
  it('sets one rule per website, reads it back, and keeps ask as no rule', async () => {
    const { call } = await accountWithKey(server);
    const id = (await call('POST', '/agents', { name: 'Shopper' })).json.agent.id as string;
    expect((await call('GET', `/agents/${id}/policy`)).json.actions).toEqual([]);
    const set = await call('PUT', `/agents/${id}/policy`, {
      clients: 'any',
      actions: [
        { client_id: shop.clientId, answer: 'always', up_to: { amount: 50, currency: 'eur' } },
        { client_id: notes.clientId, answer: 'never' },
        { client_id: notes.clientId, answer: 'ask' },
      ],
    });
    expect(set.status).toBe(200);
    // The last rule of a website wins; ask is what no rule says; currencies in capitals.
    expect(set.json.actions).toEqual([
      { client_id: shop.clientId, answer: 'always', up_to: { amount: 50, currency: 'EUR' } },
    ]);
    expect((await call('GET', `/agents/${id}/policy`)).json.actions).toEqual(set.json.actions);
    expect((await server.ctx.store.agents.find(id))!.policy!.actions).toEqual(set.json.actions);
    // A PUT replaces the whole policy: actions left out are back to ask.
    expect((await call('PUT', `/agents/${id}/policy`, { clients: 'any' })).json.actions).toEqual([]);
    expect((await server.ctx.store.agents.find(id))!.policy).toBeNull();
  });

  it('refuses a rule in words: an unknown website, "up to" without always, an amount or currency that is not one', async () => {
    const { call } = await accountWithKey(server);
    const id = (await call('POST', '/agents', { name: 'Refused shopper' })).json.agent.id as string;
    const refusals: Array<[unknown, RegExp]> = [
      [{ client_id: 'cli_nobody', answer: 'never' }, /actions names cli_nobody, which is not a registered website/],
      [
        { client_id: shop.clientId, answer: 'never', up_to: { amount: 5, currency: 'EUR' } },
        /may say "up to" only with always/,
      ],
      [{ client_id: shop.clientId, answer: 'sometimes' }, /answer/],
      [{ client_id: shop.clientId, answer: 'always', up_to: { amount: 0, currency: 'EUR' } }, /amount/],
      [{ client_id: shop.clientId, answer: 'always', up_to: { amount: 5, currency: 'EURO' } }, /currency/],
    ];
    for (const [rule, words] of refusals) {
      const refused = await call('PUT', `/agents/${id}/policy`, { clients: 'any', actions: [rule] });
      expect(refused.status).toBe(400);
      expect(refused.json.error).toBe('invalid_request');
      expect(refused.json.error_description).toMatch(words);
    }
    expect((await server.ctx.store.agents.find(id))!.policy).toBeNull();
  });
});

describe('the policy for actions at the CLI', () => {
  it('sets, shows and clears a website’s rule with --action, and refuses one it cannot read', async () => {
    const cli = cliOn(server);
    const { agent } = await createOwnedAgent(server.ctx, owner, 'CLI shopper');
    const set = await cli.agentauth(cli.localEnv(), [
      'agent',
      'policy',
      agent.id,
      '--action',
      `${shop.clientId}=always:19.99eur`,
      '--action',
      `${notes.clientId}=never`,
    ]);
    expect(set.code).toBe(0);
    // The rules in the websites' order (their ids are random).
    const rules = [
      [notes.clientId, `${notes.clientId}: Never`],
      [shop.clientId, `${shop.clientId}: Always allow up to 19.99 EUR`],
    ].sort(([a], [b]) => (a! < b! ? -1 : 1));
    expect(set.stdout).toContain(`Actions:            ${rules.map(([, words]) => words).join(', ')}`);
    expect((await server.ctx.store.agents.find(agent.id))!.policy!.actions).toEqual(
      [
        { client_id: notes.clientId, answer: 'never' },
        { client_id: shop.clientId, answer: 'always', up_to: { amount: 19.99, currency: 'EUR' } },
      ].sort((a, b) => (a.client_id < b.client_id ? -1 : 1)),
    );
    const cleared = await cli.agentauth(cli.localEnv(), [
      'agent',
      'policy',
      agent.id,
      '--action',
      `${notes.clientId}=ask`,
    ]);
    expect(cleared.code).toBe(0);
    expect((await server.ctx.store.agents.find(agent.id))!.policy!.actions).toEqual([
      { client_id: shop.clientId, answer: 'always', up_to: { amount: 19.99, currency: 'EUR' } },
    ]);
    const refused = await cli.agentauth(cli.localEnv(), [
      'agent',
      'policy',
      agent.id,
      '--action',
      `${shop.clientId}=never:5EUR`,
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('CLIENT_ID=always:50EUR');
  });
});

describe('the policy for actions in the console', () => {
  it('shows a line per website the agent signed in to that asks about actions, saves it, and records it in words', async () => {
    const { agent, secret } = await createOwnedAgent(server.ctx, owner, 'Console shopper');
    const page = `/console/agents/${agent.id}`;
    // Before it signed in anywhere, no website may ask.
    expect((await session.get(page)).text).toContain('id="no-action-websites"');
    await obtainTokens(server, { ...shop, agentId: agent.id, agentSecret: secret });
    const shown = await session.get(page);
    expect(shown.text).toContain('<legend>Actions at Acme Shop</legend>');
    expect(shown.text).toMatch(/<input type="radio" name="action\.0" value="ask" checked>/);
    expect(shown.text).not.toContain('Actions at Acme Notes');

    const saved = await session.submit(`${page}/policy/actions`, {
      'action_client.0': shop.clientId,
      'action.0': 'always',
      'up_to_amount.0': '50',
      'up_to_currency.0': 'eur',
    });
    expect(saved.posted.status).toBe(303);
    expect(noticeOf(saved)).toMatch(/answers are saved/);
    expect((await server.ctx.store.agents.find(agent.id))!.policy!.actions).toEqual([
      { client_id: shop.clientId, answer: 'always', up_to: { amount: 50, currency: 'EUR' } },
    ]);
    expect(saved.text).toMatch(/<input type="radio" name="action\.0" value="always" checked>/);
    expect(saved.text).toContain('name="up_to_amount.0" value="50"');
    const events = (await server.ctx.store.activity.list({ limit: 500 })).filter(
      (event) => event.action === 'agent.policy' && event.target === agent.id,
    );
    expect(events[0]!.detail).toBe(`Actions: Ask me for every website → ${shop.clientId}: Always allow up to 50 EUR`);

    // A refused line is shown again as sent, with its words, and nothing changes.
    const refused = await session.submit(`${page}/policy/actions`, {
      'action_client.0': shop.clientId,
      'action.0': 'always',
      'up_to_amount.0': 'fifty',
      'up_to_currency.0': 'EUR',
    });
    expect(refused.posted.status).toBe(400);
    expect(refused.text).toContain('Enter an amount such as 50 or 19.99');
    expect(refused.text).toContain('value="fifty"');
    const noCurrency = await session.submit(`${page}/policy/actions`, {
      'action_client.0': shop.clientId,
      'action.0': 'always',
      'up_to_amount.0': '5',
      'up_to_currency.0': 'E1',
    });
    expect(noCurrency.posted.status).toBe(400);
    expect(noCurrency.text).toMatch(/currency as a three-letter code such as EUR/);
    expect((await server.ctx.store.agents.find(agent.id))!.policy!.actions[0]!.up_to).toEqual({
      amount: 50,
      currency: 'EUR',
    });

    // Never, and the amount typed before is kept unused.
    await session.submit(`${page}/policy/actions`, {
      'action_client.0': shop.clientId,
      'action.0': 'never',
      'up_to_amount.0': '50',
      'up_to_currency.0': 'EUR',
    });
    expect((await server.ctx.store.agents.find(agent.id))!.policy!.actions).toEqual([
      { client_id: shop.clientId, answer: 'never' },
    ]);
  });

  it('has no actions form where ACTION_APPROVALS is off, and refuses its post', async () => {
    const off = await startTestServer();
    try {
      const account = await createPasswordAccount(off.ctx, { email: 'bo@example.org', name: 'Bo' });
      const offSession = await signIn(off.baseUrl, account.email);
      const { agent } = await createOwnedAgent(off.ctx, account, 'Plain agent');
      const shown = await offSession.get(`/console/agents/${agent.id}`);
      expect(shown.status).toBe(200);
      expect(shown.text).toContain('id="policy-heading"');
      expect(shown.text).not.toContain('action-answers-heading');
      const posted = await offSession.submit(`/console/agents/${agent.id}/policy/actions`, {
        'action_client.0': 'cli_x',
        'action.0': 'never',
      });
      expect(posted.posted.status).toBe(404);
      expect((await off.ctx.store.agents.find(agent.id))!.policy).toBeNull();
    } finally {
      await off.close();
    }
  });
});
