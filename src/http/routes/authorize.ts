/** GET /authorize, POST /authorize/continue and the page's static assets (docs/contract.md, docs/design.md §4). */
import formbody from '@fastify/formbody';
import { type Static, Type } from '@sinclair/typebox';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import {
  authenticatedAgentFor,
  type AuthorizeQuery,
  continueAuthorization,
  startAuthorization,
  validateAuthorization,
} from '../../domain/authorization-request.ts';
import { OAuthError } from '../../protocol/errors.ts';
import { ASSETS } from '../../pages/assets.ts';
import { authorizePage, confirmPage } from '../../pages/authorize-page.ts';
import { errorPage } from '../../pages/error-page.ts';
import { pageHeaders } from '../../pages/layout.ts';
import { describeError } from '../errors.ts';
import { Token } from '../schemas.ts';

/** The browser binding cookie (docs/design.md §4); __Host- prefixed when served over https. */
export function bindingCookieName(baseUrl: string): string {
  return baseUrl.startsWith('https:') ? '__Host-agentauth_browser' : 'agentauth_browser';
}

function sendErrorPage(reply: FastifyReply, error: unknown): FastifyReply {
  const { status, headers, body, unexpected } = describeError(error);
  if (unexpected) reply.log.error({ err: error }, 'authorization page failed');
  return reply.code(status).headers({ ...pageHeaders(), ...headers }).send(errorPage(body.error, body.error_description));
}

/** The query string as it came, still percent-encoded. */
const rawQuery = (request: FastifyRequest) => {
  const at = request.url.indexOf('?');
  return at < 0 ? '' : request.url.slice(at + 1);
};

const AgentQuery = Type.Object({ request_id: Token(128) });

const ContinueBody = Type.Object({
  request_id: Token(128),
  action: Type.Optional(Type.Union([Type.Literal('approve'), Type.Literal('cancel')])),
  confirmed: Type.Optional(Type.String({ maxLength: 8 })),
});

export async function authorizeRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  // Only these routes use a cookie, so it is read here rather than by a hook on every request.
  const cookieName = bindingCookieName(ctx.config.baseUrl);
  const bindingOf = (request: FastifyRequest): string | undefined => {
    const header = request.headers.cookie;
    return header ? parseCookie(header)[cookieName] : undefined;
  };
  const secure = ctx.config.baseUrl.startsWith('https:');
  const baseOrigin = new URL(ctx.config.baseUrl).origin;

  /** The flood guard, then validation: what GET and HEAD share. */
  const validated = async (request: FastifyRequest) => {
    await ctx.authorizeLimit.take(request.ip);
    return validateAuthorization(ctx, request.query as AuthorizeQuery, rawQuery(request));
  };

  app.get('/authorize', { exposeHeadRoute: false }, async (request, reply) => {
    try {
      const valid = await validated(request);
      const { request: created, browserBinding } = await startAuthorization(ctx, valid, bindingOf(request));
      reply.header('set-cookie', stringifySetCookie({ name: cookieName, value: browserBinding, httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge: ctx.config.requestTtl }));
      return reply
        .headers(pageHeaders([new URL(valid.redirectUri).origin]))
        .send(authorizePage({ baseUrl: ctx.config.baseUrl, request: created, client: valid.client }));
    } catch (error) {
      return sendErrorPage(reply, error);
    }
  });

  // HEAD (link previews, prefetchers, monitors) answers what GET would, but starts nothing:
  // no request row, no cookie.
  app.head('/authorize', async (request, reply) => {
    try {
      const valid = await validated(request);
      return reply.headers(pageHeaders([new URL(valid.redirectUri).origin])).send();
    } catch (error) {
      return sendErrorPage(reply, error);
    }
  });

  // The page's script asks which agent authenticated, to show it before the browser goes on.
  // Only the browser that started the request may ask (binding cookie).
  app.get<{ Querystring: Static<typeof AgentQuery> }>('/authorize/agent', { schema: { querystring: AgentQuery } }, async (request, reply) => {
    const view = await authenticatedAgentFor(ctx, request.query.request_id, bindingOf(request));
    return reply.header('cache-control', 'no-store').send(view);
  });

  // The continue form is posted form-encoded by the browser; its parser lives only here.
  await app.register(async (scope) => {
    await scope.register(formbody);
    // A browser posted this form: whatever goes wrong, even before the handler (content type,
    // size, parsing), it gets the HTML error page rather than a JSON body.
    scope.setErrorHandler((error, _request, reply) => {
      void sendErrorPage(reply, error);
    });
    scope.post<{ Body: Static<typeof ContinueBody> }>('/authorize/continue', {
      schema: { body: ContinueBody },
      attachValidation: true,
    }, async (request, reply) => {
      try {
        // A post from another site is refused whatever it carries.
        refuseCrossSite(request, baseOrigin);
        if (request.validationError) throw request.validationError;
        const outcome = await continueAuthorization(
          ctx,
          { requestId: request.body.request_id, action: request.body.action ?? 'approve', confirmed: request.body.confirmed === '1' },
          bindingOf(request),
        );
        const formTarget = [new URL((outcome.kind === 'redirect' ? outcome.location : outcome.request.redirect_uri)).origin];
        if (outcome.kind === 'redirect') return reply.code(302).headers(pageHeaders()).header('location', outcome.location).send();
        if (outcome.kind === 'confirm') return reply.headers(pageHeaders(formTarget)).send(confirmPage(outcome));
        return reply.headers(pageHeaders(formTarget)).send(
          authorizePage({ baseUrl: ctx.config.baseUrl, request: outcome.request, client: outcome.client, notice: 'Your agent has not authenticated yet. This page continues as soon as it has.' }),
        );
      } catch (error) {
        return sendErrorPage(reply, error);
      }
    });
  });

  // Browsers ask for it on every page; there is none, and a 404 would be logged as a console error.
  app.get('/favicon.ico', async (_request, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());

  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    const asset = ASSETS.get(request.params.name);
    if (!asset) return reply.code(404).send({ error: 'not_found', error_description: 'No such asset.' });
    return reply.headers({ 'content-type': asset.type, 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' }).send(asset.body);
  });
}

class CrossSiteRequest extends OAuthError {
  readonly error = 'access_denied';
  override readonly statusCode = 403;
}

/**
 * The continue form may only be submitted from our own pages (login CSRF, cross-site
 * submission). A browser that says where a form post comes from must say it comes from us:
 * Sec-Fetch-Site same-origin, or an Origin equal to ours. Our pages send Referrer-Policy:
 * no-referrer, under which browsers post `Origin: null`, so null is not foreign by itself.
 * Where a browser says neither (plain http off localhost), the SameSite=Lax binding cookie,
 * which a cross-site post does not carry, is the defence.
 */
function refuseCrossSite(request: FastifyRequest, baseOrigin: string): void {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  const foreignSite = site !== undefined && site !== 'same-origin' && site !== 'none';
  const foreignOrigin = origin !== undefined && origin !== 'null' && origin !== baseOrigin;
  if (foreignSite || foreignOrigin) throw new CrossSiteRequest('The form was submitted from another site.');
}
