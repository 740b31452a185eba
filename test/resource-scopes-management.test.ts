/**
 * Registering a resource server's scopes through every door (issue 36, item 2; docs/design.md
 * §13), and the owner's policy over them (§16), over real HTTP: the management API, the CLI on the
 * server's database and the console's edit form register them, bad input is refused in each
 * door's documented shape and changes nothing; what is registered is what /authorize grants. A
 * scope ceiling names resource scopes, refuses those it does not name, revokes the grants beyond
 * it (and only those); "ask me" holds a resource scope's sign-in for the owner like any other.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, setAgentPolicy } from '../src/domain/agent-policy.ts';
import { decideApproval } from '../src/domain/approvals.ts';
import { registerClient } from '../src/domain/clients.ts';
import { accountWithKey } from './helpers/api.ts';
import { createPasswordAccount, noticeOf, signIn } from './helpers/console.ts';
import {
  authenticate,
  continueFlow,
  obtainTokens,
  type Party,
  postForm,
  redeem,
  setupParty,
  startFlow,
  type Tokens,
} from './helpers/flow.ts';
import { startTestServer, TEST_JWT_SECRET, type TestServer } from './helpers/server.ts';

const run = promisify(execFile);
const HOSTILE = '<img src=x onerror=alert(1)> "quoted" & more';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

type Call = Awaited<ReturnType<typeof accountWithKey>>['call'];

/** The agentauth command on the test server's database, as the operator runs it. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    DATABASE_URL: server.databaseUrl,
    JWT_SECRET: TEST_JWT_SECRET,
    BASE_URL: undefined,
    NODE_ENV: undefined,
  } as NodeJS.ProcessEnv;
  try {
    const { stdout, stderr } = await run('./bin/agentauth', args, { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

/** Whether a website of `party` may ask for `scope` at `resource`: the page's status. */
async function authorizeStatus(party: Party, scope: string, resource: string): Promise<number> {
  try {
    return (await startFlow(server, party, { scope, resource })).response.status;
  } catch (error) {
    return Number(/authorize answered (\d+)/.exec(String(error))?.[1]);
  }
}

describe('registering scopes', () => {
  let admin: Call;
  let party: Party;
  beforeAll(async () => {
    admin = (await accountWithKey(server, { role: 'admin', key: { reach: 'all' } })).call;
    party = await setupParty(server, { name: 'Notes app' });
  });

  it('the management API registers, shows and changes them; the authorization server grants them', async () => {
    const resource = 'https://api-notes.example/mcp';
    const created = await admin('POST', '/clients', {
      name: 'Notes API',
      resources: [resource],
      scopes: [
        { name: 'notes:read', description: '  Read your notes ' },
        { name: 'notes:write', description: HOSTILE },
      ],
    });
    expect(created.status, created.text).toBe(201);
    const id = created.json.client.id as string;
    expect(created.json.client.scopes).toEqual([
      { name: 'notes:read', description: 'Read your notes' },
      { name: 'notes:write', description: HOSTILE },
    ]);
    expect((await admin('GET', `/clients/${id}`)).json.scopes).toHaveLength(2);
    expect(await authorizeStatus(party, 'notes:write', resource)).toBe(200);

    const changed = await admin('PATCH', `/clients/${id}`, {
      scopes: [{ name: 'notes:read', description: 'Read your notes' }],
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json.scopes).toEqual([{ name: 'notes:read', description: 'Read your notes' }]);
    // A scope taken away is no longer granted.
    expect(await authorizeStatus(party, 'notes:write', resource)).toBe(400);
    expect(await authorizeStatus(party, 'notes:read', resource)).toBe(200);
  });

  it('the management API refuses bad scopes in the documented shape, and a member’s key outright; nothing is stored', async () => {
    const before = (await server.ctx.store.clients.list()).length;
    const cases: Array<[unknown, RegExp]> = [
      [[{ name: 'openid', description: 'Sign in' }], /openid is a scope of this server/],
      [[{ name: 'offline_access', description: 'Stay' }], /offline_access is a scope of this server/],
      [[{ name: 'notes read', description: 'Read' }], /must be visible ASCII characters without spaces/],
      [[{ name: 'notes"read', description: 'Read' }], /must be visible ASCII characters without spaces/],
      [[{ name: 'x'.repeat(65), description: 'Read' }], /64|must NOT have more than 64 characters/],
      [[{ name: 'notes:read', description: 'x'.repeat(201) }], /200|must NOT have more than 200 characters/],
      [[{ name: 'notes:read', description: '   ' }], /needs a description/],
      [[{ name: 'notes:read', description: 'Read\u202eevil' }], /control or text-direction characters/],
      [
        [
          { name: 'notes:read', description: 'Read' },
          { name: 'notes:read', description: 'Again' },
        ],
        /more than once/,
      ],
      [Array.from({ length: 21 }, (_, i) => ({ name: `s${i}`, description: 'd' })), /20/],
    ];
    for (const [scopes, message] of cases) {
      const refused = await admin('POST', '/clients', { name: 'Bad', resources: ['https://bad.example/mcp'], scopes });
      expect(refused.status, JSON.stringify(scopes).slice(0, 80)).toBe(400);
      expect(Object.keys(refused.json).sort()).toEqual(['error', 'error_description']);
      expect(refused.json.error).toBe('invalid_request');
      expect(refused.json.error_description).toMatch(message);
    }
    // Scopes belong to a resource server.
    const website = await admin('POST', '/clients', {
      name: 'Site',
      redirect_uris: ['https://site.example/cb'],
      scopes: [{ name: 'site:use', description: 'Use the site' }],
    });
    expect(website.status).toBe(400);
    expect(website.json.error_description).toBe('scopes belong to a resource server: register its resource too');
    // A member's key registers no scopes, as it registers no resource server.
    const member = (await accountWithKey(server)).call;
    const denied = await member('POST', '/clients', {
      name: 'Spy',
      redirect_uris: ['https://spy.example/cb'],
      scopes: [{ name: 'spy:all', description: 'Everything' }],
    });
    expect(denied.status).toBe(403);
    expect(denied.json.error).toBe('insufficient_scope');
    expect((await server.ctx.store.clients.list()).length).toBe(before);
  });

  it('the CLI registers them with --scope "NAME DESCRIPTION", and refuses a scope without words', async () => {
    const resource = 'https://cli-notes.example/mcp';
    const made = await cli(
      'client',
      'create',
      '--name',
      'CLI notes',
      '--resource',
      resource,
      '--scope',
      'notes:read Read your notes',
      '--scope',
      'notes:write Add and change your notes',
      '--json',
    );
    expect(made.code, made.stderr).toBe(0);
    const printed = JSON.parse(made.stdout) as { client_id: string; scopes: unknown };
    expect(printed.scopes).toEqual([
      { name: 'notes:read', description: 'Read your notes' },
      { name: 'notes:write', description: 'Add and change your notes' },
    ]);
    const started = await startFlow(server, party, { scope: 'notes:write', resource });
    expect(started.page).toContain('Add and change your notes');

    const refused = await cli(
      'client',
      'create',
      '--name',
      'X',
      '--resource',
      'https://x.example/mcp',
      '--scope',
      'notes:read',
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/scopes notes:read needs a description/);
    const changed = await cli('client', 'update', printed.client_id, '--scope', 'notes:read Only read', '--json');
    expect(changed.code, changed.stderr).toBe(0);
    expect((await server.ctx.store.clients.find(printed.client_id))?.scopes).toEqual([
      { name: 'notes:read', description: 'Only read' },
    ]);
  });

  it('the console’s edit form of a resource server registers them; bad ones come back beside the field, escaped', async () => {
    const resource = 'https://console-notes.example/mcp';
    const adminAccount = await createPasswordAccount(server.ctx, { role: 'admin' });
    const { client } = await registerClient(server.ctx, {
      name: 'Console notes',
      redirectUris: [],
      resources: [resource],
      accountId: adminAccount.id,
    });
    const session = await signIn(server.baseUrl, adminAccount.email);
    const base = `/console/websites/${client.id}`;
    const page = await session.get(base);
    expect(page.text).toContain('id="field-scopes"');

    const saved = await session.submit(`${base}/edit`, {
      name: 'Console notes',
      redirect_uris: '',
      approval: 'auto',
      scopes: `notes:read Read your notes\r\nnotes:write ${HOSTILE}\n`,
    });
    expect(saved.posted.status, saved.posted.text.slice(0, 300)).toBe(303);
    expect(noticeOf(saved)).toBe('The website is saved.');
    expect((await server.ctx.store.clients.find(client.id))?.scopes).toEqual([
      { name: 'notes:read', description: 'Read your notes' },
      { name: 'notes:write', description: HOSTILE },
    ]);
    // The description is shown escaped in the form, never as markup.
    expect(saved.text).toContain('notes:write &lt;img src=x onerror=alert(1)&gt; &quot;quoted&quot; &amp; more');
    expect(saved.text).not.toContain('<img src=x');
    // The details say which resource it serves and what each scope allows, escaped too.
    const details =
      /<dd id="client-resources">([\s\S]*?)<\/dd>\s*<dt>Scopes<\/dt><dd id="client-scopes">([\s\S]*?)<\/dd>/.exec(
        saved.text,
      );
    expect(details?.[1]).toContain(`<code>${resource}</code>`);
    expect(details?.[2]).toContain('<code>notes:read</code> Read your notes');
    expect(details?.[2]).toContain('<code>notes:write</code> &lt;img src=x onerror=alert(1)&gt;');

    const refused = await session.post(`${base}/edit`, {
      name: 'Console notes',
      redirect_uris: '',
      approval: 'auto',
      scopes: 'email Your email\n<b>x</b>',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('id="field-scopes-error"');
    expect(refused.text).toContain('scopes email is a scope of this server, not of a resource server');
    expect(refused.text).toContain('&lt;b&gt;x&lt;/b&gt;</textarea>');
    expect((await server.ctx.store.clients.find(client.id))?.scopes).toHaveLength(2);
  });
});

describe('the owner’s policy over resource scopes', () => {
  const RESOURCE = 'https://policy-notes.example/mcp';
  let rs: { clientId: string; clientSecret: string };
  beforeAll(async () => {
    const made = await registerClient(server.ctx, {
      name: 'Policy notes',
      redirectUris: [],
      resources: [RESOURCE],
      scopes: [
        { name: 'notes:read', description: 'Read your notes' },
        { name: 'notes:write', description: 'Add notes' },
        // % and _ are scope-token characters, and LIKE's wildcards.
        { name: 'notes_all', description: 'Everything' },
        { name: 'notesXall', description: 'Everything else' },
      ],
    });
    rs = { clientId: made.client.id, clientSecret: made.secret };
  });

  /** An owner's agent (through the API, so the policy's API applies) and a website it signs in to. */
  async function ownedAgent(): Promise<{ call: Call; party: Party }> {
    const { call } = await accountWithKey(server);
    const created = await call('POST', '/agents', { name: 'Assistant' });
    const website = await server.createClient({ name: 'Notes app' });
    return { call, party: { ...website, agentId: created.json.agent.id, agentSecret: created.json.agent_secret } };
  }

  const introspect = async (token: string) =>
    (
      (await (
        await postForm(server, '/introspect', { token, client_id: rs.clientId, client_secret: rs.clientSecret })
      ).json()) as { active: boolean }
    ).active;

  it('a ceiling of the contract’s scopes refuses resource scopes; one naming a resource scope allows it and no other', async () => {
    const { call, party } = await ownedAgent();
    const set = await call('PUT', `/agents/${party.agentId}/policy`, {
      clients: 'any',
      scope_ceiling: ['openid', 'email', 'profile'],
    });
    expect(set.status, set.text).toBe(200);
    const started = await startFlow(server, party, { scope: 'openid notes:read', resource: RESOURCE });
    const refused = await authenticate(server, party, started.requestId);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      error: 'access_denied',
      error_description: expect.stringMatching(
        /^Your owner does not allow this agent to share notes:read, which Notes app/,
      ),
    });

    const widened = await call('PUT', `/agents/${party.agentId}/policy`, {
      clients: 'any',
      scope_ceiling: ['openid', 'notes:read'],
    });
    expect(widened.status, widened.text).toBe(200);
    expect(widened.json.scope_ceiling).toEqual(['openid', 'notes:read']);
    const tokens = await obtainTokens(server, party, { scope: 'openid notes:read', resource: RESOURCE });
    expect(tokens.scope).toBe('openid notes:read');
    const write = await startFlow(server, party, { scope: 'notes:write', resource: RESOURCE });
    expect((await authenticate(server, party, write.requestId)).status).toBe(403);

    // A ceiling names only scopes that exist: the contract's or a resource server's.
    const unknown = await call('PUT', `/agents/${party.agentId}/policy`, {
      clients: 'any',
      scope_ceiling: ['notes:delete'],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error_description).toMatch(
      /names notes:delete, which is not a scope \(openid, email, profile, notes:read, notes:write, notes_all, notesXall\)/,
    );
  });

  it('a new ceiling revokes the grants naming a resource scope above it, and only those (LIKE’s wildcards escaped)', async () => {
    const { call, party } = await ownedAgent();
    const held: Record<string, Tokens> = {};
    for (const scope of ['notes:read', 'notes:write', 'notesXall']) {
      held[scope] = await obtainTokens(server, party, { scope, resource: RESOURCE });
      expect(await introspect(held[scope].access_token)).toBe(true);
    }
    const set = await call('PUT', `/agents/${party.agentId}/policy`, {
      clients: 'any',
      scope_ceiling: ['openid', 'notes:read', 'notesXall'],
    });
    expect(set.status, set.text).toBe(200);
    expect(await introspect(held['notes:read']!.access_token)).toBe(true);
    expect(await introspect(held['notes:write']!.access_token)).toBe(false);
    // notes_all is above the ceiling; as a LIKE pattern unescaped it would match notesXall.
    expect(await introspect(held.notesXall!.access_token)).toBe(true);
  });

  it('offline_access shares nothing: a ceiling lets it through', async () => {
    const mcp = await startTestServer({ env: { MCP_AUTHORIZATION: 'true' } });
    try {
      const party = await setupParty(mcp);
      await setAgentPolicy(mcp.ctx, party.agentId, { ...DEFAULT_POLICY, scope_ceiling: ['openid'] });
      const tokens = await obtainTokens(mcp, party, { scope: 'openid offline_access' });
      expect(tokens.scope).toBe('openid offline_access');
    } finally {
      await mcp.close();
    }
  });

  it('"ask me" holds a resource scope’s sign-in for the owner; approved once, the token carries the scope', async () => {
    const { party } = await ownedAgent();
    await setAgentPolicy(server.ctx, party.agentId, { ...DEFAULT_POLICY, websites: 'ask' });
    const started = await startFlow(server, party, { scope: 'notes:write', resource: RESOURCE });
    const asked = await authenticate(server, party, started.requestId);
    expect(asked.status).toBe(202);
    const { approval_id } = (await asked.json()) as { approval_id: string };
    expect(await server.ctx.store.approvals.find(approval_id)).toMatchObject({
      scope: 'notes:write',
      resource: RESOURCE,
    });
    await decideApproval(server.ctx, approval_id, 'once', 'acc_owner');
    const redirect = await continueFlow(server, started);
    expect(redirect.status).toBe(302);
    const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!;
    const tokens = (await (await redeem(server, party, code, started.verifier)).json()) as Tokens;
    expect(tokens.scope).toBe('notes:write');
    expect(await introspect(tokens.access_token)).toBe(true);
  });
});
