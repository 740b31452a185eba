/**
 * CORS for browser apps (docs/design.md §13, "CORS"), while CORS is on: one scope holding the
 * endpoints a browser app calls, with @fastify/cors deciding each request's headers from the table
 * below. Every other route of the scope (/introspect) opts out of the plugin, and everything
 * outside the scope (/authorize, the agent back channel, the management API, the console) never
 * meets it. No answer ever allows credentials: nothing here reads a cookie.
 */
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Context } from '../context.ts';
import { admitBrowserCall } from '../domain/browser-origins.ts';
import { clientCredentials } from '../domain/client-authentication.ts';

/**
 * From where a browser app may call an endpoint: any origin where the answer involves no
 * credential the browser holds for us (metadata, the key set, a bearer token it presents, a
 * registration), or only its client's origins where a code or refresh token is spent.
 */
type Origins = 'any' | 'client';

/** The endpoints a browser app calls, by route: from where, and with which methods. */
const BROWSER_ENDPOINTS: Readonly<Record<string, { origins: Origins; methods: string }>> = {
  '/.well-known/oauth-authorization-server': { origins: 'any', methods: 'GET' },
  '/.well-known/openid-configuration': { origins: 'any', methods: 'GET' },
  '/.well-known/jwks.json': { origins: 'any', methods: 'GET' },
  '/userinfo': { origins: 'any', methods: 'GET, POST' },
  '/register': { origins: 'any', methods: 'POST' },
  '/register/:client_id': { origins: 'any', methods: 'GET, PUT, DELETE' },
  '/token': { origins: 'client', methods: 'POST' },
  '/revoke': { origins: 'client', methods: 'POST' },
};

/**
 * What a browser may send beyond the CORS-safelisted headers: a bearer token or Basic
 * credentials, a JSON body, and the version header the MCP SDK sends to the metadata.
 */
const ALLOWED_HEADERS = 'Authorization, Content-Type, MCP-Protocol-Version';
/** What a browser app may read beyond the safelisted headers: the challenge of a 401, a 429's wait. */
const EXPOSED_HEADERS = 'WWW-Authenticate, Retry-After';
/** Seconds a browser keeps a preflight's answer: Chromium's ceiling (Firefox allows a day). */
const PREFLIGHT_MAX_AGE = 7200;

/** The route a request's path names, for a preflight, whose own route is the plugin's OPTIONS catch-all. */
function endpointOf(path: string): string {
  return /^\/register\/[^/]+$/.test(path) ? '/register/:client_id' : path;
}

/**
 * The CORS answer to one request. A preflight (OPTIONS with Origin and
 * Access-Control-Request-Method) is answered for any origin, since it carries no client_id; the
 * actual call to /token or /revoke is then admitted (admitBrowserCall) and answered for its
 * origin, or refused before its handler runs. A call without Origin (a server) gets no CORS
 * header there. Anything else is left alone (`origin: false`): an OPTIONS that is no preflight,
 * or an unknown path, is answered 404 as without CORS.
 */
async function corsAnswer(ctx: Context, request: FastifyRequest): Promise<FastifyCorsOptions> {
  const origin = request.headers.origin;
  const common = { exposedHeaders: EXPOSED_HEADERS, allowedHeaders: ALLOWED_HEADERS, maxAge: PREFLIGHT_MAX_AGE };
  if (request.method === 'OPTIONS') {
    const endpoint = BROWSER_ENDPOINTS[endpointOf(request.url.split('?')[0]!)];
    const preflight = origin !== undefined && request.headers['access-control-request-method'] !== undefined;
    return endpoint && preflight ? { ...common, origin: '*', methods: endpoint.methods } : { origin: false };
  }
  const endpoint = BROWSER_ENDPOINTS[request.routeOptions.url ?? ''];
  if (!endpoint) return { origin: false };
  if (endpoint.origins === 'any') return { ...common, origin: '*' };
  if (origin === undefined) return { origin: false };
  // The body is parsed (this runs at preValidation) but not yet checked: only strings name a client.
  const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<
    string,
    unknown
  >;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const credentials = clientCredentials(request.headers.authorization, {
    client_id: text(body.client_id),
    client_secret: text(body.client_secret),
  });
  await admitBrowserCall(ctx, credentials, origin);
  return { ...common, origin };
}

/**
 * Registers `routes` (the protocol's route plugins that hold the browser endpoints) in one scope
 * with CORS. The plugin runs at preValidation, once the body is parsed: /token and /revoke need
 * the client_id it carries to admit a browser's call before the handler runs.
 *
 * @example
 * if (ctx.config.cors) await app.register(browserEndpoints, { ctx, routes: [tokenRoutes, discoveryRoutes] });
 */
export const browserEndpoints: FastifyPluginAsync<{
  ctx: Context;
  routes: Array<(app: FastifyInstance, ctx: Context) => Promise<void>>;
}> = async (scope, { ctx, routes }) => {
  scope.addHook('onRoute', (route) => {
    // A route of the scope that no browser calls (/introspect) opts out of the plugin entirely.
    if (route.url !== '*' && !BROWSER_ENDPOINTS[route.url ?? '']) route.config = { ...route.config, cors: false };
  });
  await scope.register(cors, {
    hook: 'preValidation',
    delegator: (request: FastifyRequest) => corsAnswer(ctx, request),
  });
  for (const plugin of routes) await scope.register(plugin, ctx);
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /** @fastify/cors's per-route options; false: this route has no CORS. */
    cors?: false | FastifyCorsOptions;
  }
}
