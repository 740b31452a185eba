/**
 * No secret in the logs or in an error answer (docs/design.md §10), on the project's engine, with
 * LOG_LEVEL=trace: a full flow, and then the error paths, where a careless handler is most
 * likely to log or echo what it was given — a wrong client secret, a replayed code, a reused
 * refresh token, forged and revoked JWTs at /userinfo, a wrong agent secret, malformed bodies
 * carrying secrets, a wrong binding cookie, and 500s provoked by hiding a table from the server
 * while requests carry secrets. With DYNAMIC_REGISTRATION on, the same for registration access
 * tokens and client secrets at POST /register and GET|PUT|DELETE /register/:client_id.
 */
import { createHash, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authenticate,
  continueFlow,
  obtainCode,
  type Party,
  pkcePair,
  postForm,
  postJson,
  redeem,
  setupParty,
  startFlow,
  type Tokens,
} from '../helpers/flow.ts';
import { captureLogs, startTestServer, TEST_ENGINE, TEST_JWT_SECRET, type TestServer } from '../helpers/server.ts';
import { type RawSql, rawSql } from './support.ts';

interface Seen {
  what: string;
  status: number;
  headers: string;
  body: string;
}

const captured = captureLogs();
let server: TestServer;
let sql: RawSql;
let party: Party;
/** Every secret the test handled: none may appear in a log line or an error answer. */
const secrets = new Map<string, string>();
/** Every answer the test received, to search the error answers. */
const seen: Seen[] = [];

const keep = (what: string, value: string | undefined | null) => {
  if (value) secrets.set(value, what);
  return value!;
};
/** The three tokens of a token response. */
const keepTokens = (tokens: Tokens) => {
  keep('access token', tokens.access_token);
  keep('refresh token', tokens.refresh_token);
  keep('id token', tokens.id_token);
};

/** Records the answer (status, headers, body) and returns the body text. */
async function record(
  what: string,
  response: Response | Promise<Response>,
): Promise<{ status: number; text: string; response: Response }> {
  const answer = await response;
  const text = await answer.text();
  seen.push({ what, status: answer.status, headers: JSON.stringify([...answer.headers.entries()]), body: text });
  return { status: answer.status, text, response: answer };
}

const client = () => ({ client_id: party.clientId, client_secret: party.clientSecret });

async function freshTokens(): Promise<Tokens> {
  const { code, verifier, cookie } = await obtainCode(server, party);
  keep('code', code);
  keep('code_verifier', verifier);
  keep('binding cookie', cookie.split('=')[1]);
  const { status, text } = await record('token exchange', redeem(server, party, code, verifier));
  expect(status).toBe(200);
  const tokens = JSON.parse(text) as Tokens;
  keepTokens(tokens);
  return tokens;
}

/** Runs `work` while `table` is renamed away from the server, so its statements on it fail (500). */
async function withoutTable<T>(table: string, work: () => Promise<T>): Promise<T> {
  await sql.exec(`ALTER TABLE ${table} RENAME TO ${table}_hidden`);
  try {
    return await work();
  } finally {
    await sql.exec(`ALTER TABLE ${table}_hidden RENAME TO ${table}`);
  }
}

beforeAll(async () => {
  server = await startTestServer({
    env: { LOG_LEVEL: 'trace', AUTH_FAILURES_PER_IP: '1000' },
    logStream: captured.stream,
  });
  sql = await rawSql(server.databaseUrl);
  party = await setupParty(server);
  keep('agent secret', party.agentSecret);
  keep('client secret', party.clientSecret);
});

afterAll(async () => {
  await sql?.close();
  await server?.close();
});

describe(`secrets in logs and error answers (${TEST_ENGINE}, LOG_LEVEL=trace)`, () => {
  it('a full flow and every error path log no secret, code, verifier, token or cookie, and echo none in an error answer', async () => {
    // --- The full flow, every endpoint.
    const nonce = keep('nonce', randomBytes(16).toString('base64url'));
    const started = await startFlow(server, party, {
      nonce,
      state: keep('state', `state-${randomBytes(12).toString('base64url')}`),
    });
    keep('binding cookie', started.cookie.split('=')[1]);
    keep('code_verifier', started.verifier);
    await record('check-status', fetch(`${server.baseUrl}/api/check-status?request_id=${started.requestId}`));
    expect((await record('authenticate', authenticate(server, party, started.requestId))).status).toBe(200);
    const redirect = await record('continue', continueFlow(server, started));
    expect(redirect.status).toBe(302);
    const code = keep('code', new URL(redirect.response.headers.get('location')!).searchParams.get('code'));
    const exchanged = await record('token exchange', redeem(server, party, code, started.verifier));
    expect(exchanged.status).toBe(200);
    const tokens = JSON.parse(exchanged.text) as Tokens;
    keepTokens(tokens);
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    expect((await record('userinfo GET', fetch(`${server.baseUrl}/userinfo`, { headers: bearer }))).status).toBe(200);
    expect(
      (await record('userinfo POST', fetch(`${server.baseUrl}/userinfo`, { method: 'POST', headers: bearer }))).status,
    ).toBe(200);
    expect(
      (await record('introspect access', postForm(server, '/introspect', { token: tokens.access_token, ...client() })))
        .status,
    ).toBe(200);
    expect(
      (
        await record(
          'introspect refresh',
          postForm(server, '/introspect', { token: tokens.refresh_token, ...client() }),
        )
      ).status,
    ).toBe(200);
    const refreshed = await record(
      'refresh',
      postForm(server, '/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...client() }),
    );
    expect(refreshed.status).toBe(200);
    const next = JSON.parse(refreshed.text) as Tokens;
    keepTokens(next);

    // --- Error paths.
    const wrongClientSecret = keep('wrong client secret', `cls_${randomBytes(32).toString('base64url')}`);
    const other = await obtainCode(server, party);
    keep('code', other.code);
    keep('code_verifier', other.verifier);
    keep('binding cookie', other.cookie.split('=')[1]);
    expect(
      (
        await record(
          'token, wrong client secret',
          redeem(server, party, other.code, other.verifier, { client_secret: wrongClientSecret }),
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await record(
          'token JSON, wrong client secret',
          postJson(server, '/token', {
            grant_type: 'authorization_code',
            code: other.code,
            code_verifier: other.verifier,
            client_id: party.clientId,
            client_secret: wrongClientSecret,
          }),
        )
      ).status,
    ).toBe(401);
    const wrongVerifier = keep('wrong code_verifier', pkcePair().verifier);
    expect((await record('token, wrong verifier', redeem(server, party, other.code, wrongVerifier))).status).toBe(400);
    expect(
      (
        await record(
          'introspect, wrong client secret',
          postForm(server, '/introspect', {
            token: next.access_token,
            client_id: party.clientId,
            client_secret: wrongClientSecret,
          }),
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await record(
          'revoke, wrong client secret',
          postForm(server, '/revoke', {
            token: next.refresh_token,
            client_id: party.clientId,
            client_secret: wrongClientSecret,
          }),
        )
      ).status,
    ).toBe(401);

    // A replayed code: refused, and what it issued is revoked.
    expect((await record('replayed code', redeem(server, party, code, started.verifier))).status).toBe(400);
    expect(
      (
        await record(
          'userinfo after the replay',
          fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${next.access_token}` } }),
        )
      ).status,
    ).toBe(401);

    // A reused refresh token: refused, and the grant revoked.
    const reuse = await freshTokens();
    const rotated = await record(
      'refresh before reuse',
      postForm(server, '/token', { grant_type: 'refresh_token', refresh_token: reuse.refresh_token, ...client() }),
    );
    expect(rotated.status).toBe(200);
    const rotatedTokens = JSON.parse(rotated.text) as Tokens;
    keepTokens(rotatedTokens);
    expect(
      (
        await record(
          'refresh token reuse',
          postForm(server, '/token', { grant_type: 'refresh_token', refresh_token: reuse.refresh_token, ...client() }),
        )
      ).status,
    ).toBe(400);
    expect(
      (
        await record(
          'refresh of the revoked grant',
          postForm(server, '/token', {
            grant_type: 'refresh_token',
            refresh_token: rotatedTokens.refresh_token,
            ...client(),
          }),
        )
      ).status,
    ).toBe(400);

    // Real-looking JWTs that are not valid access tokens at /userinfo.
    const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    const header = JSON.parse(Buffer.from(tokens.access_token.split('.')[0]!, 'base64url').toString()) as {
      alg: string;
      typ: string;
      kid: string;
    };
    const forged = keep(
      'forged JWT',
      await new SignJWT({ ...claims, jti: `atk_${randomBytes(16).toString('base64url')}` })
        .setProtectedHeader(header)
        .sign(new TextEncoder().encode(`forged-${TEST_JWT_SECRET}`)),
    );
    const unknownJti = keep(
      'JWT with an unknown jti',
      await new SignJWT({ ...claims, jti: `atk_${randomBytes(16).toString('base64url')}` })
        .setProtectedHeader(header)
        .sign(new TextEncoder().encode(TEST_JWT_SECRET)),
    );
    const expired = keep(
      'expired JWT',
      await new SignJWT({ ...claims, iat: 1_000_000_000, exp: 1_000_003_600 })
        .setProtectedHeader(header)
        .sign(new TextEncoder().encode(TEST_JWT_SECRET)),
    );
    for (const [what, token] of [
      ['forged', forged],
      ['unknown jti', unknownJti],
      ['expired', expired],
      ['revoked', next.access_token],
    ] as const) {
      const answer = await record(
        `userinfo, ${what} JWT`,
        fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${token}` } }),
      );
      expect(answer.status, what).toBe(401);
      expect(
        (await record(`introspect, ${what} JWT`, postForm(server, '/introspect', { token, ...client() }))).status,
      ).toBe(200);
    }
    expect(
      (
        await record(
          'userinfo, Basic with a secret',
          fetch(`${server.baseUrl}/userinfo`, {
            headers: {
              authorization: `Basic ${Buffer.from(`${party.clientId}:${party.clientSecret}`).toString('base64')}`,
            },
          }),
        )
      ).status,
    ).toBe(401);

    // Wrong agent secret, and secrets inside malformed or invalid bodies.
    const pending = await startFlow(server, party);
    keep('binding cookie', pending.cookie.split('=')[1]);
    const wrongAgentSecret = keep('wrong agent secret', `aas_${randomBytes(32).toString('base64url')}`);
    expect(
      (
        await record(
          'authenticate, wrong agent secret',
          authenticate(server, { ...party, agentSecret: wrongAgentSecret }, pending.requestId),
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await record(
          'authenticate, malformed JSON with the secret',
          postJson(
            server,
            '/api/agent/authenticate',
            `{"request_id":"${pending.requestId}","agent_id":"${party.agentId}","agent_secret":"${party.agentSecret}",`,
          ),
        )
      ).status,
    ).toBe(400);
    expect(
      (
        await record(
          'authenticate, control character in model (with the secret)',
          postJson(server, '/api/agent/authenticate', {
            request_id: pending.requestId,
            agent_id: party.agentId,
            agent_secret: party.agentSecret,
            model: `bad\u0001${party.agentSecret}`,
          }),
        )
      ).status,
    ).toBe(400);
    expect(
      (
        await record(
          'authenticate, form body with the secret',
          postForm(server, '/api/agent/authenticate', {
            request_id: pending.requestId,
            agent_id: party.agentId,
            agent_secret: party.agentSecret,
            model: 'm',
          }),
        )
      ).status,
    ).toBe(415);
    expect(
      (
        await record(
          'token, malformed JSON with the secret',
          postJson(
            server,
            '/token',
            `{"grant_type":"authorization_code","client_secret":"${party.clientSecret}","code":"${other.code}"`,
          ),
        )
      ).status,
    ).toBe(400);
    expect(
      (await record('token, over-long code', redeem(server, party, `${other.code}${'x'.repeat(300)}`, other.verifier)))
        .status,
    ).toBe(400);

    // A wrong binding cookie at continue (another browser), and a cookie at a request it does not own.
    expect(
      (await record('authenticate the pending request', authenticate(server, party, pending.requestId))).status,
    ).toBe(200);
    const foreignCookie = keep('foreign binding cookie', randomBytes(32).toString('base64url'));
    expect(
      (
        await record(
          'continue, wrong cookie',
          continueFlow(server, { requestId: pending.requestId, cookie: `agentauth_browser=${foreignCookie}` }),
        )
      ).status,
    ).toBe(403);

    // --- 500s: the server's statements fail while the requests carry secrets.
    const forAudit = await startFlow(server, party);
    keep('binding cookie', forAudit.cookie.split('=')[1]);
    keep('code_verifier', forAudit.verifier);
    const audit500 = await withoutTable('audit_events', () =>
      record('authenticate, 500', authenticate(server, party, forAudit.requestId)),
    );
    const forCode = await startFlow(server, party);
    keep('binding cookie', forCode.cookie.split('=')[1]);
    expect((await record('authenticate for the code 500', authenticate(server, party, forCode.requestId))).status).toBe(
      200,
    );
    const code500 = await withoutTable('authorization_codes', () =>
      record('continue, 500', continueFlow(server, forCode)),
    );
    const forGrant = await obtainCode(server, party);
    keep('code', forGrant.code);
    keep('code_verifier', forGrant.verifier);
    keep('binding cookie', forGrant.cookie.split('=')[1]);
    const grant500 = await withoutTable('grants', () =>
      record('token exchange, 500', redeem(server, party, forGrant.code, forGrant.verifier)),
    );
    const live = await freshTokens();
    const userinfo500 = await withoutTable('access_tokens', () =>
      record(
        'userinfo, 500',
        fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${live.access_token}` } }),
      ),
    );
    const refresh500 = await withoutTable('refresh_tokens', () =>
      record(
        'refresh, 500',
        postForm(server, '/token', { grant_type: 'refresh_token', refresh_token: live.refresh_token, ...client() }),
      ),
    );
    for (const [what, answer] of [
      ['authenticate', audit500],
      ['continue', code500],
      ['token', grant500],
      ['userinfo', userinfo500],
      ['refresh', refresh500],
    ] as const) {
      expect(answer.status, `${what} with a table missing: ${answer.text.slice(0, 200)}`).toBe(500);
    }
    expect(JSON.parse(grant500.text)).toEqual({
      error: 'server_error',
      error_description: 'An unexpected error occurred.',
    });

    // --- The checks.
    const logs = captured.text();
    expect(logs).toContain('"msg":"request"');
    expect(logs, 'the 500s are logged').toMatch(/"level":50.*request failed/);
    const leaks: string[] = [];
    for (const [secret, what] of secrets) {
      if (secret.length < 16) throw new Error(`${what} is too short to search for`);
      if (logs.includes(secret))
        leaks.push(
          `${what} in the logs: …${logs.slice(Math.max(0, logs.indexOf(secret) - 200), logs.indexOf(secret) + 40)}…`,
        );
      // Digests are stored and may be logged; a digest is no secret, but check the secret is not recoverable from them either.
      for (const answer of seen.filter((candidate) => candidate.status >= 400)) {
        if (answer.body.includes(secret) || answer.headers.includes(secret))
          leaks.push(`${what} in the ${answer.status} answer to "${answer.what}"`);
      }
    }
    // The error redirect (Cancel) and the 302 with the code are the only places a code may travel.
    expect(leaks).toEqual([]);
    // No error answer carries a stack trace or a driver message.
    for (const answer of seen.filter((candidate) => candidate.status >= 400)) {
      expect(answer.body, answer.what).not.toMatch(
        /\bat .+:\d+:\d+|node_modules|SQLITE_|no such table|relation .* does not exist|sql-store/,
      );
    }
    const digestOf = (value: string) => createHash('sha256').update(value).digest('base64url');
    console.log(
      `[log secrets ${TEST_ENGINE}] ${secrets.size} secrets checked against ${logs.split('\n').length - 1} log lines and ${seen.filter((a) => a.status >= 400).length} error answers; digest of the agent secret in logs: ${logs.includes(digestOf(party.agentSecret))}`,
    );
  });
});

describe(`dynamic registration secrets in logs and error answers (${TEST_ENGINE}, LOG_LEVEL=trace)`, () => {
  const logs = captureLogs();
  let dynamic: TestServer;
  let dynamicSql: RawSql;
  beforeAll(async () => {
    dynamic = await startTestServer({
      env: {
        LOG_LEVEL: 'trace',
        DYNAMIC_REGISTRATION: 'true',
        PUBLIC_CLIENTS: 'true',
        REGISTRATION_LIMIT_PER_IP: '1000',
      },
      logStream: logs.stream,
    });
    dynamicSql = await rawSql(dynamic.databaseUrl);
  });
  afterAll(async () => {
    await dynamicSql?.close();
    await dynamic?.close();
  });

  it('registration access tokens and client secrets (right and wrong) are never logged, nor echoed in an error answer', async () => {
    const handled = new Map<string, string>();
    const answers: Seen[] = [];
    const hold = (what: string, value: string | undefined) => {
      if (!value) throw new Error(`${what} is missing`);
      handled.set(value, what);
      return value;
    };
    const call = async (what: string, response: Promise<Response>) => {
      const answer = await response;
      const text = await answer.text();
      answers.push({ what, status: answer.status, headers: JSON.stringify([...answer.headers.entries()]), body: text });
      return { status: answer.status, text };
    };
    const REDIRECT = 'http://localhost:8080/callback';
    const managed = (clientId: string, method: string, token: string | undefined, body?: string) =>
      fetch(`${dynamic.baseUrl}/register/${clientId}`, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body,
      });

    // Registration, confidential and public.
    const created = await call(
      'register',
      postJson(dynamic, '/register', { redirect_uris: [REDIRECT], client_name: 'Logged app' }),
    );
    expect(created.status).toBe(201);
    const client = JSON.parse(created.text) as {
      client_id: string;
      client_secret: string;
      registration_access_token: string;
    };
    const token = hold('registration access token', client.registration_access_token);
    const secret = hold('client secret', client.client_secret);
    const publicCreated = await call(
      'register public',
      postJson(dynamic, '/register', { redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none' }),
    );
    expect(publicCreated.status).toBe(201);
    const publicToken = hold(
      "public client's registration access token",
      (JSON.parse(publicCreated.text) as { registration_access_token: string }).registration_access_token,
    );

    // A sign-in with the registered client, and its tokens.
    const party: Party = {
      clientId: client.client_id,
      clientSecret: secret,
      redirectUri: REDIRECT,
      ...(await dynamic.createAgent()),
    };
    hold('agent secret', party.agentSecret);
    const { code, verifier } = await obtainCode(dynamic, party);
    hold('code', code);
    hold('code_verifier', verifier);
    const exchanged = await call('token exchange', redeem(dynamic, party, code, verifier));
    expect(exchanged.status).toBe(200);
    const tokens = JSON.parse(exchanged.text) as Tokens;
    hold('access token', tokens.access_token);
    hold('refresh token', tokens.refresh_token);

    // The management endpoint, right and wrong.
    const wrongToken = hold('wrong registration access token', `rat_${randomBytes(32).toString('base64url')}`);
    const wrongSecret = hold('wrong client secret', `cls_${randomBytes(32).toString('base64url')}`);
    expect((await call('read', managed(client.client_id, 'GET', token))).status).toBe(200);
    expect((await call('read, wrong token', managed(client.client_id, 'GET', wrongToken))).status).toBe(401);
    expect((await call("read, other client's token", managed(client.client_id, 'GET', publicToken))).status).toBe(401);
    expect((await call('read, the secret as token', managed(client.client_id, 'GET', secret))).status).toBe(401);
    const update = { client_id: client.client_id, redirect_uris: [REDIRECT], client_name: 'Logged app 2' };
    expect(
      (
        await call(
          'update',
          managed(client.client_id, 'PUT', token, JSON.stringify({ ...update, client_secret: secret })),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await call(
          'update, wrong secret',
          managed(client.client_id, 'PUT', token, JSON.stringify({ ...update, client_secret: wrongSecret })),
        )
      ).status,
    ).toBe(400);
    expect(
      (
        await call(
          'update, token in the body',
          managed(client.client_id, 'PUT', token, JSON.stringify({ ...update, registration_access_token: token })),
        )
      ).status,
    ).toBe(400);
    expect(
      (
        await call(
          'update, wrong token, secret in the body',
          managed(client.client_id, 'PUT', wrongToken, JSON.stringify({ ...update, client_secret: secret })),
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await call(
          'update, malformed JSON with token and secret',
          managed(
            client.client_id,
            'PUT',
            token,
            `{"client_id":"${client.client_id}","client_secret":"${secret}","registration_access_token":"${token}",`,
          ),
        )
      ).status,
    ).toBe(400);
    expect(
      (
        await call(
          'update, NUL in a field, with the secret',
          managed(
            client.client_id,
            'PUT',
            token,
            JSON.stringify({ ...update, client_name: `bad\u0000${secret}`, client_secret: secret }),
          ),
        )
      ).status,
    ).toBe(400);
    expect(
      (
        await call(
          'register, secrets in unknown fields and a bad URI',
          postJson(dynamic, '/register', {
            redirect_uris: [`http://evil.example/${token}`],
            client_secret: secret,
            registration_access_token: token,
          }),
        )
      ).status,
    ).toBe(400);
    expect((await call('delete, wrong token', managed(client.client_id, 'DELETE', wrongToken))).status).toBe(401);

    // 500s while the requests carry the token: the clients table hidden from the server.
    await dynamicSql.exec('ALTER TABLE clients RENAME TO clients_hidden');
    try {
      expect((await call('read, 500', managed(client.client_id, 'GET', token))).status).toBe(500);
      expect(
        (
          await call(
            'update, 500',
            managed(client.client_id, 'PUT', token, JSON.stringify({ ...update, client_secret: secret })),
          )
        ).status,
      ).toBe(500);
      expect((await call('register, 500', postJson(dynamic, '/register', { redirect_uris: [REDIRECT] }))).status).toBe(
        500,
      );
    } finally {
      await dynamicSql.exec('ALTER TABLE clients_hidden RENAME TO clients');
    }

    // Deletion, and the old token afterwards.
    expect((await call('delete', managed(client.client_id, 'DELETE', token))).status).toBe(204);
    expect((await call('read after delete', managed(client.client_id, 'GET', token))).status).toBe(401);
    expect(
      (
        await call(
          'refresh after delete',
          postForm(dynamic, '/token', {
            grant_type: 'refresh_token',
            refresh_token: tokens.refresh_token,
            client_id: client.client_id,
            client_secret: secret,
          }),
        )
      ).status,
    ).toBe(401);

    const text = logs.text();
    expect(text).toContain('client registered dynamically');
    expect(text).toContain('dynamically registered client deleted');
    expect(text).toMatch(/"level":50.*request failed/);
    const leaks: string[] = [];
    for (const [value, what] of handled) {
      if (text.includes(value))
        leaks.push(
          `${what} in the logs: …${text.slice(Math.max(0, text.indexOf(value) - 200), text.indexOf(value) + 40)}…`,
        );
      for (const answer of answers.filter((candidate) => candidate.status >= 400)) {
        if (answer.body.includes(value) || answer.headers.includes(value))
          leaks.push(`${what} in the ${answer.status} answer to "${answer.what}"`);
      }
    }
    expect(leaks).toEqual([]);
    for (const answer of answers.filter((candidate) => candidate.status >= 400)) {
      expect(answer.body, answer.what).not.toMatch(
        /\bat .+:\d+:\d+|node_modules|SQLITE_|no such table|relation .* does not exist|sql-store/,
      );
    }
  });
});
