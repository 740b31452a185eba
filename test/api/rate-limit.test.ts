/**
 * The management API's rate limit per key (docs/design.md §15): a script sees its budget in the
 * RateLimit fields, is refused with 429, Retry-After and the error shape past it, changes
 * nothing with a refused call, and leaves every other key's budget alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey } from '../helpers/api.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { API_RATE_LIMIT: '5', API_RATE_LIMIT_WINDOW: '3600' } });
});
afterAll(() => server.close());

describe('the management API rate limit', () => {
  it('counts calls per key, then answers 429 with Retry-After and changes nothing', async () => {
    const busy = await accountWithKey(server);
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await busy.call('GET', '/agents');
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit-limit')).toBe('5');
      remaining.push(answer.headers.get('ratelimit-remaining')!);
      expect(Number(answer.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    const refused = await busy.call('POST', '/agents', { name: 'One too many' });
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({
      error: 'too_many_requests',
      error_description: expect.stringContaining('Retry-After'),
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(await server.ctx.store.agents.list({ accountId: busy.account.id })).toEqual([]);

    // Another key has a budget of its own.
    const other = await accountWithKey(server);
    expect((await other.call('GET', '/agents')).status).toBe(200);
  });
});
