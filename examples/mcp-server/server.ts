/**
 * An example MCP server (Streamable HTTP) protected by agentauth: it accepts only agentauth
 * access tokens issued for its own resource URI (RFC 8707), checked by introspection (RFC 7662)
 * with its own resource-server credentials, and publishes RFC 9728 Protected Resource Metadata
 * so that MCP clients find agentauth by themselves. One tool, `whoami`; with `scopes`, two more
 * that need the server's own scopes (notes:read, notes:write), published in its metadata and
 * asked for with an `insufficient_scope` challenge (RFC 6750 §3.1) that MCP clients step up on.
 *
 *   AGENTAUTH_ISSUER=http://localhost:3000 AGENTAUTH_CLIENT_ID=cli_… AGENTAUTH_CLIENT_SECRET=cls_… \
 *   MCP_PUBLIC_URL=http://localhost:8808/mcp PORT=8808 node --import tsx examples/mcp-server/server.ts
 *
 * Tests start it with startMcpServer() instead. See README.md beside this file.
 *
 * Built from the MCP TypeScript SDK's own pieces: createMcpExpressApp (Host-header checks),
 * metadataHandler (the metadata documents, with CORS), requireBearerAuth with an
 * OAuthTokenVerifier that introspects (401/403 and WWW-Authenticate), McpServer and
 * StreamableHTTPServerTransport in stateless mode.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { z } from 'zod';

export interface McpServerOptions {
  /** The agentauth server (its BASE_URL, the issuer). https, or http on localhost / 127.0.0.1 only. */
  issuer: string;
  /** This MCP server's resource-server client (`agentauth client create --resource <publicUrl>`). */
  clientId: string;
  clientSecret: string;
  /** The port to listen on; 0 picks a free one. */
  port: number;
  /** The address to listen on; 127.0.0.1 unless given. */
  host?: string;
  /**
   * The MCP endpoint as clients reach it, which is also the resource URI tokens must be issued
   * for, e.g. https://mcp.example.com/mcp. Default http://localhost:<port>/mcp. The endpoint is
   * served at this URL's path.
   */
  publicUrl?: string;
  /**
   * Seconds an active introspection result may be reused for the same token (0 to 59; default
   * 0, every request introspects). Longer means fewer calls to agentauth and a revoked token
   * accepted for up to that long.
   */
  introspectionCacheSeconds?: number;
  /** Used for the calls to agentauth (tests count them). Default: the global fetch. */
  fetch?: typeof fetch;
  /** Epoch milliseconds, for the introspection cache. Default Date.now. */
  clock?: () => number;
  /** Where failures to reach agentauth are reported (never a token or secret). Default: stderr. */
  log?: (line: string) => void;
  /**
   * Serve the notes tools, which need this server's own scopes (NOTE_SCOPES: register them with
   * the resource, `--scope 'notes:read Read your notes'`): `scopes_supported` in the metadata, the
   * first scope in the 401 challenge, and a 403 `insufficient_scope` for a tool whose scope the
   * token lacks. Default false: `whoami` only, any token for this resource.
   */
  scopes?: boolean;
}

/** The scopes this server serves with `scopes`, and what each allows, as registered at agentauth. */
export const NOTE_SCOPES = {
  'notes:read': 'Read your notes',
  'notes:write': 'Add notes',
} as const;
type NoteScope = keyof typeof NOTE_SCOPES;
/** Which scope each scoped tool needs. */
const TOOL_SCOPES: Record<string, NoteScope> = { read_notes: 'notes:read', add_note: 'notes:write' };

export interface RunningMcpServer {
  /** The MCP endpoint (publicUrl): what clients connect to. */
  url: string;
  /** The resource URI (RFC 8707) this server accepts tokens for; the same string as url. */
  resource: string;
  /** Where its Protected Resource Metadata is published (the path-inserted form, RFC 9728 §3.1). */
  resourceMetadataUrl: string;
  close(): Promise<void>;
}

/** Entries the introspection cache holds at most. */
const CACHE_ENTRIES = 1000;
/** How long one introspection call may take. */
const INTROSPECTION_TIMEOUT_MS = 5000;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Plain http is allowed only for an issuer on this machine; anything else must be https. */
function issuerUrl(issuer: string): string {
  const url = URL.parse(issuer);
  if (!url || url.search || url.hash)
    throw new Error(`AGENTAUTH_ISSUER must be a URL without query or fragment: ${issuer}`);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    throw new Error(`AGENTAUTH_ISSUER must be https (plain http only for localhost or 127.0.0.1): ${issuer}`);
  }
  return issuer.replace(/\/+$/, '');
}

/** The canonical MCP URL, which is the resource URI: absolute http(s), a path, no query or fragment. */
function resourceUri(publicUrl: string): URL {
  const url = URL.parse(publicUrl);
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.search || url.hash || publicUrl.includes('#')) {
    throw new Error(
      `MCP_PUBLIC_URL must be an http(s) URL without query or fragment, such as https://mcp.example.com/mcp: ${publicUrl}`,
    );
  }
  if (url.pathname === '/')
    throw new Error(
      `MCP_PUBLIC_URL must name the MCP endpoint's path, such as https://mcp.example.com/mcp: ${publicUrl}`,
    );
  if (url.href !== publicUrl)
    throw new Error(
      `MCP_PUBLIC_URL must be written in canonical form (${url.href}), the exact string tokens are issued for: ${publicUrl}`,
    );
  return url;
}

/** What the introspection endpoint answers for an active token (RFC 7662 §2.2), as far as it is used here. */
interface Introspection {
  active: boolean;
  aud?: unknown;
  iss?: unknown;
  sub?: unknown;
  client_id?: unknown;
  scope?: unknown;
  exp?: unknown;
  token_type?: unknown;
  model?: unknown;
}

/**
 * Verifies a bearer token by asking agentauth (POST /introspect, client_secret_post, as this
 * resource server). A token is accepted only when agentauth says it is active AND its audience
 * is exactly this server's resource URI: a token for another resource, or one issued to a
 * client for itself (aud = its client_id), is refused even if a misconfigured registration let
 * agentauth show it to us.
 */
export class IntrospectionVerifier implements OAuthTokenVerifier {
  private readonly cache = new Map<string, { info: AuthInfo; until: number }>();
  private readonly fetch: typeof fetch;
  private readonly clock: () => number;
  private readonly cacheMs: number;

  constructor(
    private readonly options: {
      issuer: string;
      introspectionEndpoint: string;
      clientId: string;
      clientSecret: string;
      resource: string;
      cacheSeconds?: number;
      fetch?: typeof fetch;
      clock?: () => number;
      log?: (line: string) => void;
    },
  ) {
    const seconds = options.cacheSeconds ?? 0;
    if (!Number.isInteger(seconds) || seconds < 0 || seconds >= 60)
      throw new Error(`the introspection cache lifetime must be 0 to 59 seconds (got ${seconds})`);
    this.cacheMs = seconds * 1000;
    this.fetch = options.fetch ?? fetch;
    this.clock = options.clock ?? Date.now;
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const key = createHash('sha256').update(token).digest('base64url');
    const cached = this.cache.get(key);
    if (cached && this.clock() < cached.until) return cached.info;
    this.cache.delete(key);

    const result = await this.introspect(token);
    const { resource, issuer } = this.options;
    if (result.active !== true)
      throw new InvalidTokenError('The access token is not active (unknown, expired or revoked)');
    // RFC 8707 / RFC 9068 §4: the token must be meant for this server and no other.
    if (result.aud !== resource) throw new InvalidTokenError('The access token was not issued for this MCP server');
    if (result.iss !== undefined && result.iss !== issuer)
      throw new InvalidTokenError('The access token was not issued by the expected authorization server');
    if (result.token_type !== undefined && result.token_type !== 'Bearer')
      throw new InvalidTokenError('Not an access token');
    if (typeof result.sub !== 'string' || typeof result.client_id !== 'string' || typeof result.exp !== 'number') {
      throw new ServerError('The introspection answer lacks sub, client_id or exp');
    }
    const info: AuthInfo = {
      token,
      clientId: result.client_id,
      scopes: typeof result.scope === 'string' ? result.scope.split(' ').filter(Boolean) : [],
      expiresAt: result.exp,
      // The audience as agentauth reported it: requireBearerAuth compares it with expectedResource again.
      resource: new URL(result.aud),
      extra: { sub: result.sub, model: typeof result.model === 'string' ? result.model : null },
    };
    if (this.cacheMs > 0) this.remember(key, info, Math.min(this.clock() + this.cacheMs, result.exp * 1000));
    return info;
  }

  private remember(key: string, info: AuthInfo, until: number): void {
    this.cache.set(key, { info, until });
    while (this.cache.size > CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
  }

  private async introspect(token: string): Promise<Introspection> {
    let response: Response;
    try {
      response = await this.fetch(this.options.introspectionEndpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          token,
          token_type_hint: 'access_token',
          client_id: this.options.clientId,
          client_secret: this.options.clientSecret,
        }),
        redirect: 'error',
        signal: AbortSignal.timeout(INTROSPECTION_TIMEOUT_MS),
      });
    } catch (error) {
      this.options.log?.(`introspection failed: ${error instanceof Error ? error.message : String(error)}`);
      throw new ServerError('The authorization server could not be reached to check the access token');
    }
    const body = (await response.json().catch(() => null)) as Introspection | null;
    if (!response.ok || typeof body !== 'object' || body === null) {
      // 401 invalid_client: this server's own credentials are wrong or disabled. Not the caller's fault.
      this.options.log?.(
        `introspection answered ${response.status} ${JSON.stringify((body as { error?: unknown } | null)?.error ?? null)}`,
      );
      throw new ServerError('The authorization server refused to check the access token');
    }
    return body;
  }
}

/** The authorization server's metadata (RFC 8414), checked to be the issuer's own (§3.3). */
async function authorizationServerMetadata(
  issuer: string,
  fetchFn: typeof fetch,
): Promise<{ introspection_endpoint: string }> {
  const url = `${issuer}/.well-known/oauth-authorization-server`;
  const response = await fetchFn(url, {
    headers: { accept: 'application/json' },
    redirect: 'error',
    signal: AbortSignal.timeout(INTROSPECTION_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const metadata = (await response.json()) as { issuer?: unknown; introspection_endpoint?: unknown };
  if (metadata.issuer !== issuer)
    throw new Error(`${url} names the issuer ${JSON.stringify(metadata.issuer)}, not ${issuer}`);
  if (typeof metadata.introspection_endpoint !== 'string') throw new Error(`${url} has no introspection_endpoint`);
  return { introspection_endpoint: metadata.introspection_endpoint };
}

/** Fails at start, not at the first request, when agentauth refuses this server's credentials. */
async function checkCredentials(
  endpoint: string,
  clientId: string,
  clientSecret: string,
  fetchFn: typeof fetch,
): Promise<void> {
  const response = await fetchFn(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ token: 'credentials-check', client_id: clientId, client_secret: clientSecret }),
    redirect: 'error',
    signal: AbortSignal.timeout(INTROSPECTION_TIMEOUT_MS),
  });
  const body = (await response.json().catch(() => null)) as { error?: string; error_description?: string } | null;
  if (!response.ok) {
    throw new Error(
      `agentauth refused this MCP server's credentials at ${endpoint} (${response.status} ${body?.error ?? ''}: ${body?.error_description ?? ''}); check AGENTAUTH_CLIENT_ID and AGENTAUTH_CLIENT_SECRET`,
    );
  }
}

/** The notes each agent (token subject) added, in memory: what the scoped tools read and write. */
type Notes = Map<string, string[]>;

/** A fresh McpServer with its tools; stateless mode builds one per request. */
function buildMcpServer(notes: Notes | null): McpServer {
  const server = new McpServer({ name: 'agentauth-example-mcp-server', version: '0.1.0' });
  server.registerTool(
    'whoami',
    {
      title: 'Who am I',
      description:
        'The agent signed in to this MCP server through agentauth: its agent id (the token subject), the client it signed in with, ' +
        'the scope granted and the model it declared. (Introspection does not carry the owner’s email or name, and agentauth’s ' +
        '/userinfo serves only tokens issued for the client itself, so the owner’s identity is not available here.)',
      outputSchema: {
        agent_id: z.string(),
        client_id: z.string(),
        scope: z.string(),
        model: z.string().nullable(),
        resource: z.string(),
        expires_at: z.number(),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (extra) => {
      const auth = extra.authInfo;
      // requireBearerAuth runs before every request reaches the transport, so this cannot happen.
      if (!auth) return { isError: true, content: [{ type: 'text', text: 'not signed in' }] };
      const result = {
        agent_id: String(auth.extra?.sub),
        client_id: auth.clientId,
        scope: auth.scopes.join(' '),
        model: (auth.extra?.model as string | null | undefined) ?? null,
        resource: String(auth.resource),
        expires_at: auth.expiresAt ?? 0,
      };
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    },
  );
  if (notes === null) return server;
  // Their scopes are checked before the request reaches here (insufficientScope), where a 403 can still be answered.
  server.registerTool(
    'read_notes',
    {
      title: 'Read notes',
      description: 'The notes the signed-in agent added. Needs the scope notes:read.',
      outputSchema: { notes: z.array(z.string()) },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (extra) => {
      const result = { notes: notes.get(String(extra.authInfo?.extra?.sub)) ?? [] };
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    },
  );
  server.registerTool(
    'add_note',
    {
      title: 'Add a note',
      description: 'Adds a note for the signed-in agent. Needs the scope notes:write.',
      inputSchema: { text: z.string().min(1).max(1000) },
      outputSchema: { notes: z.array(z.string()) },
      annotations: { readOnlyHint: false, openWorldHint: false },
    },
    async ({ text }, extra) => {
      const agent = String(extra.authInfo?.extra?.sub);
      const list = [...(notes.get(agent) ?? []), text].slice(-100);
      notes.set(agent, list);
      const result = { notes: list };
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    },
  );
  return server;
}

/**
 * The scope a JSON-RPC request (or batch) needs and the token lacks: the first tools/call of a
 * scoped tool whose scope is not among `granted`. Null when nothing is missing.
 */
function missingScope(body: unknown, granted: readonly string[]): NoteScope | null {
  for (const message of Array.isArray(body) ? body : [body]) {
    const call = message as { method?: unknown; params?: { name?: unknown } } | null;
    if (call?.method !== 'tools/call' || typeof call.params?.name !== 'string') continue;
    const needed = TOOL_SCOPES[call.params.name];
    if (needed && !granted.includes(needed)) return needed;
  }
  return null;
}

export async function startMcpServer(options: McpServerOptions): Promise<RunningMcpServer> {
  const issuer = issuerUrl(options.issuer);
  const fetchFn = options.fetch ?? fetch;
  const log = options.log ?? ((line: string) => process.stderr.write(`example MCP server: ${line}\n`));
  const host = options.host ?? '127.0.0.1';

  const metadata = await authorizationServerMetadata(issuer, fetchFn);
  await checkCredentials(metadata.introspection_endpoint, options.clientId, options.clientSecret, fetchFn);

  const httpServer: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, host, resolve);
  });
  try {
    const port = (httpServer.address() as AddressInfo).port;
    const publicUrl = resourceUri(options.publicUrl ?? `http://localhost:${port}/mcp`);
    const resource = publicUrl.href;
    const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(publicUrl);

    // Requests must name this server (or loopback) in Host: DNS-rebinding protection.
    const publicHost = publicUrl.hostname;
    const app = createMcpExpressApp({ host, allowedHosts: [...new Set([publicHost, ...LOOPBACK_HOSTS])] });
    app.disable('x-powered-by');

    // RFC 9728: where clients learn which authorization server issues tokens for this resource.
    // Served at the path-inserted URL (what the SDK asks first) and at the root (its fallback).
    const protectedResource: OAuthProtectedResourceMetadata = {
      resource,
      authorization_servers: [issuer],
      bearer_methods_supported: ['header'],
      resource_name: 'agentauth example MCP server',
      // RFC 9728 §2: the scopes a client may ask for this resource; MCP clients ask for them all
      // unless a challenge names fewer.
      ...(options.scopes ? { scopes_supported: Object.keys(NOTE_SCOPES) } : {}),
    };
    const notes: Notes | null = options.scopes ? new Map() : null;
    app.use(new URL(resourceMetadataUrl).pathname, metadataHandler(protectedResource));
    app.use('/.well-known/oauth-protected-resource', metadataHandler(protectedResource));

    const verifier = new IntrospectionVerifier({
      issuer,
      introspectionEndpoint: metadata.introspection_endpoint,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      resource,
      cacheSeconds: options.introspectionCacheSeconds,
      fetch: fetchFn,
      clock: options.clock,
      log,
    });
    const bearer = requireBearerAuth({ verifier, resourceMetadataUrl, expectedResource: publicUrl });
    const path = publicUrl.pathname;
    app.use(path, (request, response, next) => {
      // RFC 6750 §3.1: a request without credentials gets the challenge, but no error code.
      if (request.headers.authorization === undefined) {
        // With scopes, the challenge names the least a client needs to start (MCP: step up later).
        const scope = options.scopes ? ` scope="notes:read",` : '';
        response.status(401).set('WWW-Authenticate', `Bearer${scope} resource_metadata="${resourceMetadataUrl}"`).json({
          error: 'unauthorized',
          error_description: 'This MCP server needs an agentauth access token (Authorization: Bearer).',
        });
        return;
      }
      bearer(request, response, next);
    });
    if (options.scopes) {
      app.post(path, (request, response, next) => {
        const granted = request.auth?.scopes ?? [];
        const needed = missingScope(request.body, granted);
        if (needed === null) return next();
        // RFC 6750 §3.1: 403 insufficient_scope, naming the scope the request needs. The scopes
        // already granted are named too: MCP clients ask for exactly this scope when they step
        // up, and a new token with the new scope alone would lose the old ones.
        const scope = [...new Set([...granted.filter((each) => each in NOTE_SCOPES), needed])].join(' ');
        response
          .status(403)
          .set(
            'WWW-Authenticate',
            `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${resourceMetadataUrl}", error_description="This tool needs the scope ${needed}"`,
          )
          .json({ error: 'insufficient_scope', error_description: `This tool needs the scope ${needed}.` });
      });
    }

    // Stateless Streamable HTTP: every request carries its token and is verified on its own.
    app.post(path, async (request, response) => {
      const server = buildMcpServer(notes);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      response.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(request, response, request.body);
      } catch (error) {
        log(`MCP request failed: ${error instanceof Error ? error.message : String(error)}`);
        if (!response.headersSent)
          response
            .status(500)
            .json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
      }
    });
    // No server-to-client stream and no sessions in stateless mode.
    app.all(path, (_request, response) => {
      response
        .status(405)
        .set('Allow', 'POST')
        .json({
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Method not allowed (stateless server: POST only).' },
          id: null,
        });
    });

    httpServer.on('request', app);
    return {
      url: resource,
      resource,
      resourceMetadataUrl,
      close: () =>
        new Promise<void>((resolve) => {
          httpServer.closeAllConnections();
          httpServer.close(() => resolve());
        }),
    };
  } catch (error) {
    httpServer.close();
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// node --import tsx examples/mcp-server/server.ts: configured by the environment.

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required (see examples/mcp-server/README.md)`);
  return value;
}

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 8808);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be a port number (got "${process.env.PORT}")`);
  const cache = Number(process.env.INTROSPECTION_CACHE_SECONDS ?? 0);
  const issuer = required('AGENTAUTH_ISSUER');
  const server = await startMcpServer({
    issuer,
    clientId: required('AGENTAUTH_CLIENT_ID'),
    clientSecret: required('AGENTAUTH_CLIENT_SECRET'),
    port,
    host: process.env.HOST,
    publicUrl: process.env.MCP_PUBLIC_URL ?? `http://localhost:${port}/mcp`,
    introspectionCacheSeconds: cache,
    // MCP_SCOPES=off serves whoami alone, to any token for this resource.
    scopes: process.env.MCP_SCOPES !== 'off',
  });
  process.stdout.write(
    `Example MCP server on ${server.url} (tokens from ${issuer}; metadata at ${server.resourceMetadataUrl}). Ctrl-C stops it.\n`,
  );
  const stop = () => server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`example MCP server: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
