/**
 * Key-bound agents at POST /api/agent/authenticate (docs/design.md §16): an agent registered
 * with a public key proves itself with a signed assertion. The assertions here are signed with
 * jose, not with the SDK, so the server is checked against an independent implementation.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASSERTION_CLOCK_SKEW } from '../src/domain/agent-keys.ts';
import { agentKeyOf, registerKeyBoundAgent, rotateAgentKey, setAgentStatus } from '../src/domain/agents.ts';
import { DEFAULT_POLICY, setAgentPolicy } from '../src/domain/agent-policy.ts';
import { decideApproval } from '../src/domain/approvals.ts';
import { checkStatus, continueFlow, type Party, postJson, redeem, startFlow } from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let party: Party;

type Alg = 'EdDSA' | 'ES256';
interface KeyPair {
  alg: Alg;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function keyPair(alg: Alg): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, privateKey, publicJwk: await exportJWK(publicKey) };
}

/** A key-bound agent of the test server, with its key pair. */
async function keyBoundAgent(alg: Alg = 'EdDSA') {
  const key = await keyPair(alg);
  const agent = await registerKeyBoundAgent(
    server.ctx,
    { ownerEmail: 'ada@example.com', ownerName: 'Ada Lovelace' },
    agentKeyOf(key.publicJwk),
  );
  return { agentId: agent.id, key };
}

/** An assertion as docs/design.md §16 says, each claim replaceable. */
function assertion(
  agentId: string,
  key: KeyPair,
  requestId: string,
  overrides: {
    iss?: string;
    sub?: string;
    aud?: string;
    request_id?: string;
    jti?: string;
    iat?: number;
    exp?: number;
  } = {},
): Promise<string> {
  const iat = overrides.iat ?? server.clock();
  return new SignJWT({ request_id: overrides.request_id ?? requestId })
    .setProtectedHeader({ alg: key.alg, typ: 'JWT' })
    .setIssuer(overrides.iss ?? agentId)
    .setSubject(overrides.sub ?? agentId)
    .setAudience(overrides.aud ?? server.baseUrl)
    .setJti(overrides.jti ?? randomUUID())
    .setIssuedAt(iat)
    .setExpirationTime(overrides.exp ?? iat + 60)
    .sign(key.privateKey);
}

function authenticateWith(requestId: string, agentId: string, credentials: Record<string, string>) {
  return postJson(server, '/api/agent/authenticate', {
    request_id: requestId,
    agent_id: agentId,
    model: 'claude-sonnet',
    ...credentials,
  });
}

const REFUSED = { error: 'invalid_credentials', error_description: 'The agent credentials are invalid.' };

async function expectRefused(response: Response) {
  expect(response.status).toBe(401);
  expect(await response.json()).toEqual(REFUSED);
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000' } });
  party = { ...(await server.createClient()), agentId: '', agentSecret: '' };
});
afterAll(() => server.close());

describe('a key-bound agent signs in with an assertion', () => {
  it.each(['EdDSA', 'ES256'] as const)(
    '%s: authorize → authenticate with agent_assertion → continue → token',
    async (alg) => {
      const { agentId, key } = await keyBoundAgent(alg);
      const started = await startFlow(server, party);
      const answer = await authenticateWith(started.requestId, agentId, {
        agent_assertion: await assertion(agentId, key, started.requestId),
      });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ status: 'authenticated', message: expect.stringMatching(/Test App/) });
      expect(await server.ctx.store.requests.find(started.requestId)).toMatchObject({
        status: 'authenticated',
        agent_id: agentId,
      });
      const redirect = await continueFlow(server, started);
      expect(redirect.status).toBe(302);
      const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!;
      const tokens = await redeem(server, party, code, started.verifier);
      expect(tokens.status).toBe(200);
      const { access_token } = (await tokens.json()) as { access_token: string };
      const userinfo = await fetch(`${server.baseUrl}/userinfo`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
      expect(await userinfo.json()).toMatchObject({ sub: agentId, email: 'ada@example.com' });
    },
  );

  it('the agent is stored with its public key and thumbprint, and a secret nobody holds', async () => {
    const { agentId, key } = await keyBoundAgent('ES256');
    const stored = await server.ctx.store.agents.find(agentId);
    expect(JSON.parse(stored!.public_jwk!)).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: key.publicJwk.x,
      y: key.publicJwk.y,
    });
    expect(stored!.key_thumbprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(stored!.secret_digest).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('refused with 401 invalid_credentials, all alike', () => {
  it('a replayed assertion: on the same request, and its jti in a new assertion for another request', async () => {
    const { agentId, key } = await keyBoundAgent();
    const first = await startFlow(server, party);
    const jti = randomUUID();
    const signed = await assertion(agentId, key, first.requestId, { jti });
    // The first use is refused for another reason (an unexpected website) after the credentials:
    // the assertion is used all the same.
    const mismatch = await authenticateWith(first.requestId, agentId, {
      agent_assertion: signed,
      expected_client_id: 'cli_somebody_else',
    });
    expect(mismatch.status).toBe(412);
    await expectRefused(await authenticateWith(first.requestId, agentId, { agent_assertion: signed }));
    expect((await server.ctx.store.requests.find(first.requestId))!.status).toBe('pending');

    const second = await startFlow(server, party);
    const reused = await assertion(agentId, key, second.requestId, { jti });
    await expectRefused(await authenticateWith(second.requestId, agentId, { agent_assertion: reused }));
    // A fresh jti for the same request works: the refusals changed nothing.
    const fresh = await assertion(agentId, key, second.requestId);
    expect((await authenticateWith(second.requestId, agentId, { agent_assertion: fresh })).status).toBe(200);
    // After the success, the same assertion again is a replay (401), not a used request (409).
    await expectRefused(await authenticateWith(second.requestId, agentId, { agent_assertion: fresh }));
  });

  it('two nodes on one database: a replay on the other node is refused', async () => {
    const other = await startTestServer({
      databaseUrl: server.databaseUrl,
      env: { BASE_URL: server.baseUrl, AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000' },
    });
    try {
      const { agentId, key } = await keyBoundAgent();
      const started = await startFlow(server, party);
      const signed = await assertion(agentId, key, started.requestId);
      const [a, b] = await Promise.all(
        [server, other].map((node) =>
          postJson(node, '/api/agent/authenticate', {
            request_id: started.requestId,
            agent_id: agentId,
            agent_assertion: signed,
            model: 'm',
          }),
        ),
      );
      expect([a!.status, b!.status].sort()).toEqual([200, 401]);
    } finally {
      await other.close();
    }
  });

  it('an expired assertion (past exp and the clock skew)', async () => {
    const { agentId, key } = await keyBoundAgent();
    const started = await startFlow(server, party);
    const iat = server.clock() - 60 - ASSERTION_CLOCK_SKEW - 1;
    await expectRefused(
      await authenticateWith(started.requestId, agentId, {
        agent_assertion: await assertion(agentId, key, started.requestId, { iat, exp: iat + 60 }),
      }),
    );
    // Within the skew it is still accepted.
    const late = server.clock() - 60 - ASSERTION_CLOCK_SKEW + 2;
    const accepted = await authenticateWith(started.requestId, agentId, {
      agent_assertion: await assertion(agentId, key, started.requestId, { iat: late, exp: late + 60 }),
    });
    expect(accepted.status).toBe(200);
  });

  it('an assertion living more than 60 seconds, or issued in the future', async () => {
    const { agentId, key } = await keyBoundAgent();
    const started = await startFlow(server, party);
    const now = server.clock();
    for (const times of [
      { iat: now, exp: now + 61 },
      { iat: now, exp: now + 3600 },
      { iat: now + ASSERTION_CLOCK_SKEW + 5, exp: now + ASSERTION_CLOCK_SKEW + 30 },
      { iat: now, exp: now },
    ]) {
      await expectRefused(
        await authenticateWith(started.requestId, agentId, {
          agent_assertion: await assertion(agentId, key, started.requestId, times),
        }),
      );
    }
  });

  it('an assertion for a look-alike issuer, another request, or another agent (iss, sub)', async () => {
    const { agentId, key } = await keyBoundAgent();
    const other = await keyBoundAgent();
    const started = await startFlow(server, party);
    const elsewhere = await startFlow(server, party);
    for (const overrides of [
      { aud: server.baseUrl.replace('127.0.0.1', 'localhost') },
      { aud: `${server.baseUrl}/` },
      { aud: `${server.baseUrl}.evil.example` },
      { request_id: elsewhere.requestId },
      { iss: other.agentId },
      { sub: other.agentId },
    ]) {
      await expectRefused(
        await authenticateWith(started.requestId, agentId, {
          agent_assertion: await assertion(agentId, key, started.requestId, overrides),
        }),
      );
    }
    // Another agent's valid assertion, presented under this agent's id.
    await expectRefused(
      await authenticateWith(started.requestId, agentId, {
        agent_assertion: await assertion(other.agentId, other.key, started.requestId),
      }),
    );
    expect((await server.ctx.store.requests.find(started.requestId))!.status).toBe('pending');
  });

  it('an assertion signed by another key, unsigned (alg none) or with HS256 over the public key', async () => {
    const { agentId, key } = await keyBoundAgent();
    const started = await startFlow(server, party);
    const stranger = await keyPair('EdDSA');
    await expectRefused(
      await authenticateWith(started.requestId, agentId, {
        agent_assertion: await assertion(agentId, { ...stranger, alg: 'EdDSA' }, started.requestId),
      }),
    );
    const now = server.clock();
    const claims = {
      iss: agentId,
      sub: agentId,
      aud: server.baseUrl,
      request_id: started.requestId,
      jti: randomUUID(),
      iat: now,
      exp: now + 60,
    };
    await expectRefused(
      await authenticateWith(started.requestId, agentId, {
        agent_assertion: `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`,
      }),
    );
    // The algorithm-confusion attack: the public key's text used as an HMAC secret.
    const stored = (await server.ctx.store.agents.find(agentId))!.public_jwk!;
    for (const secret of [stored, JSON.stringify(key.publicJwk)]) {
      const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ ...claims, jti: randomUUID() })}`;
      const mac = createHmac('sha256', secret).update(input).digest('base64url');
      await expectRefused(await authenticateWith(started.requestId, agentId, { agent_assertion: `${input}.${mac}` }));
    }
    await expectRefused(await authenticateWith(started.requestId, agentId, { agent_assertion: 'not.a.jwt' }));
  });

  it('a secret presented for a key-bound agent, and an assertion for an agent with a secret', async () => {
    const { agentId } = await keyBoundAgent();
    const started = await startFlow(server, party);
    await expectRefused(await authenticateWith(started.requestId, agentId, { agent_secret: 'aas_guessed' }));
    const secretAgent = await server.createAgent();
    const key = await keyPair('EdDSA');
    await expectRefused(
      await authenticateWith(started.requestId, secretAgent.agentId, {
        agent_assertion: await assertion(secretAgent.agentId, key, started.requestId),
      }),
    );
    // The agent with a secret is unaffected.
    expect(
      (await authenticateWith(started.requestId, secretAgent.agentId, { agent_secret: secretAgent.agentSecret }))
        .status,
    ).toBe(200);
  });

  it('an unknown agent and a disabled key-bound agent', async () => {
    const { agentId, key } = await keyBoundAgent();
    const started = await startFlow(server, party);
    await expectRefused(
      await authenticateWith(started.requestId, 'agt_nobody', {
        agent_assertion: await assertion('agt_nobody', key, started.requestId),
      }),
    );
    await setAgentStatus(server.ctx, agentId, 'disabled');
    await expectRefused(
      await authenticateWith(started.requestId, agentId, {
        agent_assertion: await assertion(agentId, key, started.requestId),
      }),
    );
  });

  it('each refusal is in the sign-in history as invalid_credentials', async () => {
    const { agentId, key } = await keyBoundAgent();
    const started = await startFlow(server, party);
    await authenticateWith(started.requestId, agentId, {
      agent_assertion: await assertion(agentId, key, started.requestId, { aud: 'https://evil.example' }),
    });
    const events = await server.ctx.store.signIns.listEvents({ agent_id: agentId, limit: 5 });
    expect(events.map((event) => event.outcome)).toEqual(['invalid_credentials']);
  });
});

describe('the body', () => {
  it('400 invalid_request with both agent_secret and agent_assertion', async () => {
    const { agentId, key } = await keyBoundAgent();
    const started = await startFlow(server, party);
    const answer = await authenticateWith(started.requestId, agentId, {
      agent_secret: 'aas_x',
      agent_assertion: await assertion(agentId, key, started.requestId),
    });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toEqual({
      error: 'invalid_request',
      error_description: 'Send agent_secret or agent_assertion, not both.',
    });
  });

  it('400 for an assertion longer than 2048 characters or with control characters', async () => {
    const started = await startFlow(server, party);
    for (const agent_assertion of ['a'.repeat(2049), 'a.b\u0000.c']) {
      const answer = await authenticateWith(started.requestId, 'agt_x', { agent_assertion });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { error: string }).error).toBe('invalid_request');
    }
  });
});

describe('rotation', () => {
  it('the old key stops at once, the new one works; an agent with a secret can be bound to a key', async () => {
    const { agentId, key } = await keyBoundAgent();
    const next = await keyPair('ES256');
    const rotated = await rotateAgentKey(server.ctx, agentId, agentKeyOf(next.publicJwk));
    expect(rotated.key_thumbprint).toBe(agentKeyOf(next.publicJwk).thumbprint);
    const started = await startFlow(server, party);
    await expectRefused(
      await authenticateWith(started.requestId, agentId, {
        agent_assertion: await assertion(agentId, key, started.requestId),
      }),
    );
    expect(
      (
        await authenticateWith(started.requestId, agentId, {
          agent_assertion: await assertion(agentId, next, started.requestId),
        })
      ).status,
    ).toBe(200);

    const secretAgent = await server.createAgent();
    await rotateAgentKey(server.ctx, secretAgent.agentId, agentKeyOf(next.publicJwk));
    const again = await startFlow(server, party);
    await expectRefused(
      await authenticateWith(again.requestId, secretAgent.agentId, { agent_secret: secretAgent.agentSecret }),
    );
    expect(
      (
        await authenticateWith(again.requestId, secretAgent.agentId, {
          agent_assertion: await assertion(secretAgent.agentId, next, again.requestId),
        })
      ).status,
    ).toBe(200);
  });
});

describe('throttling and the purge', () => {
  it('bad assertions count as wrong credentials: 429 once the agent_id has had too many', async () => {
    const strict = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '3', AUTH_FAILURES_PER_IP: '1000' } });
    try {
      const key = await keyPair('EdDSA');
      const agent = await registerKeyBoundAgent(
        strict.ctx,
        { ownerEmail: 'ada@example.com' },
        agentKeyOf(key.publicJwk),
      );
      const client = await strict.createClient();
      const started = await startFlow(strict, { ...client, agentId: agent.id, agentSecret: '' });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const response = await postJson(strict, '/api/agent/authenticate', {
          request_id: started.requestId,
          agent_id: agent.id,
          agent_assertion: await new SignJWT({ request_id: started.requestId })
            .setProtectedHeader({ alg: 'EdDSA' })
            .setIssuer(agent.id)
            .setSubject(agent.id)
            .setAudience('https://look-alike.example')
            .setJti(randomUUID())
            .setIssuedAt(strict.clock())
            .setExpirationTime(strict.clock() + 30)
            .sign(key.privateKey),
          model: 'm',
        });
        statuses.push(response.status);
      }
      expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
      expect(statuses.slice(3)).toEqual([429, 429]);
    } finally {
      await strict.close();
    }
  });

  it('used assertion ids are kept until their assertion expires, then purged', async () => {
    const { agentId, key } = await keyBoundAgent();
    const started = await startFlow(server, party);
    const now = server.clock();
    const jti = `purge-${randomUUID()}`;
    const answer = await authenticateWith(started.requestId, agentId, {
      agent_assertion: await assertion(agentId, key, started.requestId, { jti, iat: now, exp: now + 30 }),
    });
    expect(answer.status).toBe(200);
    const purgeAt = (at: number) =>
      server.ctx.store.purge({ expiredBefore: at, unauthenticatedBefore: at, auditBefore: 0 });
    await purgeAt(now + 30 + ASSERTION_CLOCK_SKEW);
    // The id is still remembered: the same jti again is refused.
    expect(await server.ctx.store.assertions.use(agentId, jti, now + 60)).toBe(false);
    const purged = await purgeAt(now + 30 + ASSERTION_CLOCK_SKEW + 1);
    expect(purged.assertions).toBeGreaterThanOrEqual(1);
    expect(await server.ctx.store.assertions.use(agentId, jti, now + 60)).toBe(true);
  });
});

describe('with its owner’s policy (docs/design.md §16)', () => {
  it('"ask me": the assertion proves the agent, the owner approves, the request is authenticated; the assertion is spent', async () => {
    const { agentId, key } = await keyBoundAgent('ES256');
    await setAgentPolicy(server.ctx, agentId, { ...DEFAULT_POLICY, websites: 'ask' });
    const started = await startFlow(server, party);
    const signed = await assertion(agentId, key, started.requestId);
    const held = await authenticateWith(started.requestId, agentId, { agent_assertion: signed });
    expect(held.status).toBe(202);
    const { approval_id } = (await held.json()) as { approval_id: string };
    // The same assertion again is a replay; a fresh one finds the same approval.
    await expectRefused(await authenticateWith(started.requestId, agentId, { agent_assertion: signed }));
    const again = await authenticateWith(started.requestId, agentId, {
      agent_assertion: await assertion(agentId, key, started.requestId),
    });
    expect(again.status).toBe(202);
    expect(((await again.json()) as { approval_id: string }).approval_id).toBe(approval_id);
    await decideApproval(server.ctx, approval_id, 'once', 'acc_owner');
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'authenticated' });
    expect((await continueFlow(server, started)).status).toBe(302);
  });

  it('"listed" refuses a website off the list with 403 after the key proved the agent; a bad assertion is still 401', async () => {
    const { agentId, key } = await keyBoundAgent();
    await setAgentPolicy(server.ctx, agentId, { ...DEFAULT_POLICY, websites: 'listed', allowed_clients: [] });
    const started = await startFlow(server, party);
    const refused = await authenticateWith(started.requestId, agentId, {
      agent_assertion: await assertion(agentId, key, started.requestId),
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: string }).error).toBe('access_denied');
    await expectRefused(
      await authenticateWith(started.requestId, agentId, {
        agent_assertion: await assertion(agentId, key, started.requestId, { aud: 'https://evil.example' }),
      }),
    );
  });
});
