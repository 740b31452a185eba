/**
 * The admin's read-only list of signing keys (docs/design.md §19) over real HTTP: with a key pair,
 * every key of the shared set with its state and times, never key material; with HS256, what signs
 * instead. Members are refused on the admin area's own test (admin.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/management/actor.ts';
import { rotateSigningKey } from '../../src/management/signing-keys.ts';
import { createPasswordAccount, signIn } from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

async function adminPage(server: TestServer) {
  const account = await createPasswordAccount(server.ctx, { role: 'admin' });
  const session = await signIn(server.baseUrl, account.email);
  return session.get('/console/admin/signing-keys');
}

describe('Admin: signing keys, TOKEN_SIGNING_ALG=ES256', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { TOKEN_SIGNING_ALG: 'ES256' } });
  });
  afterAll(() => server?.close());

  it('lists every key with its kid, algorithm, state and times, and no key material', async () => {
    server.clock.advance(3600 + 30);
    await rotateSigningKey(server.ctx, operator());
    const page = await adminPage(server);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<code>ES256</code> key pairs');
    const keys = await server.ctx.store.signingKeys.list();
    expect(keys.map((key) => key.state).sort()).toEqual(['current', 'next', 'retired']);
    for (const key of keys) {
      const row = new RegExp(
        `<tr>\\s*<td data-label="Key id \\(kid\\)" class="title"><code>${key.kid}</code></td>([\\s\\S]*?)</tr>`,
      ).exec(page.text)?.[1];
      expect(row, key.kid).toBeDefined();
      expect(row).toContain('<td data-label="Algorithm" class="narrow">ES256</td>');
      expect(row).toContain(`>${key.state}</span>`);
      expect(page.text).not.toContain(key.private_key_sealed.split('.')[3]!.slice(0, 24));
    }
    expect(page.text).toContain('aria-current="page">Signing keys</a>');
  });
});

describe('Admin: signing keys, TOKEN_SIGNING_ALG=HS256', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('says HS256 and JWT_SECRET sign and that there is no key', async () => {
    const page = await adminPage(server);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<code>TOKEN_SIGNING_ALG=HS256</code>, the default');
    expect(page.text).toContain('There are no signing keys.');
  });
});
