/**
 * Off by default (docs/design.md §21): without ACTION_APPROVALS, /bc-authorize is an unknown
 * path, the CIBA grant is unsupported_grant_type, and the metadata is exactly the contract's.
 *
 * @engine-independent what is mounted and published follows from the setting alone; no answer here
 * reads a stored row the engine could change (the feature's storage runs on both engines in the
 * other suites of this folder).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizationServerMetadata, openIdConfiguration } from '../../src/protocol/routes/discovery.ts';
import { bcAuthorize, cibaPoll, PAY_ACME } from '../helpers/action-requests.ts';
import { type Party, setupParty } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let party: Party;
beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server, { name: 'Plain Website' });
});
afterAll(() => server?.close());

describe('ACTION_APPROVALS off (the default)', () => {
  it('POST /bc-authorize answers as any unknown path: 404', async () => {
    const asked = await bcAuthorize(server.baseUrl, party, {
      scope: 'openid',
      login_hint: party.agentId,
      authorization_details: JSON.stringify(PAY_ACME),
    });
    const unknown = await fetch(`${server.baseUrl}/no-such-path`, { method: 'POST' });
    expect(asked.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(((await asked.json()) as { error: string }).error).toBe(((await unknown.json()) as { error: string }).error);
  });

  it('the CIBA grant is unsupported_grant_type, naming only the contract grants', async () => {
    const response = await cibaPoll(server.baseUrl, party, 'x'.repeat(43));
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; error_description: string };
    expect(body.error).toBe('unsupported_grant_type');
    expect(body.error_description).toBe('grant_type must be authorization_code or refresh_token.');
  });

  it('the metadata is unchanged: no CIBA field, no authorization details, the two grants', async () => {
    const openid = await (await fetch(`${server.baseUrl}/.well-known/openid-configuration`)).json();
    const oauth = await (await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`)).json();
    expect(openid).toEqual(openIdConfiguration(server.baseUrl));
    expect(oauth).toEqual(authorizationServerMetadata(server.baseUrl));
    for (const document of [openid, oauth]) {
      expect(Object.keys(document).filter((key) => /backchannel|authorization_details/.test(key))).toEqual([]);
      expect(document.grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
    }
  });
});
