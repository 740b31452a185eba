/**
 * The admin area (docs/design.md §11): every account with its actions (disable, enable, role,
 * email verification, a new setup link), every unused setup and invitation link (revoke), every
 * agent, every website, the console's audit, and the signing keys (read only).
 * Every route starts with requireAdmin, as every operation does: a member gets the 403 page and
 * nothing changes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountRecord, AccountRole } from '../../store/accounts.ts';
import {
  createSetupLink,
  getAccount,
  listAccounts,
  listLinks,
  revokeLink,
  updateAccount,
  verifyAccountEmail,
} from '../../management/accounts.ts';
import { type Actor, requireAdmin } from '../../management/actor.ts';
import { listAgents } from '../../management/agents.ts';
import { listClients } from '../../management/clients.ts';
import { listSigningKeys } from '../../management/signing-keys.ts';
import { InvalidField } from '../../errors.ts';
import { type ActivityKind, activityPage, decodeCursor } from '../../management/history.ts';
import {
  ACTIVITY_KINDS,
  adminAccountsPage,
  adminAgentsPage,
  adminEventsPage,
  adminLinksPage,
  adminClientsPage,
  adminSigningKeysPage,
} from '../pages/admin.ts';
import { type ConsolePage, noticeFor } from '../pages/shell.ts';
import type { ConsoleScope, Form } from './scope.ts';

type AccountAction = FastifyRequest<{ Params: { id: string }; Body: Form }>;

/** Console events per page of the admin's audit. */
export const EVENTS_PAGE = 50;

const ROLES: readonly AccountRole[] = ['admin', 'member'];

export function adminRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;

  /** The signed-in admin, or the 403 page (or the sign-in page without a session). */
  const admin = (request: FastifyRequest): Actor => {
    const actor = area.actor(request);
    requireAdmin(actor);
    return actor;
  };
  /** How many of the records each account owns. */
  const countOf = (records: Array<{ account_id: string | null }>) => {
    const counts = new Map<string, number>();
    for (const record of records)
      if (record.account_id !== null) counts.set(record.account_id, (counts.get(record.account_id) ?? 0) + 1);
    return (id: string) => counts.get(id) ?? 0;
  };
  const ownersOf = (accounts: AccountRecord[]) => new Map(accounts.map((account) => [account.id, account]));

  /** The accounts page, with a notice, an error, or a setup link shown once. */
  const showAccounts = async (
    request: FastifyRequest,
    reply: FastifyReply,
    extra: { notice?: ConsolePage['notice']; setupLink?: { email: string; url: string; expiresAt: number } } = {},
    status = 200,
  ) => {
    const actor = admin(request);
    const page = await area.page(request, reply);
    const [accounts, agents, clients] = await Promise.all([
      listAccounts(ctx, actor),
      listAgents(ctx, actor),
      listClients(ctx, actor),
    ]);
    const agentsOf = countOf(agents);
    const clientsOf = countOf(clients);
    return area.send(
      reply,
      adminAccountsPage(page, {
        rows: accounts.map((account) => ({ account, agents: agentsOf(account.id), websites: clientsOf(account.id) })),
        notice: extra.notice ?? null,
        setupLink: extra.setupLink,
      }),
      status,
    );
  };

  scope.get<{ Querystring: Form }>('/admin', (request, reply) =>
    showAccounts(request, reply, { notice: noticeFor(request.query.notice) }),
  );

  scope.get('/admin/signing-keys', async (request, reply) => {
    const actor = admin(request);
    const page = await area.page(request, reply);
    const keys = await listSigningKeys(ctx, actor);
    return area.send(reply, adminSigningKeysPage(page, { algorithm: ctx.config.tokenSigningAlg, keys }));
  });

  scope.get<{ Querystring: Form }>('/admin/links', async (request, reply) => {
    const actor = admin(request);
    const page = await area.page(request, reply);
    return area.send(
      reply,
      adminLinksPage(page, { links: await listLinks(ctx, actor), notice: noticeFor(request.query.notice) }),
    );
  });

  // Any unused link, whoever made it; the target is the account a setup link is for, or the invitation's maker.
  scope.post<{ Params: { id: string }; Body: Form }>(
    '/admin/links/:id/revoke',
    { preHandler: guard },
    async (request, reply) => {
      await revokeLink(ctx, admin(request), request.params.id);
      return area.redirect(reply, '/console/admin/links?notice=link_revoked');
    },
  );

  scope.get('/admin/agents', async (request, reply) => {
    const actor = admin(request);
    const page = await area.page(request, reply);
    const [accounts, agents] = await Promise.all([listAccounts(ctx, actor), listAgents(ctx, actor)]);
    return area.send(reply, adminAgentsPage(page, { agents, owners: ownersOf(accounts) }));
  });

  scope.get('/admin/websites', async (request, reply) => {
    const actor = admin(request);
    const page = await area.page(request, reply);
    const [accounts, clients] = await Promise.all([listAccounts(ctx, actor), listClients(ctx, actor)]);
    return area.send(reply, adminClientsPage(page, { clients, owners: ownersOf(accounts) }));
  });

  // ?show= picks console actions or agent sign-ins; an unknown value shows everything, with a message (400).
  scope.get<{ Querystring: Form }>('/admin/events', async (request, reply) => {
    const actor = admin(request);
    const page = await area.page(request, reply);
    const before = decodeCursor(request.query.before);
    const asked = request.query.show ?? '';
    const known = ACTIVITY_KINDS.some(([value]) => value === asked);
    const show = known ? asked : '';
    const [{ entries, next }, accounts] = await Promise.all([
      activityPage(ctx, actor, (show || 'all') as ActivityKind, before, EVENTS_PAGE),
      listAccounts(ctx, actor),
    ]);
    return area.send(
      reply,
      adminEventsPage(page, {
        entries,
        accounts: ownersOf(accounts),
        next,
        first: before === undefined,
        show,
        error: known ? undefined : 'Choose what to show from the list.',
      }),
      known ? 200 : 400,
    );
  });

  /**
   * Runs an action on the account of the URL (404 page for an unknown one), records it, and
   * shows the accounts page with its notice; an InvalidField shows the page with the message, 400.
   */
  const onAccount = async (
    request: AccountAction,
    reply: FastifyReply,
    action: (actor: Actor, id: string) => Promise<string>,
  ) => {
    const actor = admin(request);
    const target = await getAccount(ctx, actor, request.params.id);
    try {
      return area.redirect(reply, `/console/admin?notice=${await action(actor, target.id)}`);
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return showAccounts(request, reply, { notice: { kind: 'error', text: error.description } }, 400);
    }
  };

  for (const [name, status, notice] of [
    ['disable', 'disabled', 'account_disabled'],
    ['enable', 'active', 'account_enabled'],
  ] as const) {
    scope.post<{ Params: { id: string }; Body: Form }>(
      `/admin/accounts/:id/${name}`,
      { preHandler: guard },
      (request, reply) =>
        onAccount(request, reply, async (actor, id) => {
          await updateAccount(ctx, actor, id, { status });
          return notice;
        }),
    );
  }

  scope.post<{ Params: { id: string }; Body: Form }>(
    '/admin/accounts/:id/role',
    { preHandler: guard },
    (request, reply) =>
      onAccount(request, reply, async (actor, id) => {
        const role = request.body?.role;
        if (!ROLES.includes(role as AccountRole)) throw new InvalidField('role', 'Choose the role admin or member.');
        await updateAccount(ctx, actor, id, { role: role as AccountRole });
        return 'role_changed';
      }),
  );

  scope.post<{ Params: { id: string }; Body: Form }>(
    '/admin/accounts/:id/verify-email',
    { preHandler: guard },
    (request, reply) =>
      onAccount(request, reply, async (actor, id) => {
        await verifyAccountEmail(ctx, actor, id);
        return 'email_verified';
      }),
  );

  // A new setup link (someone who lost their passkey): shown once, on the page the redirect leads to.
  const setupLinkPath = (id: string) => `/console/admin/accounts/${encodeURIComponent(id)}/setup-link`;
  // A credential: it needs a fresh authentication (the confirmation leads back to the accounts),
  // mails the account, and is refused for the admin's own account (management/accounts.ts).
  scope.post<{ Params: { id: string }; Body: Form }>(
    '/admin/accounts/:id/setup-link',
    { preHandler: guard, config: { confirmReturnsTo: '/console/admin' } },
    async (request, reply) => {
      const { account, link } = await createSetupLink(ctx, admin(request), request.params.id);
      return area.redirectOnce(request, reply, setupLinkPath(account.id), { email: account.email, ...link });
    },
  );
  scope.get<{ Params: { id: string } }>('/admin/accounts/:id/setup-link', async (request, reply) => {
    const target = await getAccount(ctx, admin(request), request.params.id);
    const setupLink = await area.takeOnce<{ email: string; url: string; expiresAt: number }>(
      request,
      setupLinkPath(target.id),
    );
    if (!setupLink) return area.redirect(reply, '/console/admin?notice=link_shown_once');
    return showAccounts(request, reply, { setupLink, notice: noticeFor('setup_link_created') });
  });
}
