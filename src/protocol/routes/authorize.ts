/** GET and HEAD /authorize, GET /authorize/agent and POST /authorize/continue (docs/contract.md, docs/design.md §4). */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import type { AuthorizationRequestRecord } from '../../store/requests.ts';
import { authenticatedAgentFor, continueAuthorization } from '../../domain/authorization-request/continuation.ts';
import { redeemReturnTicket, returnTargetOf } from '../../domain/authorization-request/return-tickets.ts';
import { bindingCookieLifetime, startAuthorization } from '../../domain/authorization-request/state.ts';
import { type AuthorizeQuery, validateAuthorization } from '../../domain/authorization-request/validation.ts';
import { scopeDescriptions } from '../../domain/resource-scopes.ts';
import { authorizePage, confirmPage, flowErrorPage, waitingForOwnerText } from '../pages/authorize-page.ts';
import { pageHeaders } from '../../web/layout.ts';
import { browserCookie, formRoutes, refuseCrossSite, sendErrorPage } from '../../web/browser.ts';
import { Token } from '../../http/schemas.ts';

/** The query string as it came, still percent-encoded. */
const rawQuery = (request: FastifyRequest) => {
  const at = request.url.indexOf('?');
  return at < 0 ? '' : request.url.slice(at + 1);
};

const AgentQuery = Type.Object({ request_id: Token(128) });
/** A sealed ticket: a state of up to 2048 characters and a description, encrypted and base64url-encoded. */
const ReturnQuery = Type.Object({
  ticket: Type.String({ minLength: 1, maxLength: 12000, pattern: '^[A-Za-z0-9_.-]+$' }),
});

const ContinueBody = Type.Object({
  request_id: Token(128),
  action: Type.Optional(Type.Union([Type.Literal('approve'), Type.Literal('cancel')])),
  confirmed: Type.Optional(Type.String({ maxLength: 8 })),
});

export async function authorizeRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  // The browser binding (docs/design.md §4).
  const binding = browserCookie(ctx.config.baseUrl, 'agentauth_browser');
  const bindingOf = (request: FastifyRequest) => binding.read(request);
  const baseOrigin = new URL(ctx.config.baseUrl).origin;
  const { baseUrl } = ctx.config;
  /** The flow's error page, with the way back to the website where the error knows it. */
  const sendFlowError = (reply: FastifyReply, error: unknown) =>
    sendErrorPage(reply, error, (code, description) =>
      flowErrorPage({ baseUrl, error: code, description, back: returnTargetOf(error) }),
    );
  const expiresIn = (request: AuthorizationRequestRecord) => Math.max(0, request.expires_at - ctx.clock());

  /** The flood guard, then validation: what GET and HEAD share. */
  const validated = async (request: FastifyRequest) => {
    await ctx.authorizeLimit.take(request.ip);
    return validateAuthorization(ctx, request.query as AuthorizeQuery, rawQuery(request));
  };

  app.get('/authorize', { exposeHeadRoute: false }, async (request, reply) => {
    try {
      const valid = await validated(request);
      const { request: created, browserBinding } = await startAuthorization(ctx, valid, bindingOf(request));
      binding.set(reply, browserBinding, bindingCookieLifetime(ctx.config.requestTtl));
      return reply.headers(pageHeaders([new URL(valid.redirectUri).origin])).send(
        authorizePage({
          baseUrl,
          request: created,
          client: valid.client,
          expiresIn: expiresIn(created),
          scopeDescriptions: await scopeDescriptions(ctx, created.scope, created.resource),
        }),
      );
    } catch (error) {
      return sendFlowError(reply, error);
    }
  });

  // HEAD (link previews, prefetchers, monitors) answers what GET would, but starts nothing:
  // no request row, no cookie.
  app.head('/authorize', async (request, reply) => {
    try {
      const valid = await validated(request);
      return reply.headers(pageHeaders([new URL(valid.redirectUri).origin])).send();
    } catch (error) {
      return sendFlowError(reply, error);
    }
  });

  // "Back to <site>" on an error page: the ticket holds the error response (with the state, which
  // never appears in a page); the website and its redirect URI are checked again before the 302.
  app.get<{ Querystring: Static<typeof ReturnQuery> }>(
    '/authorize/return',
    { schema: { querystring: ReturnQuery }, attachValidation: true },
    async (request, reply) => {
      try {
        await ctx.authorizeLimit.take(request.ip);
        if (request.validationError) throw request.validationError;
        const location = await redeemReturnTicket(ctx, request.query.ticket);
        return reply.code(302).headers(pageHeaders()).header('location', location).send();
      } catch (error) {
        return sendFlowError(reply, error);
      }
    },
  );

  // The page's script asks which agent authenticated, to show it before the browser goes on.
  // Only the browser that started the request may ask (binding cookie).
  app.get<{ Querystring: Static<typeof AgentQuery> }>(
    '/authorize/agent',
    { schema: { querystring: AgentQuery } },
    async (request, reply) => {
      const view = await authenticatedAgentFor(ctx, request.query.request_id, bindingOf(request));
      return reply.header('cache-control', 'no-store').send(view);
    },
  );

  const renderFlowError = (code: string, description: string) => flowErrorPage({ baseUrl, error: code, description });
  await formRoutes(
    app,
    (scope) => {
      scope.post<{ Body: Static<typeof ContinueBody> }>(
        '/authorize/continue',
        {
          schema: { body: ContinueBody },
          attachValidation: true,
        },
        async (request, reply) => {
          try {
            // A post from another site is refused whatever it carries.
            refuseCrossSite(request, baseOrigin);
            if (request.validationError) throw request.validationError;
            const outcome = await continueAuthorization(
              ctx,
              {
                requestId: request.body.request_id,
                action: request.body.action ?? 'approve',
                confirmed: request.body.confirmed === '1',
              },
              bindingOf(request),
            );
            const formTarget = [
              new URL(outcome.kind === 'redirect' ? outcome.location : outcome.request.redirect_uri).origin,
            ];
            if (outcome.kind === 'redirect')
              return reply.code(302).headers(pageHeaders()).header('location', outcome.location).send();
            if (outcome.kind === 'confirm')
              return reply.headers(pageHeaders(formTarget)).send(confirmPage({ baseUrl, ...outcome }));
            // Held for the agent's owner (docs/design.md §16): say whose approval it waits for.
            const approval = outcome.request.approval_id
              ? await ctx.store.approvals.find(outcome.request.approval_id)
              : undefined;
            return reply.headers(pageHeaders(formTarget)).send(
              authorizePage({
                baseUrl,
                request: outcome.request,
                client: outcome.client,
                expiresIn: expiresIn(outcome.request),
                notice: approval
                  ? waitingForOwnerText(approval, outcome.client.name)
                  : 'Your agent has not authenticated yet. This page continues as soon as it has.',
                awaitingOwner: approval !== undefined,
                scopeDescriptions: await scopeDescriptions(ctx, outcome.request.scope, outcome.request.resource),
              }),
            );
          } catch (error) {
            return sendFlowError(reply, error);
          }
        },
      );
    },
    { render: renderFlowError },
  );
}
