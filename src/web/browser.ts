/**
 * What every HTML feature shares (the authorization page and the console): cookies, the
 * cross-site check of form posts, CSRF tokens, the HTML error page, and a scope for
 * form-posted routes. JSON endpoints use none of it.
 */
import fastifyCookie from '@fastify/cookie';
import csrfProtection from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { errorPage } from './error-page.ts';
import { pageHeaders } from './layout.ts';
import { AccessDenied } from '../errors.ts';
import { describeError } from '../http/errors.ts';

/** A cookie of ours: HttpOnly, SameSite=Lax, Path=/; `__Host-` prefixed and Secure under https. */
export interface BrowserCookie {
  readonly name: string;
  /** Its value in this request, if the browser sent it. */
  read(request: FastifyRequest): string | undefined;
  /** Sets it on the reply for `maxAge` seconds. */
  set(reply: FastifyReply, value: string, maxAge: number): void;
}

/**
 * @example
 * const binding = browserCookie('https://id.example', 'agentauth_browser');
 * binding.name;                       // '__Host-agentauth_browser'
 * binding.set(reply, value, 600);     // Set-Cookie: __Host-agentauth_browser=…; Max-Age=600; Path=/; HttpOnly; Secure; SameSite=Lax
 * binding.read(request);              // the value, or undefined
 */
export function browserCookie(baseUrl: string, name: string): BrowserCookie {
  const secure = baseUrl.startsWith('https:');
  const fullName = secure ? `__Host-${name}` : name;
  return {
    name: fullName,
    // Read where it is needed rather than parsed by a hook on every request.
    read: (request) => {
      const header = request.headers.cookie;
      return header ? parseCookie(header)[fullName] : undefined;
    },
    set: (reply, value, maxAge) => {
      reply.header(
        'set-cookie',
        stringifySetCookie({ name: fullName, value, httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge }),
      );
    },
  };
}

/**
 * Our forms may only be submitted from our own pages (login CSRF, cross-site submission). A
 * browser that says where a form post comes from must say it comes from us: Sec-Fetch-Site
 * same-origin, or an Origin equal to ours. Our pages send Referrer-Policy: no-referrer, under
 * which browsers post `Origin: null`, so null is not foreign by itself. Where a browser says
 * neither (plain http off localhost), SameSite=Lax cookies, which a cross-site post does not
 * carry, are the defence.
 *
 * @example
 * refuseCrossSite(request, 'https://id.example'); // throws AccessDenied (403) for Sec-Fetch-Site: cross-site
 */
export function refuseCrossSite(request: FastifyRequest, baseOrigin: string): void {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  const foreignSite = site !== undefined && site !== 'same-origin' && site !== 'none';
  const foreignOrigin = origin !== undefined && origin !== 'null' && origin !== baseOrigin;
  if (foreignSite || foreignOrigin) throw new AccessDenied('The form was submitted from another site.');
}

/**
 * Answers any error as the HTML error page (with its status and headers, such as Retry-After),
 * for people rather than programs.
 *
 * @example
 * try { … } catch (error) { return sendErrorPage(reply, error); }
 */
export function sendErrorPage(
  reply: FastifyReply,
  error: unknown,
  render: ErrorPageRenderer = errorPage,
): FastifyReply {
  const { status, headers, body, unexpected } = describeError(error);
  if (unexpected) reply.log.error({ err: error }, 'page failed');
  return reply
    .code(status)
    .headers({ ...pageHeaders(), ...headers })
    .send(render(body.error, body.error_description, status));
}

/** Renders an error as a page: the authorization page's by default, the console's in the console. */
export type ErrorPageRenderer = (error: string, description: string, status: number) => string;

/**
 * Registers routes that browsers post forms to, in a scope of their own: the form parser lives
 * only there, and whatever goes wrong, even before a handler runs (content type, size,
 * parsing), answers the HTML error page rather than a JSON body.
 *
 * @example
 * await formRoutes(app, (scope) => scope.post('/authorize/continue', handler));
 */
export async function formRoutes(
  app: FastifyInstance,
  routes: (scope: FastifyInstance) => void | Promise<void>,
  options: {
    prefix?: string;
    render?: ErrorPageRenderer;
    /** Answers an error itself (a redirect to sign in) and returns true, or leaves it to the page. */
    intercept?: (error: unknown, request: FastifyRequest, reply: FastifyReply) => boolean;
  } = {},
): Promise<void> {
  await app.register(
    async (scope) => {
      await scope.register(formbody);
      scope.setErrorHandler((error, request, reply) => {
        if (options.intercept?.(error, request, reply)) return;
        void sendErrorPage(reply, error, options.render);
      });
      await routes(scope);
    },
    { prefix: options.prefix ?? '' },
  );
}

/**
 * CSRF tokens (@fastify/csrf-protection, double-submit: a secret in an HttpOnly cookie of ours,
 * the token in each form or in an x-csrf-token header) for the scope it is called in, and the
 * preHandler that every state-changing route of the scope runs: first the cross-site check, then
 * the token. A missing or wrong token answers 403 (describeError).
 *
 * @example
 * const guard = await csrfTokens(scope, ctx.config.baseUrl);
 * scope.get('/form', (request, reply) => page(await reply.generateCsrf()));
 * scope.post('/form', { preHandler: guard }, handler);
 */
export async function csrfTokens(scope: FastifyInstance, baseUrl: string): Promise<preHandlerHookHandler> {
  const secure = baseUrl.startsWith('https:');
  const baseOrigin = new URL(baseUrl).origin;
  await scope.register(fastifyCookie);
  await scope.register(csrfProtection, {
    cookieKey: browserCookie(baseUrl, 'agentauth_csrf').name,
    cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true, secure },
  });
  return function guard(this: FastifyInstance, request, reply, done) {
    try {
      refuseCrossSite(request, baseOrigin);
    } catch (error) {
      done(error as Error);
      return;
    }
    scope.csrfProtection(request, reply, done);
  };
}

/**
 * A parsed form or query with every field a single string: a field sent twice arrives as an
 * array, and is dropped (undefined), so a handler can read any field as `string | undefined`.
 *
 * @example
 * singleValues({ name: 'Ada', role: ['a', 'b'] }) // { name: 'Ada' }
 */
export function singleValues(fields: unknown): Record<string, string | undefined> {
  if (fields === null || typeof fields !== 'object') return {};
  return Object.fromEntries(
    Object.entries(fields).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}
