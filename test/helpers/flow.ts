/**
 * The steps of the flow as a browser and an agent take them, over real HTTP with fetch:
 * authorize (keeping the binding cookie), authenticate, continue, token.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { TestServer } from './server.ts';

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function metaContent(page: string, name: string): string | undefined {
  return new RegExp(`<meta name="${name}" content="([^"]*)">`).exec(page)?.[1];
}

export interface Party {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  agentId: string;
  agentSecret: string;
}

export async function setupParty(
  server: TestServer,
  client: Parameters<TestServer['createClient']>[0] = {},
): Promise<Party> {
  return { ...(await server.createClient(client)), ...(await server.createAgent()) };
}

export interface Started {
  requestId: string;
  /** The browser's binding cookie as a Cookie header value. */
  cookie: string;
  verifier: string;
  state: string;
  page: string;
  response: Response;
}

export function authorizeUrl(server: TestServer, params: Record<string, string | undefined>): string {
  const url = new URL('/authorize', server.baseUrl);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(name, value);
  return url.href;
}

export async function startFlow(
  server: TestServer,
  party: Party,
  extra: Record<string, string | undefined> = {},
): Promise<Started> {
  const { verifier, challenge } = pkcePair();
  const state = extra.state ?? randomBytes(16).toString('base64url');
  const response = await fetch(
    authorizeUrl(server, {
      client_id: party.clientId,
      redirect_uri: party.redirectUri,
      response_type: 'code',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    }),
  );
  const page = await response.text();
  if (response.status !== 200) throw new Error(`authorize answered ${response.status}: ${page.slice(0, 300)}`);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { requestId: metaContent(page, 'request-id')!, cookie, verifier, state, page, response };
}

export async function postJson(
  server: TestServer,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(new URL(path, server.baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export async function postForm(
  server: TestServer,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(new URL(path, server.baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

export function authenticate(
  server: TestServer,
  party: Party,
  requestId: string,
  model = 'test-model',
): Promise<Response> {
  return postJson(server, '/api/agent/authenticate', {
    request_id: requestId,
    agent_id: party.agentId,
    agent_secret: party.agentSecret,
    model,
  });
}

export function continueFlow(
  server: TestServer,
  started: Pick<Started, 'requestId' | 'cookie'>,
  fields: Record<string, string> = {},
): Promise<Response> {
  return postForm(
    server,
    '/authorize/continue',
    { request_id: started.requestId, ...fields },
    { cookie: started.cookie },
  );
}

export async function checkStatus(
  server: TestServer,
  requestId: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(
    new URL(`/api/check-status?request_id=${encodeURIComponent(requestId)}`, server.baseUrl),
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Runs authorize → authenticate → continue and returns the code from the redirect. */
export async function obtainCode(
  server: TestServer,
  party: Party,
  extra: Record<string, string | undefined> = {},
): Promise<Started & { code: string; location: URL }> {
  const started = await startFlow(server, party, extra);
  const auth = await authenticate(server, party, started.requestId);
  if (auth.status !== 200) throw new Error(`authenticate answered ${auth.status}`);
  const redirect = await continueFlow(server, started);
  if (redirect.status !== 302) throw new Error(`continue answered ${redirect.status}`);
  const location = new URL(redirect.headers.get('location')!);
  return { ...started, code: location.searchParams.get('code')!, location };
}

export async function redeem(
  server: TestServer,
  party: Party,
  code: string,
  verifier: string,
  extra: Record<string, string> = {},
): Promise<Response> {
  return postForm(server, '/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: party.clientId,
    client_secret: party.clientSecret,
    redirect_uri: party.redirectUri,
    ...extra,
  });
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  id_token?: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

export async function obtainTokens(
  server: TestServer,
  party: Party,
  extra: Record<string, string | undefined> = {},
): Promise<Tokens> {
  const { code, verifier } = await obtainCode(server, party, extra);
  const response = await redeem(server, party, code, verifier);
  if (response.status !== 200) throw new Error(`token answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Tokens;
}
