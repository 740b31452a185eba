/**
 * Joining the console (docs/design.md §11): the first admin's setup link, invitations, open
 * sign-up, and the email verification link.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidField } from '../../errors.ts';
import { findAccount, signUp, usableLink, useSetupLink, verifyEmailWithLink } from '../../domain/accounts.ts';
import { recordConsoleEvent } from '../events.ts';
import { hasSignInMethod } from '../reauthentication.ts';
import { linkPage, messagePage, signUpPage } from '../pages/sign-in.ts';
import type { ConsoleScope, Form } from './scope.ts';

export function signUpRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;

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
  // An account that already has a way to sign in is recovering: the link is no proof of who is at
  // the keyboard, so the session is not fresh and may only set a new password (docs/design.md §11).
  scope.post<{ Params: { token: string } }>('/setup/:token', { preHandler: guard }, async (request, reply) => {
    const account = await useSetupLink(ctx, request.params.token);
    const recovery = await hasSignInMethod(ctx, account);
    await area.startSession(request, reply, account, recovery ? 'recovery' : 'link');
    return area.redirect(reply, `/console/account?notice=${recovery ? 'recovery' : 'welcome'}`);
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
    const inviter = link?.created_by ? await findAccount(ctx, link.created_by) : undefined;
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
      await area.startSession(request, reply, account, 'link');
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
    return area.redirect(reply, '/console/email-verified');
  });
  // Where the verification's 303 leads: it names no address, since anyone may open it.
  scope.get('/email-verified', async (_request, reply) =>
    area.send(
      reply,
      messagePage(await area.anonymousPage(reply), {
        title: 'Email verified',
        text: 'Your email address is verified. Websites your agents sign in to see it as verified.',
        link: { href: '/console', label: 'Go to the console' },
      }),
    ),
  );
}
