/**
 * "Confirm it is you" (docs/design.md §11): a password or one of the account's passkeys, asked
 * for before a sign-in method is added or removed.
 */
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidField, TooManyRequests } from '../../errors.ts';
import { safeNext } from '../next.ts';
import { confirmPage } from '../pages/account.ts';
import { passkeyAnswerOf, reauthenticationOptions } from '../passkeys.ts';
import { confirmWithOwnPasskey, confirmWithPassword } from '../reauthentication.ts';
import type { ConsoleScope, Form } from './scope.ts';

export function confirmRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;

  const showConfirm = async (
    request: FastifyRequest,
    reply: FastifyReply,
    next: string,
    errors: Record<string, string> = {},
    status = 200,
  ) => {
    const page = await area.page(request, reply);
    const passkeys = await ctx.store.passkeys.list(page.account.id);
    return area.send(
      reply,
      confirmPage(page, {
        hasPassword: page.account.password_hash !== null,
        hasPasskey: passkeys.length > 0,
        next,
        errors,
      }),
      status,
    );
  };
  scope.get<{ Querystring: Form }>('/account/confirm', (request, reply) =>
    showConfirm(request, reply, safeNext(request.query.next ?? '/console/account')),
  );
  scope.post<{ Body: Form }>('/account/confirm', { preHandler: guard }, async (request, reply) => {
    area.account(request);
    const next = safeNext(request.body?.next ?? '/console/account');
    try {
      await confirmWithPassword(ctx, request.signedIn!, request.body?.password ?? '', request.ip);
    } catch (error) {
      if (error instanceof InvalidField) return showConfirm(request, reply, next, { password: error.description }, 401);
      if (error instanceof TooManyRequests)
        return showConfirm(request, reply.headers(error.headers), next, { password: error.description }, 429);
      throw error;
    }
    return area.redirect(reply, next);
  });
  scope.post('/account/confirm/passkey/options', { preHandler: guard }, async (request, reply) => {
    const account = area.account(request);
    return reply.header('cache-control', 'no-store').send(await reauthenticationOptions(ctx, account));
  });
  scope.post<{ Body: { challengeId?: unknown; response?: unknown; next?: unknown } }>(
    '/account/confirm/passkey',
    { preHandler: guard, config: { webauthnResponse: true } },
    async (request, reply) => {
      area.account(request);
      const { challengeId, response } = passkeyAnswerOf<AuthenticationResponseJSON>(request.body);
      const next = request.body?.next;
      await confirmWithOwnPasskey(ctx, request.signedIn!, challengeId, response, request.ip);
      return reply
        .header('cache-control', 'no-store')
        .send({ redirect: safeNext(typeof next === 'string' ? next : '/console/account') });
    },
  );
}
