/**
 * The API keys area (docs/design.md §11, §15): the keys the account may see, creating one for the
 * signed-in account (shown once), and revoking one. Another account's key answers exactly as a
 * missing one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidField } from '../../errors.ts';
import type { ApiKeyRecord } from '../../store/api-keys.ts';
import { listAccounts } from '../../management/accounts.ts';
import { createApiKey, getApiKey, KEY_LIFETIME_CHOICES, listApiKeys, revokeApiKey } from '../../management/api-keys.ts';
import { API_KEYS_PATH, apiKeyCreatedPage, apiKeyCreatedPath, apiKeysPage } from '../pages/api-keys.ts';
import { noticeFor } from '../pages/shell.ts';
import { refusedForm, type ShownState } from './owned.ts';
import type { ConsoleScope, Form } from './scope.ts';

type Params = { id: string };

/** The form's lifetime: one of the console's choices, or an InvalidField beside it. */
function lifetimeOf(raw: string | undefined): number {
  const days = Number(raw ?? '90');
  if (!(KEY_LIFETIME_CHOICES as readonly number[]).includes(days))
    throw new InvalidField('expires_in_days', 'Choose an expiry from the list.');
  return days;
}

export function apiKeyRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;

  /** The keys the account may see (an admin's with their accounts) and the create form. */
  const list = async (request: FastifyRequest, reply: FastifyReply, state: ShownState, status = 200) => {
    const page = await area.page(request, reply);
    const actor = area.actor(request);
    const [keys, accounts] = await Promise.all([
      listApiKeys(ctx, actor),
      actor.admin ? listAccounts(ctx, actor) : null,
    ]);
    return area.send(
      reply,
      apiKeysPage(page, {
        keys,
        accounts: accounts && new Map(accounts.map((account) => [account.id, account])),
        now: ctx.clock(),
        ...state,
      }),
      status,
    );
  };

  scope.get<{ Querystring: Form }>('/api-keys', (request, reply) =>
    list(request, reply, { notice: noticeFor(request.query.notice) }),
  );

  // Making a key needs a fresh authentication (management/credentials.ts): past the window, the
  // person confirms it is them and comes back here.
  scope.post<{ Body: Form }>(
    '/api-keys',
    { preHandler: guard, config: { confirmReturnsTo: API_KEYS_PATH } },
    async (request, reply) => {
      const form = request.body ?? {};
      try {
        const { key, secret } = await createApiKey(ctx, area.actor(request), {
          name: form.name ?? '',
          access: form.access as ApiKeyRecord['access'],
          reach: (form.reach ?? 'own') as ApiKeyRecord['reach'],
          expiresInDays: lifetimeOf(form.expires_in_days),
        });
        return area.redirectOnce(request, reply, apiKeyCreatedPath(key.id), { secret });
      } catch (error) {
        if (!(error instanceof InvalidField)) throw error;
        return list(request, reply, refusedForm(request.body, error), 400);
      }
    },
  );

  // The new key, once: a reload finds the list with a notice instead.
  scope.get<{ Params: Params }>('/api-keys/:id/created', async (request, reply) => {
    const key = await getApiKey(ctx, area.actor(request), request.params.id);
    const once = await area.takeOnce<{ secret: string }>(request, apiKeyCreatedPath(key.id));
    if (!once) return area.redirect(reply, `${API_KEYS_PATH}?notice=api_key_shown_once`);
    return area.send(
      reply,
      apiKeyCreatedPage(await area.page(request, reply), { key, secret: once.secret, issuer: ctx.config.baseUrl }),
    );
  });

  scope.post<{ Params: Params }>('/api-keys/:id/revoke', { preHandler: guard }, async (request, reply) => {
    await revokeApiKey(ctx, area.actor(request), request.params.id);
    return area.redirect(reply, `${API_KEYS_PATH}?notice=api_key_revoked`);
  });
}
