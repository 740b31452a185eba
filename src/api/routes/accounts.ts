/**
 * /accounts: the people of the console, for an admin's `all` key only, by the account operations
 * (src/management/accounts.ts): names, roles, disabling. No operation makes an account or a setup
 * link: each is a way in that would outlive the key that made it, which no key may mint
 * (management/credentials.ts refuses it at the core, whatever route asked).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { getAccount, listAccounts, updateAccount } from '../../management/accounts.ts';
import type { AccountRole } from '../../store/accounts.ts';
import { pageSize, timeCursor, pageOf } from '../conditions.ts';
import { AccountView, accountView, Page } from '../../management/views.ts';
import { type ApiScope, callerOf } from './caller.ts';
import { answers, IdParams, IfMatchHeaders, ifMatch, ListQuery, withTag } from './shared.ts';

const AccountRef = Type.Ref(AccountView);
const tags = ['Accounts'];

const AccountChanges = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200, description: 'Empty: no name.' })),
    role: Type.Optional(
      Type.Union([Type.Literal('admin'), Type.Literal('member')], {
        description: 'member, from admin: its API keys that reach all accounts are revoked.',
      }),
    ),
    status: Type.Optional(
      Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
        description:
          'disabled: signed out everywhere, and its API keys and the links it made end for good (enabling it again revives none); its agents and clients keep working.',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
type AccountChanges = { name?: string; role?: AccountRole; status?: 'active' | 'disabled' };

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
}
