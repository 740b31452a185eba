/** Signing in to the console (a password or a passkey) and out (docs/design.md §11). */
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance } from 'fastify';
import type { AccountRecord } from '../../store/accounts.ts';
import { signInWithPassword } from '../password-sign-in.ts';
import { InvalidCredentials, TooManyRequests } from '../../errors.ts';
import { recordConsoleEvent } from '../events.ts';
import { authenticationOptions, signInWithPasskey } from '../passkeys.ts';
import { signInPage } from '../pages/sign-in.ts';
import { noAccountYet } from '../../domain/accounts.ts';
import { endSession } from '../sessions.ts';
import { safeNext } from '../next.ts';
import type { ConsoleScope, Form } from './scope.ts';

export function signInRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;

  scope.get<{ Querystring: Form }>('/sign-in', async (request, reply) => {
    if (request.signedIn) return area.redirect(reply, safeNext(request.query.next));
    return area.send(
      reply,
      signInPage(await area.anonymousPage(reply), {
        next: safeNext(request.query.next),
        signupOpen: ctx.config.consoleSignup === 'open',
        noAccountYet: await noAccountYet(ctx),
      }),
    );
  });

  scope.post<{ Body: Form }>('/sign-in', { preHandler: guard }, async (request, reply) => {
    const form = request.body ?? {};
    const next = safeNext(form.next);
    const again = async (status: number, message: string, headers: Record<string, string> = {}) =>
      area.send(
        reply.headers(headers),
        signInPage(await area.anonymousPage(reply), {
          values: { email: form.email },
          message,
          next,
          signupOpen: ctx.config.consoleSignup === 'open',
          noAccountYet: await noAccountYet(ctx),
        }),
        status,
      );
    let account: AccountRecord;
    try {
      account = await signInWithPassword(ctx, {
        email: form.email ?? '',
        password: form.password ?? '',
        ip: request.ip,
      });
    } catch (error) {
      if (!(error instanceof InvalidCredentials || error instanceof TooManyRequests)) throw error;
      return again(error.statusCode, error.description, error.headers);
    }
    await area.startSession(request, reply, account, 'password');
    return area.redirect(reply, next);
  });

  // Passkey sign-in: two JSON calls from console.js, each carrying the CSRF token in a header;
  // their errors are answered in the JSON shape by the scope (routes/index.ts).
  scope.post('/sign-in/passkey/options', { preHandler: guard }, async (request, reply) => {
    // Each call stores a challenge row: bounded per address like /authorize.
    await ctx.console.throttle.passkeyOptions.take(request.ip);
    const { challengeId, options } = await authenticationOptions(ctx);
    return reply.header('cache-control', 'no-store').send({ challengeId, options });
  });
  scope.post<{ Body: { challengeId?: unknown; response?: unknown; next?: unknown } }>(
    '/sign-in/passkey',
    { preHandler: guard, config: { webauthnResponse: true } },
    async (request, reply) => {
      const { challengeId, response, next } = request.body ?? {};
      if (typeof challengeId !== 'string' || typeof response !== 'object' || response === null)
        throw new InvalidCredentials('That passkey could not sign you in.');
      const account = await signInWithPasskey(ctx, challengeId, response as AuthenticationResponseJSON);
      await area.startSession(request, reply, account, 'passkey');
      return reply
        .header('cache-control', 'no-store')
        .send({ redirect: safeNext(typeof next === 'string' ? next : undefined) });
    },
  );

  scope.post('/sign-out', { preHandler: guard }, async (request, reply) => {
    if (request.signedIn) {
      await endSession(ctx, request.signedIn.account, request.signedIn.session.id);
      await recordConsoleEvent(
        ctx,
        request.signedIn.account,
        'account.sign_out',
        request.signedIn.account.id,
        request.ip,
      );
    }
    area.session.set(reply, '', 0);
    return area.redirect(reply, '/console/sign-in');
  });
}
