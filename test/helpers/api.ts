/** The management API from a test: an account with a key, and calls with it. */
import { operator } from '../../src/management/actor.ts';
import { createApiKey, type NewApiKey } from '../../src/management/api-keys.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import type { AccountRole } from '../../src/store/accounts.ts';
import type { TestServer } from './server.ts';

export const API = '/api/admin/v1';

/** An account (admin or member) and a key of it: write access, its own reach unless said. */
export async function accountWithKey(
  server: TestServer,
  options: { role?: AccountRole; key?: Partial<NewApiKey>; email?: string } = {},
) {
  const account = await createAccount(server.ctx, {
    email: options.email ?? `api-${Math.random().toString(36).slice(2, 10)}@example.com`,
    role: options.role ?? 'member',
  });
  // Made as the operator makes one (agentauth api-key create), so the account's activity holds only what the test does.
  const { key, secret } = await createApiKey(server.ctx, operator(), {
    accountEmail: account.email,
    name: 'test key',
    access: 'write',
    reach: 'own',
    ...options.key,
  });
  return { account, key, secret, call: caller(server, secret) };
}

/** A fetch of the API with `secret` as its bearer key; `body` is sent as JSON. */
export function caller(server: TestServer, secret: string | null) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${server.baseUrl}${API}${path}`, {
      method,
      headers: {
        ...(secret ? { authorization: `Bearer ${secret}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    // biome-ignore lint/suspicious/noExplicitAny: a test reads answers loosely, asserting what it needs
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, json, text };
  };
}
