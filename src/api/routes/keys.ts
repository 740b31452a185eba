/** /api-keys: the keys a caller may see, and revoking them (keys are made in the console or the CLI). */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { getApiKey, listApiKeys, revokeApiKey } from '../../management/api-keys.ts';
import { ApiKeyView, apiKeyView } from '../../management/views.ts';
import { type ApiScope, callerOf } from './caller.ts';
import { answers, IdParams } from './shared.ts';

const KeyRef = Type.Ref(ApiKeyView);
const tags = ['API keys'];

export async function keyRoutes(api: FastifyInstance, { ctx }: ApiScope): Promise<void> {
  api.get(
    '/api-keys',
    {
      schema: {
        operationId: 'listApiKeys',
        summary: 'List API keys',
        description:
          'Newest first, with their last use. A key reaching its own account sees that account’s keys; an admin’s `all` key sees every key. The keys themselves are never shown again.',
        tags,
        response: answers({ 200: Type.Object({ data: Type.Array(KeyRef) }, { title: 'ApiKeyList' }) }),
      },
    },
    async (request) => ({ data: (await listApiKeys(ctx, callerOf(request))).map(apiKeyView) }),
  );

  api.get<{ Params: IdParams }>(
    '/api-keys/:id',
    {
      schema: {
        operationId: 'getApiKey',
        summary: 'Read an API key',
        tags,
        params: IdParams,
        response: answers({ 200: KeyRef }, 404),
      },
    },
    async (request) => apiKeyView(await getApiKey(ctx, callerOf(request), request.params.id)),
  );

  api.post<{ Params: IdParams }>(
    '/api-keys/:id/revoke',
    {
      schema: {
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key',
        description: 'It stops working at once, on every node. A key may revoke itself.',
        tags,
        params: IdParams,
        response: answers({ 200: KeyRef }, 403, 404),
      },
    },
    async (request) => apiKeyView(await revokeApiKey(ctx, callerOf(request), request.params.id)),
  );
}
