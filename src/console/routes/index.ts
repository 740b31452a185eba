/**
 * The console under /console (docs/design.md §11): one scope with its cookies, CSRF tokens,
 * form parser, HTML errors and the session of each request, and the routes of each area.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import { browserCookie, csrfTokens, formRoutes, sendErrorPage, singleValues } from '../../web/browser.ts';
import { describeError } from '../../http/errors.ts';
import type { RouterErrorPage } from '../../http/server.ts';
import { pageHeaders } from '../../web/layout.ts';
import { InsufficientUserAuthentication, LoginRequired } from '../../errors.ts';
import { consoleErrorPage } from '../pages/error.ts';
import { recordConsoleEvent } from '../events.ts';
import { leaveFlash, takeFlash } from '../flash.ts';
import { currentSession, startSession } from '../sessions.ts';
import { actingAs } from '../../domain/webhooks/actor.ts';
import { consoleActor } from '../../management/actor.ts';
import { accountRoutes } from './account.ts';
import { apiKeyRoutes } from './api-keys.ts';
import { webhookRoutes } from './webhooks.ts';
import { confirmRoutes } from './confirm.ts';
import { adminRoutes } from './admin.ts';
import { agentRoutes } from './agents.ts';
import { signInRoutes } from './sign-in.ts';
import { signUpRoutes } from './sign-up.ts';
import { type ConsoleScope, redirectTo } from './scope.ts';
import { clientRoutes } from './clients.ts';
import { approvalRoutes } from './approvals.ts';
import { approvalsVersion, pendingApprovals } from '../approvals.ts';

export async function consoleRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  const session = browserCookie(ctx.config.baseUrl, 'agentauth_console');
  await formRoutes(
    app,
    async (scope) => {
      const guard = await csrfTokens(scope, ctx.config.baseUrl);
      scope.decorateRequest('signedIn', null);
      // Every field of a console form, query or JSON body is one string (or absent), whatever was
      // sent: an array or an object never reaches a rule (.trim(), argon2). The one exception is
      // the authenticator's answer of a passkey ceremony, an object by nature.
      scope.addHook('preValidation', (request, _reply, done) => {
        request.query = singleValues(request.query);
        const response = (request.body as { response?: unknown } | null | undefined)?.response;
        const keepResponse =
          request.routeOptions.config.webauthnResponse === true &&
          typeof response === 'object' &&
          response !== null &&
          !Array.isArray(response);
        request.body = { ...singleValues(request.body), ...(keepResponse ? { response } : {}) };
        done();
      });
      scope.addHook('preHandler', async (request) => {
        request.signedIn = await currentSession(ctx, session.read(request));
      });
      // What the signed-in person changes of their own account (sign-in methods, sessions) is
      // announced as theirs (webhook events' actor); a management operation names its actor
      // itself. A callback hook, so the rest of the request (later hooks, the handler) runs inside it.
      scope.addHook('preHandler', (request, _reply, done) => {
        const account = request.signedIn?.account;
        if (!account) return done();
        actingAs({ type: 'account', id: account.id, email: account.email }, done);
      });
      scope.setNotFoundHandler((_request, reply) => {
        void reply
          .code(404)
          .headers(pageHeaders())
          .send(consoleErrorPage('not_found', 'There is no such page in the console.', 404));
      });

      const send = (reply: FastifyReply, body: string, status = 200) =>
        reply.code(status).headers(pageHeaders()).send(body);
      const account = (request: FastifyRequest) => {
        if (!request.signedIn) throw new LoginRequired('Sign in to the console first.');
        return request.signedIn.account;
      };
      const area: ConsoleScope = {
        ctx,
        guard,
        session,
        account,
        actor: (request) =>
          consoleActor(account(request), request.ip, {
            authenticatedAt: request.signedIn!.session.authenticated_at,
            log: request.log,
          }),
        page: async (request, reply) => {
          const signedIn = account(request);
          const [csrf, waiting] = await Promise.all([reply.generateCsrf(), pendingApprovals(ctx, signedIn)]);
          return {
            account: signedIn,
            csrf,
            pendingApprovals: { count: waiting.length, version: approvalsVersion(waiting) },
          };
        },
        anonymousPage: async (reply) => ({ account: null, csrf: await reply.generateCsrf() }),
        send,
        redirect: redirectTo,
        redirectOnce: async (request, reply, path, value) => {
          account(request);
          await leaveFlash(ctx, request.signedIn!.session.id, path, value);
          return redirectTo(reply, path);
        },
        takeOnce: async <T>(request: FastifyRequest, path: string) => {
          account(request);
          // A HEAD (a link checker, a prefetch) shows nothing, so it must not spend the one showing.
          if (request.method !== 'GET') return null;
          return takeFlash<T>(ctx, request.signedIn!.session.id, path);
        },
        startSession: async (request, reply, account, method) => {
          const caller = { ip: request.ip, userAgent: request.headers['user-agent'] };
          area.session.set(reply, await startSession(ctx, account, method, caller), ctx.config.consoleSessionLifetime);
          await recordConsoleEvent(ctx, account, 'account.sign_in', account.id, request.ip, method);
        },
      };
      signInRoutes(scope, area);
      signUpRoutes(scope, area);
      accountRoutes(scope, area);
      confirmRoutes(scope, area);
      agentRoutes(scope, area);
      approvalRoutes(scope, area);
      clientRoutes(scope, area);
      apiKeyRoutes(scope, area);
      adminRoutes(scope, area);
      webhookRoutes(scope, area);
    },
    {
      prefix: '/console',
      render: consoleErrorPage,
      intercept: (error, request, reply) => {
        // console.js's calls (passkeys) are JSON and get their errors in the JSON shape.
        if (request.headers['content-type']?.startsWith('application/json')) {
          const { status, headers, body, unexpected } = describeError(error);
          if (unexpected) request.log.error({ err: error }, 'console call failed');
          void reply
            .code(status)
            .headers({ 'cache-control': 'no-store', ...headers })
            .send(body);
          return true;
        }
        // A change to how someone signs in (a sign-in method, a new credential), without a recent
        // proof: confirm first, then back to the page the action is on (the route's
        // confirmReturnsTo, else the account page) to do it again.
        if (error instanceof InsufficientUserAuthentication) {
          const back = request.routeOptions.config.confirmReturnsTo ?? '/console/account';
          void redirectTo(reply, `/console/account/confirm?next=${encodeURIComponent(back)}`);
          return true;
        }
        // A page that needs a session, without one: sign in first, then come back.
        if (!(error instanceof LoginRequired)) return false;
        void redirectTo(
          reply,
          request.method === 'GET' ? `/console/sign-in?next=${encodeURIComponent(request.url)}` : '/console/sign-in',
        );
        return true;
      },
    },
  );
}

/** An error of the router under /console (a malformed or over-long path): the console's error page. */
export const consoleRouterErrorPage: RouterErrorPage = (error, request, reply) => {
  if (!request.url.startsWith('/console')) return false;
  void sendErrorPage(reply, error, consoleErrorPage);
  return true;
};
