/**
 * The management API under /api/admin/v1 (docs/design.md §15, docs/reference/api.md): one
 * Fastify scope with its OpenAPI document, the API key of every call, a rate limit per key,
 * and a console event for every call. Cookies play no part here, so no CSRF check either: a
 * browser cannot make a request carry an API key.
 */
import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Context } from '../../context.ts';
import { InvalidToken, TooManyRequests } from '../../errors.ts';
import { recordCall } from '../../management/audit.ts';
import { apiAuthFailureLimit, apiKeyLimiter } from '../../throttle/api-keys.ts';
import { authenticateApiKey } from '../keys.ts';
import {
  AccountView,
  ActivityView,
  AgentPolicyView,
  AgentView,
  ApiKeyView,
  SigningKeyView,
  ActionTypeView,
  ClientView,
  ErrorView,
  GrantView,
  RevokedView,
  SignInView,
  DeliveryView,
  WebhookEventTypeView,
  WebhookView,
} from '../../management/views.ts';
import { accountRoutes } from './accounts.ts';
import { type ApiScope, callerIf, setCaller } from './caller.ts';
import { agentRoutes } from './agents.ts';
import { clientRoutes } from './clients.ts';
import { grantRoutes } from './grants.ts';
import { historyRoutes } from './history.ts';
import { keyRoutes } from './keys.ts';
import { webhookRoutes } from './webhooks.ts';
import { signingKeyRoutes } from './signing-keys.ts';

export const API_PREFIX = '/api/admin/v1';

export async function apiRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  await app.register(
    async (api) => {
      await api.register(swagger, {
        openapi: {
          openapi: '3.1.0',
          info: {
            title: 'agentauth management API',
            version: '1',
            description:
              'Manage agents, websites (OAuth clients), accounts, grants, API keys, webhooks and signing keys, and read the sign-in history and the console activity. Authenticate with an API key: `Authorization: Bearer aak_…`. Errors are `{error, error_description}`.',
          },
          servers: [{ url: `${ctx.config.baseUrl}${API_PREFIX}` }],
          components: {
            securitySchemes: {
              apiKey: {
                type: 'http',
                scheme: 'bearer',
                description: 'An API key made in the console or with `agentauth api-key create`.',
              },
            },
          },
          security: [{ apiKey: [] }],
        },
        // @fastify/swagger marks every body required; a route whose body may be left out (it fills
        // in {} before validation) says `'x-body-optional': true`, and the document says so too.
        transformObject: (document) => {
          if (!('openapiObject' in document)) return document.swaggerObject;
          const { openapiObject } = document;
          for (const path of Object.values(openapiObject.paths ?? {}))
            for (const operation of Object.values(path ?? {}) as Record<string, unknown>[]) {
              if (!operation?.['x-body-optional']) continue;
              delete operation['x-body-optional'];
              (operation.requestBody as { required: boolean }).required = false;
            }
          return openapiObject;
        },
        // Shared schemas become components/schemas under their own names.
        refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
      });
      for (const schema of [
        ErrorView,
        AgentView,
        AgentPolicyView,
        ActionTypeView,
        ClientView,
        AccountView,
        GrantView,
        RevokedView,
        SignInView,
        ActivityView,
        ApiKeyView,
        SigningKeyView,
        WebhookView,
        DeliveryView,
        WebhookEventTypeView,
      ])
        api.addSchema(schema);

      const limiter = await apiKeyLimiter(ctx.config, ctx.store);
      const unauthenticated = await apiAuthFailureLimit(ctx.config, ctx.store);

      api.addHook('onRequest', async (request, reply) => {
        if (request.routeOptions.config.public) return;
        let caller: Awaited<ReturnType<typeof authenticateApiKey>>;
        try {
          caller = await authenticateApiKey(ctx, request.headers.authorization, request.ip);
        } catch (error) {
          // A call without a usable key counts against its address; past the limit, 429 instead of 401.
          if (error instanceof InvalidToken) await unauthenticated?.count(request.ip);
          throw error;
        }
        if (limiter) {
          try {
            const used = await limiter.consume(caller.key.id, 1);
            rateLimitHeaders(reply, limiter.points, limiter.points - used.consumedPoints, used.msBeforeNext);
          } catch (refused) {
            const { msBeforeNext } = refused as { msBeforeNext: number };
            rateLimitHeaders(reply, limiter.points, 0, msBeforeNext);
            throw new TooManyRequests('Too many calls with this API key; wait for Retry-After.', msBeforeNext / 1000);
          }
        }
        setCaller(request, caller);
      });
      // Every call of a key is in the console's activity, before its answer leaves: a call that
      // acted by its act (src/management/audit.ts), any other (a read, a refusal) as the call.
      api.addHook('onSend', async (request, reply, payload) => {
        const caller = callerIf(request);
        if (!caller) return payload;
        const params = request.params as { id?: string } | undefined;
        const operation = request.routeOptions.schema?.operationId ?? 'unknown';
        await recordCall(ctx, caller, {
          operation,
          target: params?.id ?? reply.getHeader('x-created-id')?.toString() ?? null,
          request: `${request.method} ${request.url.split('?')[0]}`,
          status: reply.statusCode,
        });
        reply.removeHeader('x-created-id');
        return payload;
      });

      api.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async (_request, reply) => {
        reply.header('cache-control', 'no-cache');
        return api.swagger();
      });

      const scope: ApiScope = { ctx };
      await api.register(async (routes) => agentRoutes(routes, scope));
      await api.register(async (routes) => clientRoutes(routes, scope));
      await api.register(async (routes) => accountRoutes(routes, scope));
      await api.register(async (routes) => grantRoutes(routes, scope));
      await api.register(async (routes) => historyRoutes(routes, scope));
      await api.register(async (routes) => keyRoutes(routes, scope));
      await api.register(async (routes) => webhookRoutes(routes, scope));
      await api.register(async (routes) => signingKeyRoutes(routes, scope));
    },
    { prefix: API_PREFIX },
  );
}

/** The RateLimit fields of draft-ietf-httpapi-ratelimit-headers, so a script can pace itself. */
function rateLimitHeaders(reply: FastifyReply, limit: number, remaining: number, msBeforeNext: number): void {
  reply.header('ratelimit-limit', String(limit));
  reply.header('ratelimit-remaining', String(Math.max(0, remaining)));
  reply.header('ratelimit-reset', String(Math.ceil(msBeforeNext / 1000)));
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route of the API scope that needs no key (the OpenAPI document). */
    public?: boolean;
  }
}
