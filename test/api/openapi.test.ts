/**
 * The OpenAPI document is the API: it is a valid OpenAPI 3.1 document, every route of the API
 * is in it, and every operation in it, called as documented with an admin's `all` write key,
 * answers a status the document lists with a body its schema describes.
 */
import { generateKeyPairSync } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/domain/accounts.ts';
import { consoleActor } from '../../src/management/actor.ts';
import { createApiKey } from '../../src/management/api-keys.ts';
import { createWebhook } from '../../src/domain/webhooks/endpoints.ts';
import { API, accountWithKey } from '../helpers/api.ts';
import { obtainTokens } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { routesOf } from '../security/support.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof accountWithKey>>;
// biome-ignore lint/suspicious/noExplicitAny: the document is read as the JSON it is
let doc: any;

beforeAll(async () => {
  // A key pair signs, and its next key is old enough to sign, so that rotateSigningKey rotates.
  server = await startTestServer({ env: { TOKEN_SIGNING_ALG: 'ES256' } });
  server.clock.advance(3600 + 30);
  // Deliveries stay as written: a dispatcher sending one would make its retry a 409 for a moment.
  await server.ctx.webhooks.stop();
  admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
  doc = (await fetch(`${server.baseUrl}${API}/openapi.json`)).json();
  doc = await doc;
});
afterAll(() => server.close());

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const unique = () => Math.random().toString(36).slice(2, 10);

/** Each operation's path and method, as `GET /agents/{id}`. */
function operations(): Array<{ method: string; path: string; operationId: string; operation: Operation }> {
  return Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({
      method: method.toUpperCase(),
      path,
      operationId: item[method]!.operationId,
      operation: item[method]!,
    })),
  );
}

interface Operation {
  operationId: string;
  requestBody?: { required?: boolean };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

/**
 * A new record of the kind the path's first segment names, made for one operation (which may
 * delete or revoke it). A resource added to the API needs its maker here, or the walk fails.
 */
const RECORD_MAKERS: Record<string, () => Promise<string>> = {
  agents: async () => (await server.createAgent({ accountId: admin.account.id })).agentId,
  clients: async () => (await server.createClient({ accountId: admin.account.id })).clientId,
  accounts: async () => (await createAccount(server.ctx, { email: `walk-${unique()}@example.com`, role: 'member' })).id,
  'api-keys': async () =>
    (
      await createApiKey(server.ctx, consoleActor(admin.account, null, { authenticatedAt: server.clock() }), {
        name: 'walked',
        access: 'read',
        reach: 'own',
      })
    ).key.id,
  // A webhook with one delivery in its log (the walk's server sends nothing: see beforeAll).
  webhooks: async () => {
    const { webhook } = await createWebhook(server.ctx, admin.account, {
      url: `https://walk-${unique()}.example/hook`,
      events: ['agent.created'],
    });
    await server.ctx.store.webhooks.announce([{ type: 'agent.created', data: { walked: true } }]);
    return webhook.webhook.id;
  },
  grants: async () => {
    const party = { ...(await server.createClient()), ...(await server.createAgent({ accountId: admin.account.id })) };
    await obtainTokens(server, party);
    return (await server.ctx.store.grants.list({ limit: 1, agentId: party.agentId }))[0]!.id;
  },
};

/** A valid body for each operation that takes one; an operation added with a body needs its sample here. */
const BODIES: Record<string, () => unknown> = {
  createAgent: () => ({ name: 'Walked' }),
  updateAgent: () => ({ name: 'Walked again' }),
  rotateAgentSecret: () => ({ grace_seconds: 60 }),
  // A plain rotation on the schedule's terms: no `now`, so the walk's key set is not withdrawn.
  setAgentPolicy: () => ({
    clients: 'ask',
    scope_ceiling: ['openid', 'profile'],
    credentials_expire_at: '2030-01-01T00:00:00Z',
    max_sign_ins_per_hour: 5,
  }),
  rotateAgentKey: () => ({ public_key: generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) }),
  createClient: () => ({ name: 'Walked', redirect_uris: ['https://walk.example/cb'] }),
  updateClient: () => ({ name: 'Walked again', confirmation: 'manual' }),
  rotateClientSecret: () => ({ grace_seconds: 0 }),
  updateAccount: () => ({ name: 'Walker', role: 'admin' }),
  createWebhook: () => ({ url: `https://walk-${unique()}.example/hook`, events: ['*'] }),
  updateWebhook: () => ({ description: 'Walked', events: ['agent.created', 'agent.deleted'] }),
};

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every route of the API, and nothing else', () => {
    const routes = routesOf(server.app)
      .filter((route) => route.path.startsWith(`${API}/`) && route.path !== `${API}/openapi.json`)
      .flatMap((route) =>
        route.methods
          .filter((method) => method !== 'HEAD' && method !== 'OPTIONS')
          .map((method) => `${method} ${route.path.slice(API.length).replace(/:(\w+)/g, '{$1}')}`),
      );
    const documented = operations().map(({ method, path }) => `${method} ${path}`);
    expect(routes.length).toBeGreaterThan(20);
    expect(routes.filter((route) => !documented.includes(route))).toEqual([]);
    expect(documented.filter((operation) => !routes.includes(operation))).toEqual([]);
  });

  it('names every operation once, and describes each', () => {
    const ids = operations().map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { operationId, operation } of operations()) {
      expect(operationId, JSON.stringify(operation).slice(0, 80)).toMatch(/^[a-z][A-Za-z]+$/);
      expect((operation as unknown as { summary?: string }).summary, operationId).toBeTruthy();
      for (const [status, response] of Object.entries(operation.responses))
        expect((response as { description: string }).description, `${operationId} ${status}`).not.toBe(
          'Default Response',
        );
    }
  });

  it('answers every operation, called as documented, with a documented status and a body its schema describes', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    formats.default(ajv);
    ajv.addSchema(doc, 'openapi.json');
    const pointer = (...parts: string[]) =>
      `openapi.json#/${parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

    const walked: string[] = [];
    for (const { method, path, operationId, operation } of operations()) {
      const segment = path.split('/')[1]!;
      let url = path;
      if (path.includes('{id}')) {
        const make = RECORD_MAKERS[segment];
        expect(make, `no record maker for ${path}: add one to RECORD_MAKERS`).toBeDefined();
        const id = await make!();
        url = url.replace('{id}', encodeURIComponent(id));
        // A delivery of the webhook just made (its maker writes one).
        if (path.includes('{message_id}')) {
          const [delivery] = await server.ctx.store.webhooks.listDeliveries(id, 1);
          url = url.replace('{message_id}', encodeURIComponent(delivery!.message_id));
        }
      }
      expect(url, `${operationId}: a path parameter without a value`).not.toMatch(/\{/);
      const sample = BODIES[operationId];
      if (operation.requestBody?.required) expect(sample, `no sample body for ${operationId}`).toBeDefined();
      const answer = await admin.call(method, url, sample?.(), { 'idempotency-key': `walk-${unique()}` });

      const label = `${method} ${path} (${operationId}) → ${answer.status} ${answer.text.slice(0, 200)}`;
      expect(Object.keys(operation.responses), label).toContain(String(answer.status));
      expect(answer.status, label).toBeGreaterThanOrEqual(200);
      expect(answer.status, label).toBeLessThan(300);
      const documented = operation.responses[String(answer.status)]!.content?.['application/json'];
      if (documented) {
        const validate = ajv.getSchema(
          pointer(
            'paths',
            path,
            method.toLowerCase(),
            'responses',
            String(answer.status),
            'content',
            'application/json',
            'schema',
          ),
        )!;
        expect(validate(answer.json), `${label}\n${JSON.stringify(validate.errors)}`).toBe(true);
      }
      walked.push(operationId);
    }
    expect(walked).toEqual(operations().map((op) => op.operationId));
  });

  it('answers an error in the documented shape', async () => {
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(doc.components.schemas.Error);
    for (const [method, path] of [
      ['GET', '/agents/agt_missing'],
      ['GET', '/clients?limit=0'],
    ]) {
      const answer = await admin.call(method!, path!);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(validate(answer.json)).toBe(true);
    }
  });
});
