/**
 * Signing in and out of the console, sign-up, and the one-time links (setup, invitation, email
 * verification) (docs/design.md §11).
 */
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountRecord, SignInMethod } from '../../store/console-types.ts';
import { signInWithPassword, signUp, usableLink, useSetupLink, verifyEmailWithLink } from '../accounts.ts';
import { InvalidCredentials, InvalidField, TooManyRequests } from '../../errors.ts';
import { recordConsoleEvent } from '../events.ts';
import { authenticationOptions, signInWithPasskey } from '../passkeys.ts';
import { linkPage, messagePage, signInPage, signUpPage } from '../pages/sign-in.ts';
import { safeNext } from '../next.ts';
import { startSession } from '../sessions.ts';
import type { ConsoleScope, Form } from './scope.ts';

export function signInRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;
  const caller = (request: FastifyRequest) => ({ ip: request.ip, userAgent: request.headers['user-agent'] });

  /** Starts the session, sets its cookie and records the sign-in. */
  const signIn = async (request: FastifyRequest, reply: FastifyReply, account: AccountRecord, method: SignInMethod) => {
    // A session cookie from before (someone else's on a shared computer) is replaced, not kept.
    const value = await startSession(ctx, account, method, caller(request));
    area.session.set(reply, value, ctx.config.consoleSessionLifetime);
    await recordConsoleEvent(ctx, account, 'account.sign_in', account.id, request.ip, method);
  };

  scope.get<{ Querystring: Form }>('/sign-in', async (request, reply) => {
    if (request.signedIn) return area.redirect(reply, safeNext(request.query.next));
    return area.send(
      reply,
      signInPage(await area.anonymousPage(reply), {
        next: safeNext(request.query.next),
        signupOpen: ctx.config.consoleSignup === 'open',
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
    await signIn(request, reply, account, 'password');
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
      await signIn(request, reply, account, 'passkey');
      return reply
        .header('cache-control', 'no-store')
        .send({ redirect: safeNext(typeof next === 'string' ? next : undefined) });
    },
  );

  scope.post('/sign-out', { preHandler: guard }, async (request, reply) => {
    if (request.signedIn) {
      await ctx.store.console.deleteSession(request.signedIn.session.id, request.signedIn.account.id);
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

  // The first admin's setup link (from the CLI) signs them in once; they add a passkey or a password next.
  scope.get<{ Params: { token: string } }>('/setup/:token', async (request, reply) => {
    await usableLink(ctx, request.params.token, 'setup');
    return area.send(
      reply,
      linkPage(await area.anonymousPage(reply), {
        title: 'Set up your account',
        text: 'This link signs you in to the agentauth console once. Next you add a passkey or a password, to sign in again later.',
        action: `/console/setup/${request.params.token}`,
        button: 'Continue',
      }),
    );
  });
  scope.post<{ Params: { token: string } }>('/setup/:token', { preHandler: guard }, async (request, reply) => {
    const account = await useSetupLink(ctx, request.params.token);
    await signIn(request, reply, account, 'link');
    return area.redirect(reply, '/console/account?notice=welcome');
  });

  // Sign-up: by invitation (CONSOLE_SIGNUP=invite or open), or open (CONSOLE_SIGNUP=open).
  const signUpClosed = async (reply: FastifyReply) =>
    area.send(
      reply,
      messagePage(await area.anonymousPage(reply), {
        title: 'Sign-up is closed',
        text: 'New accounts on this server are created by its administrators.',
      }),
      403,
    );
  const signUpAllowed = (token: string | null) =>
    ctx.config.consoleSignup === 'open' || (token !== null && ctx.config.consoleSignup === 'invite');
  const signUpForm = async (request: FastifyRequest, reply: FastifyReply, token: string | null) => {
    if (!signUpAllowed(token)) return signUpClosed(reply);
    const link = token === null ? null : await usableLink(ctx, token, 'invite');
    const inviter = link?.created_by ? await ctx.store.console.findAccount(link.created_by) : undefined;
    return area.send(
      reply,
      signUpPage(await area.anonymousPage(reply), {
        action: request.url.split('?')[0]!,
        invitedBy: inviter ? (inviter.name ?? inviter.email) : null,
      }),
    );
  };
  const signUpSubmit = async (request: FastifyRequest<{ Body: Form }>, reply: FastifyReply, token: string | null) => {
    if (!signUpAllowed(token)) return signUpClosed(reply);
    const form = request.body ?? {};
    try {
      const account = await signUp(ctx, token, {
        email: form.email ?? '',
        name: form.name,
        password: form.password || undefined,
      });
      await recordConsoleEvent(ctx, account, 'account.sign_up', account.id, request.ip, token ? 'invitation' : 'open');
      await signIn(request, reply, account, 'link');
      return area.redirect(reply, '/console/account?notice=welcome');
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return area.send(
        reply,
        signUpPage(await area.anonymousPage(reply), {
          action: request.url.split('?')[0]!,
          values: { email: form.email, name: form.name },
          errors: { [error.field]: error.description },
        }),
        400,
      );
    }
  };
  scope.get<{ Params: { token: string } }>('/invitation/:token', (request, reply) =>
    signUpForm(request, reply, request.params.token),
  );
  scope.post<{ Params: { token: string }; Body: Form }>('/invitation/:token', { preHandler: guard }, (request, reply) =>
    signUpSubmit(request, reply, request.params.token),
  );
  scope.get('/sign-up', (request, reply) => signUpForm(request, reply, null));
  scope.post<{ Body: Form }>('/sign-up', { preHandler: guard }, (request, reply) => signUpSubmit(request, reply, null));

  // Email verification: the link from the mail, confirmed with a button.
  scope.get<{ Params: { token: string } }>('/verify-email/:token', async (request, reply) => {
    await usableLink(ctx, request.params.token, 'verify');
    return area.send(
      reply,
      linkPage(await area.anonymousPage(reply), {
        title: 'Verify your email',
        text: 'Confirm that this email address is yours. Websites your agents sign in to will then see it as verified.',
        action: `/console/verify-email/${request.params.token}`,
        button: 'Verify my email',
      }),
    );
  });
  scope.post<{ Params: { token: string } }>('/verify-email/:token', { preHandler: guard }, async (request, reply) => {
    const account = await verifyEmailWithLink(ctx, request.params.token);
    await recordConsoleEvent(ctx, account, 'account.verify_email', account.id, request.ip, 'link');
    return area.send(
      reply,
      messagePage(await area.anonymousPage(reply), {
        title: 'Email verified',
        text: `${account.email} is verified.`,
        link: { href: '/console', label: 'Go to the console' },
      }),
    );
  });
}
