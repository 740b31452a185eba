import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authenticate,
  checkStatus,
  continueFlow,
  obtainTokens,
  type Party,
  setupParty,
  startFlow,
} from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
});
afterAll(() => server.close());

describe('the whole flow over HTTP', () => {
  it('goes pending → authenticated → completed and redirects with code, state and iss', async () => {
    const started = await startFlow(server, party, { state: 'state with spaces & symbols/?=' });
    expect(await checkStatus(server, started.requestId)).toEqual({ status: 200, body: { status: 'pending' } });

    const auth = await authenticate(server, party, started.requestId, 'claude-sonnet');
    expect(auth.status).toBe(200);
    expect(await auth.json()).toEqual({ status: 'authenticated', message: expect.any(String) });
    expect(await checkStatus(server, started.requestId)).toEqual({ status: 200, body: { status: 'authenticated' } });

    const redirect = await continueFlow(server, started);
    expect(redirect.status).toBe(302);
    const location = new URL(redirect.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(party.redirectUri);
    expect(location.searchParams.get('code')).toMatch(/^cod_[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.get('state')).toBe('state with spaces & symbols/?=');
    expect(location.searchParams.get('iss')).toBe(server.baseUrl);
    expect(await checkStatus(server, started.requestId)).toEqual({ status: 200, body: { status: 'completed' } });
  });

  it('issues tokens whose access token works at userinfo', async () => {
    const tokens = await obtainTokens(server, party);
    const response = await fetch(`${server.baseUrl}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      sub: party.agentId,
      email: 'ada@example.com',
      email_verified: false,
      name: 'Ada Lovelace',
    });
  });
});
