/**
 * The composition root: builds the context every rule works with, and the application with
 * every feature mounted on the HTTP server: the protocol's endpoints and pages, the console, and
 * the static files they share. Features import foundations (web/, http/, domain/, store/), never
 * each other and never this file.
 */
import type { FastifyInstance } from 'fastify';
import { apiRoutes } from './api/routes/index.ts';
import type { Registry } from 'prom-client';
import type { Config } from './config.ts';
import { firstAdminCommand } from './domain/accounts.ts';
import { consoleRouterErrorPage, consoleRoutes } from './console/routes/index.ts';
import { type Clock, type Context, serverSecrets, systemClock } from './context.ts';
import { ClientKeySets } from './domain/client-keys/index.ts';
import { allowingAddresses, ClientMetadataDocuments, type FetchOptions } from './domain/client-metadata/index.ts';
import { SigningKeys } from './domain/signing-keys.ts';
import { StatusEvents } from './domain/status-events.ts';
import { type DispatcherOptions, WebhookDispatcher } from './domain/webhooks/dispatcher.ts';
import { type AppOptions, createHttpServer } from './http/server.ts';
import { createMailer } from './mail.ts';
import { browserEndpoints } from './protocol/cors.ts';
import { agentRoutes } from './protocol/routes/agent.ts';
import { authorizeRoutes } from './protocol/routes/authorize.ts';
import { backchannelRoutes } from './protocol/routes/backchannel.ts';
import { agentActionRoutes } from './protocol/routes/agent-actions.ts';
import { discoveryRoutes } from './protocol/routes/discovery.ts';
import { landingRoutes } from './protocol/routes/landing.ts';
import { registrationRoutes } from './protocol/routes/register.ts';
import { statusStreamRoutes } from './protocol/routes/status-stream.ts';
import { tokenRoutes } from './protocol/routes/token.ts';
import { userinfoRoutes } from './protocol/routes/userinfo.ts';
import type { Store } from './store/types.ts';
import { AddressLimit } from './throttle/address.ts';
import { AuthThrottle } from './throttle/agent-authentication.ts';
import { SignInThrottle } from './throttle/console-sign-in.ts';
import { assetRoutes } from './web/asset-routes.ts';

export type { AppOptions } from './http/server.ts';

export interface ContextOptions {
  clock?: Clock;
  /**
   * How Client ID Metadata Documents are fetched. Tests alone pass a CA to trust and loopback
   * addresses to allow; production fetches only from public addresses with the system's CAs.
   */
  clientMetadataFetch?: FetchOptions;
  /** How webhooks are sent: tests pass a CA, loopback receivers and a short retry schedule. */
  webhooks?: DispatcherOptions;
}

export async function createContext(
  config: Config,
  store: Store,
  jwtSecret: string,
  options: ContextOptions = {},
): Promise<Context> {
  const clock = options.clock ?? systemClock;
  const metadataFetch = allowingAddresses(config.clientMetadataAllowedAddresses, options.clientMetadataFetch);
  const secrets = serverSecrets(jwtSecret, config.jwtPreviousSecrets, config.baseUrl);
  const base: Omit<Context, 'webhooks'> = {
    config,
    store,
    clock,
    secrets,
    // Reads the shared key set when first used; the server settles it at start (server.ts).
    signingKeys: new SigningKeys({ config, store, clock, box: secrets.signingKeys }),
    throttle: await AuthThrottle.create(config, store),
    authorizeLimit: new AddressLimit({
      keyPrefix: 'authorize',
      points: config.authorizeLimitPerIp,
      duration: config.authorizeLimitWindow,
      message: 'Too many sign-in requests from your network; wait a moment and try again.',
    }),
    registrationLimit: new AddressLimit({
      keyPrefix: 'register',
      points: config.registrationLimitPerIp,
      duration: config.registrationLimitWindow,
      message: 'Too many client registrations from this address; wait and try again.',
    }),
    clientMetadata: config.clientIdMetadataDocuments
      ? new ClientMetadataDocuments({ fetch: metadataFetch, privateKeyJwt: config.privateKeyJwt })
      : null,
    // Its clock is the context's, so a test that moves time moves the cache and the refetch bound too.
    clientKeySets: config.privateKeyJwt
      ? new ClientKeySets({ fetch: metadataFetch, clock: () => clock() * 1000 })
      : null,
    statusEvents: new StatusEvents(store),
    mailer: createMailer(config),
    console: { throttle: await SignInThrottle.create(config, store) },
  };
  return { ...base, webhooks: new WebhookDispatcher(base, options.webhooks) };
}

/**
 * The main listener's application: the HTTP server with the protocol, the console and the
 * assets mounted; its metrics go to `registry`.
 *
 * @example
 * const app = await buildApp(await createContext(config, store, jwtSecret), new Registry());
 * await app.listen({ port: 3000 });
 */
export async function buildApp(ctx: Context, registry: Registry, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = await createHttpServer(ctx, registry, { ...options, routerErrorPage: consoleRouterErrorPage });
  await app.register(landingRoutes, ctx);
  await app.register(assetRoutes);
  await app.register(authorizeRoutes, ctx);
  await app.register(consoleRoutes, ctx);
  await app.register(agentRoutes, ctx);
  await app.register(statusStreamRoutes, ctx);
  await app.register(apiRoutes, ctx);
  // What a browser app calls. Opt-in (docs/design.md §13): without DYNAMIC_REGISTRATION, /register
  // is an unknown path; without CORS, these routes are mounted as any other, and answer no CORS.
  const browserCalled = [tokenRoutes, userinfoRoutes, discoveryRoutes];
  if (ctx.config.dynamicRegistration) browserCalled.push(registrationRoutes);
  if (ctx.config.cors) await app.register(browserEndpoints, { ctx, routes: browserCalled });
  else for (const routes of browserCalled) await app.register(routes, ctx);
  // Owners approve actions (docs/design.md §21): without ACTION_APPROVALS, an unknown path.
  if (ctx.config.actionApprovals) {
    await app.register(backchannelRoutes, ctx);
    await app.register(agentActionRoutes, ctx);
  }
  return app;
}

/**
 * What the features have to tell the operator at start-up: while the console has no account, the
 * command that makes the first admin (a fresh console has no way in until someone runs it).
 */
export async function startupNotices(ctx: Context): Promise<string[]> {
  if ((await ctx.store.accounts.count()) > 0) return [];
  return [
    `the console has no account yet: run \`${firstAdminCommand()}\` with this server's environment, then open the setup link it prints`,
  ];
}
