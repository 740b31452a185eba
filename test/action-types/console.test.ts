/**
 * A website's action types in the console (issue 39, docs/design.md §21), over real HTTP with
 * the CSRF token as a browser posts it: the registration form takes the types as JSON (as the
 * keys form takes a JWKS), the token delivery and the ping endpoint; the website's page reads
 * each type back (its name, how it reads, its fields), escaped; the edit form round-trips them;
 * bad types are refused beside their field, in the rule's words, with nothing saved. With
 * ACTION_APPROVALS off the form has no such fields and refuses them, naming the setting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { type ConsoleSession, codeOf, createPasswordAccount, type Page, signIn } from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { DELETION, PAYMENT, PING_ENDPOINT } from './fixtures.ts';

let server: TestServer;
let off: TestServer;
let owner: AccountRecord;
let session: ConsoleSession;

beforeAll(async () => {
  server = await startTestServer({ env: { ACTION_APPROVALS: 'on' } });
  off = await startTestServer();
  owner = await createPasswordAccount(server.ctx, { email: 'ada@example.org', name: 'Ada' });
  session = await signIn(server.baseUrl, owner.email);
});
afterAll(async () => {
  await server?.close();
  await off?.close();
});

/** The message shown beside a form field. */
const fieldError = (page: Page, name: string) =>
  new RegExp(`<p class="field-error" id="field-${name}-error">([^<]*)</p>`).exec(page.text)?.[1];

/** The text of a textarea, unescaped as a browser reads it. */
function textareaOf(page: Page, name: string): string | undefined {
  const raw = new RegExp(`<textarea[^>]* name="${name}"[^>]*>([^<]*)</textarea>`).exec(page.text)?.[1];
  return raw
    ?.replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Registers a website in the console's form. */
async function register(fields: Record<string, string>, as: ConsoleSession = session) {
  await as.get('/console/websites');
  return as.submit('/console/websites', {
    name: 'Pay shop',
    redirect_uris: 'https://pay.example/callback',
    approval: 'auto',
    ...fields,
  });
}

const ownClients = async () => server.ctx.store.clients.list({ accountId: owner.id });

describe('the website form with ACTION_APPROVALS on', () => {
  it('registers types and ping delivery, shows them in words, and the edit form round-trips them', async () => {
    const form = await session.get('/console/websites');
    expect(form.text).toContain('name="action_types"');
    expect(form.text).toContain('name="backchannel_token_delivery_mode"');
    expect(form.text).toContain('name="backchannel_client_notification_endpoint"');

    const created = await register({
      action_types: JSON.stringify([PAYMENT]),
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: PING_ENDPOINT,
    });
    expect(created.posted.status).toBe(303);
    const clientId = codeOf(created, 'client-id');
    expect(await server.ctx.store.clients.find(clientId)).toMatchObject({
      action_types: [PAYMENT],
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: PING_ENDPOINT,
    });

    const page = await session.get(`/console/websites/${clientId}`);
    const shown = /<dd id="client-action-types">([\s\S]*?)<\/dd>/.exec(page.text)?.[1] ?? '';
    expect(shown).toContain('<code>payment</code>');
    expect(shown).toContain('Pay <var>amount</var> <var>currency</var> to <var>payee</var>');
    expect(shown).toContain('amount (number, required); currency (string, required); payee (string, required)');
    expect(shown).toContain('amount: amount in currency');
    expect(/<dd id="client-token-delivery">([\s\S]*?)<\/dd>/.exec(page.text)?.[1]).toBe(
      `Ping to <code>${PING_ENDPOINT}</code>`,
    );
    // The edit form holds what is registered, as JSON to change.
    expect(JSON.parse(textareaOf(page, 'action_types')!)).toEqual([PAYMENT]);

    const edited = await session.submit(`/console/websites/${clientId}/edit`, {
      name: 'Pay shop',
      redirect_uris: 'https://pay.example/callback',
      approval: 'auto',
      action_types: JSON.stringify([PAYMENT, DELETION], null, 2),
      backchannel_token_delivery_mode: 'poll',
      backchannel_client_notification_endpoint: '',
    });
    expect(edited.posted.status).toBe(303);
    expect(await server.ctx.store.clients.find(clientId)).toMatchObject({
      action_types: [PAYMENT, DELETION],
      backchannel_token_delivery_mode: 'poll',
      backchannel_client_notification_endpoint: null,
    });
    expect(JSON.parse(textareaOf(edited, 'action_types')!)).toEqual([PAYMENT, DELETION]);
    expect(edited.text).toContain('<dd id="client-token-delivery">Poll</dd>');

    // Emptied, the website asks nothing any more.
    await session.submit(`/console/websites/${clientId}/edit`, {
      name: 'Pay shop',
      redirect_uris: 'https://pay.example/callback',
      approval: 'auto',
      action_types: '',
      backchannel_token_delivery_mode: '',
      backchannel_client_notification_endpoint: '',
    });
    expect(await server.ctx.store.clients.find(clientId)).toMatchObject({
      action_types: [],
      backchannel_token_delivery_mode: null,
    });
  });

  it.each<[string, Record<string, string>, string, string]>([
    [
      'types that are not JSON',
      { action_types: '[{"type": "payment",' },
      'action_types',
      'action_types is not valid JSON.',
    ],
    [
      'a description naming an undeclared field',
      { action_types: JSON.stringify([{ ...PAYMENT, description: 'Pay {amount} to {iban}' }]) },
      'action_types',
      'action_types[0].description names {iban}, which is not one of its fields.',
    ],
    [
      'a field name in capitals',
      {
        action_types: JSON.stringify([{ ...DELETION, fields: { Count: { type: 'integer' } }, description: 'Delete' }]),
      },
      'action_types',
      'action_types[0].fields: the name &quot;Count&quot; must start with a-z',
    ],
    [
      'ping without an endpoint',
      { action_types: JSON.stringify([PAYMENT]), backchannel_token_delivery_mode: 'ping' },
      'backchannel_client_notification_endpoint',
      'Token delivery ping needs a notification endpoint',
    ],
    [
      'an endpoint over http',
      {
        action_types: JSON.stringify([PAYMENT]),
        backchannel_token_delivery_mode: 'ping',
        backchannel_client_notification_endpoint: 'http://pay.example/ciba',
      },
      'backchannel_client_notification_endpoint',
      'The notification endpoint must use https.',
    ],
    [
      'a mode that is neither',
      { backchannel_token_delivery_mode: 'push' },
      'backchannel_token_delivery_mode',
      'Token delivery is poll or ping.',
    ],
  ])('refuses %s beside its field, keeps what was typed, saves nothing', async (_case, fields, name, words) => {
    const before = (await ownClients()).length;
    const page = await register(fields);
    expect(page.status).toBe(400);
    expect(fieldError(page, name)).toContain(words);
    if (fields.action_types) expect(textareaOf(page, 'action_types')).toBe(fields.action_types);
    expect((await ownClients()).length).toBe(before);
  });

  it('a post without the CSRF token registers nothing (403)', async () => {
    const before = (await ownClients()).length;
    await session.get('/console/websites');
    const answer = await session.post('/console/websites', {
      _csrf: null,
      name: 'Forged',
      redirect_uris: 'https://pay.example/callback',
      action_types: JSON.stringify([PAYMENT]),
    });
    expect(answer.status).toBe(403);
    expect((await ownClients()).length).toBe(before);
  });

  it('markup in a type’s description is text on the page and in the form', async () => {
    const hostile = {
      ...PAYMENT,
      description: 'Pay {amount} {currency} to {payee} <img src=x onerror=alert(1)>"&',
    };
    const created = await register({ action_types: JSON.stringify([hostile]) });
    const clientId = codeOf(created, 'client-id');
    const page = await session.get(`/console/websites/${clientId}`);
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;&amp;');
    expect(JSON.parse(textareaOf(page, 'action_types')!)).toEqual([hostile]);
  });
});

describe('the website form with ACTION_APPROVALS off', () => {
  it('has no action fields, and refuses them when posted anyway, naming the setting', async () => {
    const account = await createPasswordAccount(off.ctx);
    const person = await signIn(off.baseUrl, account.email);
    const form = await person.get('/console/websites');
    expect(form.text).not.toContain('name="action_types"');
    const refused = await person.submit('/console/websites', {
      name: 'Pay shop',
      redirect_uris: 'https://pay.example/callback',
      approval: 'auto',
      action_types: JSON.stringify([PAYMENT]),
    });
    expect(refused.status).toBe(400);
    expect(fieldError(refused, 'action_types')).toContain('ACTION_APPROVALS is off');
    expect(await off.ctx.store.clients.list({ accountId: account.id })).toEqual([]);
    // A website made without them has no action fields to edit.
    const made = await person.submit('/console/websites', {
      name: 'Plain shop',
      redirect_uris: 'https://pay.example/callback',
      approval: 'auto',
    });
    const page = await person.get(`/console/websites/${codeOf(made, 'client-id')}`);
    expect(page.text).not.toContain('name="action_types"');
    expect(page.text).not.toContain('id="client-action-types"');
  });
});
