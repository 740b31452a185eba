/**
 * /accounts: the people of the console, for an admin's `all` key only, by the account operations
 * (src/management/accounts.ts): creation with a one-time setup link, names, roles, disabling.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  createAccount,
  createSetupLink,
  getAccount,
  type IssuedLink,
  listAccounts,
  updateAccount,
} from '../../management/accounts.ts';
import type { AccountRecord, AccountRole } from '../../store/accounts.ts';
import { pageSize, timeCursor, pageOf } from '../conditions.ts';
import { AccountView, accountView, Page, time } from '../../management/views.ts';
import { type ApiScope, callerOf } from './caller.ts';
import {
  answerCreation,
  answers,
  IdempotencyHeaders,
  IdParams,
  IfMatchHeaders,
  ifMatch,
  ListQuery,
  withTag,
} from './shared.ts';

const AccountRef = Type.Ref(AccountView);
const tags = ['Accounts'];

const Role = Type.Union([Type.Literal('admin'), Type.Literal('member')]);
const NewAccountBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320, description: 'Unique, whatever its case.' }),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    role: Type.Optional(
      Type.Union([Type.Literal('admin'), Type.Literal('member')], { description: 'Default member.' }),
    ),
  },
  { additionalProperties: false },
);
type NewAccountBody = { email: string; name?: string; role?: AccountRole };

const AccountChanges = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200, description: 'Empty: no name.' })),
    role: Type.Optional(Role),
    status: Type.Optional(
      Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
        description: 'disabled: signed out everywhere, and the links it made end; its agents and clients keep working.',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
type AccountChanges = { name?: string; role?: AccountRole; status?: 'active' | 'disabled' };

const WithLink = Type.Object({
  account: AccountRef,
  setup_link: Type.String({
    description: 'A one-time link that signs the person in once, to add a passkey or a password. Shown only here.',
  }),
  setup_link_expires_at: Type.String({ format: 'date-time' }),
});

/** An account with its new setup link, as the API answers it. */
const withLink = ({ account, link }: { account: AccountRecord; link: IssuedLink }) => ({
  account: accountView(account),
  setup_link: link.url,
  setup_link_expires_at: time(link.expiresAt),
});

/**
 * Mounts /accounts on the API's scope.
 *
 * @example
 * await api.register(async (routes) => accountRoutes(routes, { ctx }));
 */
export async function accountRoutes(api: FastifyInstance, { ctx }: ApiScope): Promise<void> {
  api.get<{ Querystring: { limit?: string; cursor?: string; email?: string } }>(
    '/accounts',
    {
      schema: {
        operationId: 'listAccounts',
        summary: 'List accounts',
        description:
          'Oldest first; with `email`, the one account of that email (whatever its case), or none. Only an admin’s `all` key.',
        tags,
        querystring: Type.Object({
          ...ListQuery,
          email: Type.Optional(Type.String({ maxLength: 320, description: 'Only the account of this email.' })),
        }),
        response: answers({ 200: Page(AccountRef, 'AccountPage') }, 403),
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const limit = pageSize(request.query.limit);
      const cursor = timeCursor(request.query.cursor);
      if (request.query.email !== undefined) {
        const found = await listAccounts(ctx, caller, { email: request.query.email });
        return { data: found.map(accountView), next_cursor: null };
      }
      const rows = await listAccounts(ctx, caller, {
        limit: limit + 1,
        after: cursor && { created_at: cursor.at, id: cursor.id },
      });
      return pageOf(rows, limit, accountView);
    },
  );

  api.post<{ Body: NewAccountBody }>(
    '/accounts',
    {
      schema: {
        operationId: 'createAccount',
        summary: 'Create an account',
        description:
          'Answers the account and a one-time setup link to send to the person, as `agentauth account create` prints it. Send an `Idempotency-Key` to retry safely. Only an admin’s `all` key.',
        tags,
        headers: IdempotencyHeaders,
        body: NewAccountBody,
        response: answers({ 201: WithLink }, 403, 409, 422),
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return answerCreation(ctx, caller, request, reply, async () => {
        const { email, name, role } = request.body;
        const made = await createAccount(ctx, caller, { email, name, role: role ?? 'member' });
        return { location: `accounts/${made.account.id}`, body: withLink(made) };
      });
    },
  );

  api.get<{ Params: IdParams }>(
    '/accounts/:id',
    {
      schema: {
        operationId: 'getAccount',
        summary: 'Read an account',
        description: 'Answers its `ETag`, for `If-Match` on a change. Only an admin’s `all` key.',
        tags,
        params: IdParams,
        response: answers({ 200: AccountRef }, 403, 404),
      },
    },
    async (request, reply) => withTag(reply, accountView(await getAccount(ctx, callerOf(request), request.params.id))),
  );

  api.patch<{ Params: IdParams; Body: AccountChanges }>(
    '/accounts/:id',
    {
      schema: {
        operationId: 'updateAccount',
        summary: 'Rename an account, change its role, disable or enable it',
        description:
          'As in the console: no one takes the admin role from themselves or disables their own account, so there is always an administrator left. Only an admin’s `all` key.',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: AccountChanges,
        response: answers({ 200: AccountRef }, 403, 404, 412),
      },
    },
    async (request, reply) => {
      const changed = await updateAccount(
        ctx,
        callerOf(request),
        request.params.id,
        request.body,
        ifMatch(request, accountView),
      );
      return withTag(reply, accountView(changed));
    },
  );

  api.post<{ Params: IdParams }>(
    '/accounts/:id/setup-link',
    {
      schema: {
        operationId: 'createSetupLink',
        summary: 'Make a new setup link for an account',
        description:
          'For someone who lost their passkey or password: the link signs them in once. A disabled account’s link works once the account is enabled. Only an admin’s `all` key.',
        tags,
        params: IdParams,
        response: answers({ 200: WithLink }, 403, 404),
      },
    },
    async (request, reply) => {
      const made = await createSetupLink(ctx, callerOf(request), request.params.id);
      reply.header('cache-control', 'no-store');
      return withLink(made);
    },
  );
}
