/** The overview and the signed-in person's own account: profile, passkeys, password, sessions, invitations and their unused links. */
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidField } from '../../errors.ts';
import type { AccountRecord } from '../../store/accounts.ts';
import { removePassword, rename, sendVerificationEmail, setPassword } from '../../domain/accounts.ts';
import { pendingApprovals } from '../approvals.ts';
import { recordConsoleEvent } from '../events.ts';
import { outstandingLinks, revokeOutstandingLink } from '../../domain/account-links.ts';
import { accountPage, overviewPage } from '../pages/account.ts';
import { noticeFor } from '../pages/shell.ts';
import {
  listPasskeys,
  passkeyAnswerOf,
  registerPasskey,
  registrationOptions,
  removePasskey,
  renamePasskey,
} from '../passkeys.ts';
import {
  confirmWithPassword,
  notifySignInMethodChange,
  recovering,
  requireFreshAuthentication,
} from '../reauthentication.ts';
import { endSession, endSessions, listSessions } from '../sessions.ts';
import type { ConsoleScope, Form } from './scope.ts';
import { listAgents } from '../../management/agents.ts';
import { listClients } from '../../management/clients.ts';
import { anySignIn } from '../../management/history.ts';
import { createInvitation } from '../../management/accounts.ts';
import { listApiKeys, revokeOwnApiKeys } from '../../management/api-keys.ts';

/** Where a new invitation link is shown, once. */
const INVITATION_PATH = '/console/account/invitation';

export function accountRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;
  const canInvite = ctx.config.consoleSignup !== 'closed';

  scope.get<{ Querystring: Form }>('/', async (request, reply) => {
    const page = await area.page(request, reply);
    const own = { accountId: page.account.id };
    const [agents, websites, passkeys, waiting] = await Promise.all([
      listAgents(ctx, area.actor(request), own),
      listClients(ctx, area.actor(request), own),
      listPasskeys(ctx, page.account),
      pendingApprovals(ctx, page.account),
    ]);
    return area.send(
      reply,
      overviewPage(page, {
        agents,
        websites,
        signedInOnce: await anySignIn(ctx, websites),
        hasCredential: passkeys.length > 0 || page.account.password_hash !== null,
        issuer: ctx.config.baseUrl,
        notice: noticeFor(request.query.notice),
        waiting,
        now: ctx.clock(),
      }),
    );
  });

  /** The account page, with a notice, field errors or a fresh invitation link. */
  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    extra: { notice?: string; errors?: Record<string, string>; invitation?: { url: string; expiresAt: number } } = {},
    status = 200,
  ) => {
    const page = await area.page(request, reply);
    const [passkeys, sessions, links, apiKeys] = await Promise.all([
      listPasskeys(ctx, page.account),
      listSessions(ctx, page.account),
      outstandingLinks(ctx, page.account.id),
      listApiKeys(ctx, area.actor(request), { accountId: page.account.id }),
    ]);
    return area.send(
      reply,
      accountPage(page, {
        passkeys,
        sessions,
        currentSessionId: request.signedIn!.session.id,
        canMail: ctx.mailer !== null,
        canInvite,
        notice: noticeFor(extra.notice),
        errors: extra.errors,
        invitation: extra.invitation,
        links,
        apiKeys,
        now: ctx.clock(),
      }),
      status,
    );
  };
  /** Runs a form's action; an InvalidField shows the page again with the message beside its field. */
  const act = async (request: FastifyRequest, reply: FastifyReply, action: () => Promise<string>) => {
    try {
      return area.redirect(reply, `/console/account?notice=${await action()}`);
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return show(request, reply, { errors: { [error.field]: error.description } }, 400);
    }
  };

  /** Mails the owner about a change to how they sign in (where SMTP is configured). */
  const tellOwner = (request: FastifyRequest, account: AccountRecord, change: string) =>
    notifySignInMethodChange(ctx, account, change, request.ip, (error) =>
      request.log.warn({ err: error }, 'the mail about a sign-in method change could not be sent'),
    );

  scope.get<{ Querystring: Form }>('/account', (request, reply) =>
    show(request, reply, { notice: request.query.notice }),
  );

  scope.post<{ Body: Form }>('/account/name', { preHandler: guard }, (request, reply) =>
    act(request, reply, async () => {
      const account = area.account(request);
      await rename(ctx, account, request.body?.name ?? '');
      await recordConsoleEvent(ctx, account, 'account.rename', account.id, request.ip);
      return 'name_saved';
    }),
  );

  scope.post<{ Body: Form }>('/account/password', { preHandler: guard }, (request, reply) =>
    act(request, reply, async () => {
      const account = area.account(request);
      const hadPassword = account.password_hash !== null;
      const recovery = recovering(ctx, request.signedIn!);
      // Changing a password needs the current one (which is a fresh authentication, throttled as
      // a sign-in); setting a first one needs a fresh authentication by passkey. A recovery
      // link's session sets a new one without either: that is what the link is for.
      if (!recovery && hadPassword) {
        try {
          await confirmWithPassword(ctx, request.signedIn!, request.body?.current_password ?? '', request.ip);
        } catch (error) {
          if (error instanceof InvalidField)
            throw new InvalidField('current_password', 'The current password is wrong.');
          throw error;
        }
      } else if (!recovery) {
        await requireFreshAuthentication(ctx, request.signedIn!);
      }
      await setPassword(ctx, account, request.body?.password ?? '');
      await recordConsoleEvent(
        ctx,
        account,
        'account.set_password',
        account.id,
        request.ip,
        recovery ? 'recovery' : null,
      );
      await tellOwner(
        request,
        account,
        `${hadPassword ? 'Your password was changed' : 'A password was set'}${recovery ? ' after signing in with a setup link' : ''}`,
      );
      return 'password_saved';
    }),
  );

  scope.post('/account/password/remove', { preHandler: guard }, (request, reply) =>
    act(request, reply, async () => {
      const account = area.account(request);
      await requireFreshAuthentication(ctx, request.signedIn!);
      await removePassword(ctx, account);
      await recordConsoleEvent(ctx, account, 'account.remove_password', account.id, request.ip);
      await tellOwner(request, account, 'Your password was removed');
      return 'password_removed';
    }),
  );

  scope.post('/account/verify-email', { preHandler: guard }, (request, reply) =>
    act(request, reply, async () => {
      const account = area.account(request);
      if (!(await sendVerificationEmail(ctx, account)))
        throw new InvalidField('email', 'This server sends no mail; ask an administrator to verify your email.');
      await recordConsoleEvent(ctx, account, 'account.send_verification', account.id, request.ip);
      return 'verification_sent';
    }),
  );

  // Passkey registration: two JSON calls from console.js, with the CSRF token in a header; their
  // errors are answered in the JSON shape by the scope (routes/index.ts).
  scope.post('/account/passkeys/options', { preHandler: guard }, async (request, reply) => {
    const account = area.account(request);
    await requireFreshAuthentication(ctx, request.signedIn!);
    return reply.header('cache-control', 'no-store').send(await registrationOptions(ctx, account));
  });
  scope.post<{ Body: { challengeId?: unknown; response?: unknown; name?: unknown } }>(
    '/account/passkeys',
    { preHandler: guard, config: { webauthnResponse: true } },
    async (request, reply) => {
      const account = area.account(request);
      await requireFreshAuthentication(ctx, request.signedIn!);
      const { challengeId, response } = passkeyAnswerOf<RegistrationResponseJSON>(request.body);
      const name = request.body?.name;
      const passkey = await registerPasskey(
        ctx,
        account,
        challengeId,
        response,
        typeof name === 'string' ? name : undefined,
      );
      await recordConsoleEvent(ctx, account, 'account.add_passkey', account.id, request.ip, passkey.name);
      await tellOwner(request, account, `A passkey named ${JSON.stringify(passkey.name)} was added`);
      return reply.header('cache-control', 'no-store').send({ redirect: '/console/account?notice=passkey_added' });
    },
  );
  scope.post<{ Params: { id: string }; Body: Form }>(
    '/account/passkeys/:id/rename',
    { preHandler: guard },
    (request, reply) =>
      act(request, reply, async () => {
        const account = area.account(request);
        await renamePasskey(ctx, account, request.params.id, request.body?.name ?? '');
        await recordConsoleEvent(ctx, account, 'account.rename_passkey', account.id, request.ip);
        return 'passkey_renamed';
      }),
  );
  scope.post<{ Params: { id: string } }>('/account/passkeys/:id/remove', { preHandler: guard }, (request, reply) =>
    act(request, reply, async () => {
      const account = area.account(request);
      await requireFreshAuthentication(ctx, request.signedIn!);
      const removed = await removePasskey(ctx, account, request.params.id);
      await recordConsoleEvent(ctx, account, 'account.remove_passkey', account.id, request.ip, removed.name);
      await tellOwner(request, account, `The passkey named ${JSON.stringify(removed.name)} was removed`);
      return 'passkey_removed';
    }),
  );

  scope.post<{ Params: { id: string } }>('/account/sessions/:id/end', { preHandler: guard }, (request, reply) =>
    act(request, reply, async () => {
      const account = area.account(request);
      await endSession(ctx, account, request.params.id);
      await recordConsoleEvent(ctx, account, 'account.end_session', account.id, request.ip);
      return 'session_ended';
    }),
  );
  scope.post('/account/sessions/end-others', { preHandler: guard }, (request, reply) =>
    act(request, reply, async () => {
      const account = area.account(request);
      await endSessions(ctx, account, request.signedIn!.session.id);
      await recordConsoleEvent(ctx, account, 'account.end_other_sessions', account.id, request.ip);
      return 'sessions_ended';
    }),
  );
  // Sign out everywhere, and with "api_keys" checked revoke the account's API keys too: a key
  // outlives every session, so one made by a stolen session would survive this otherwise.
  scope.post<{ Body: Form }>('/account/sessions/end-all', { preHandler: guard }, async (request, reply) => {
    const account = area.account(request);
    if (request.body?.api_keys === 'revoke') await revokeOwnApiKeys(ctx, area.actor(request));
    await endSessions(ctx, account);
    await recordConsoleEvent(ctx, account, 'account.end_all_sessions', account.id, request.ip);
    area.session.set(reply, '', 0);
    return area.redirect(reply, '/console/sign-in');
  });

  scope.post('/account/invitations', { preHandler: guard }, async (request, reply) => {
    if (!canInvite) return show(request, reply, { errors: {} }, 403);
    const invitation = await createInvitation(ctx, area.actor(request));
    return area.redirectOnce(request, reply, INVITATION_PATH, invitation);
  });
  // The new invitation link, once; a reload finds the account page and the link in its list.
  scope.get(INVITATION_PATH.slice('/console'.length), async (request, reply) => {
    const invitation = await area.takeOnce<{ url: string; expiresAt: number }>(request, INVITATION_PATH);
    if (!invitation) return area.redirect(reply, '/console/account?notice=link_shown_once');
    return show(request, reply, { invitation, notice: 'invitation_created' });
  });

  // A link this person made and nobody used yet; another person's link is a 404, as a missing one.
  scope.post<{ Params: { id: string } }>('/account/links/:id/revoke', { preHandler: guard }, (request, reply) =>
    act(request, reply, async () => {
      const account = area.account(request);
      const link = await revokeOutstandingLink(ctx, request.params.id, account.id);
      await recordConsoleEvent(
        ctx,
        account,
        'account.revoke_link',
        link.account_id ?? account.id,
        request.ip,
        `${link.purpose} ${request.params.id}`,
      );
      return 'link_revoked';
    }),
  );
}
