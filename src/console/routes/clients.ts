/**
 * The websites area (docs/design.md §11): an owner's websites (OAuth clients), registering one
 * (its secret shown once), and a website's page with edit, rotation, disable/enable, revocation,
 * deletion, a test sign-in and its sign-ins. Another owner's website answers exactly as a missing one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../management/actor.ts';
import {
  createClient,
  deleteClient,
  getClient,
  listClients,
  revokeClientGrants,
  rotateClientSecret,
  setClientStatus,
  testSignIn,
  updateClient,
} from '../../management/clients.ts';
import type { ClientRecord } from '../../store/clients.ts';
import { InvalidField } from '../../errors.ts';
import { noticeFor } from '../pages/shell.ts';
import { clientCreatedPage, clientPage, clientPath, clientSecretPage, clientsPage } from '../pages/clients.ts';
import { clientChanges, clientInput, keysField } from '../clients.ts';
import type { ConsoleScope, Form } from './scope.ts';
import { actOn, loadHistory, ownedRoutes, REFUSED_FILTER, refusedForm, type ShownState } from './owned.ts';

type Params = { id: string };

/** Where a new website's secret is shown, once. */
const createdPath = (id: string) => `${clientPath(id)}/created`;

export function clientRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;
  /** The kinds of client this server lets sign in, which the registration form offers. */
  const kinds = () => ({
    publicClients: ctx.config.publicClients,
    privateKeyJwt: ctx.config.privateKeyJwt,
    actionApprovals: ctx.config.actionApprovals,
  });
  /** The website if the account may reach it; NotFound otherwise, the same for a missing and a foreign one. */
  const reachable = (actor: Actor, id: string) => getClient(ctx, actor, id);

  /** The list of the signed-in account's websites with the registration form. */
  const list = async (request: FastifyRequest, reply: FastifyReply, state: ShownState, status = 200) => {
    const page = await area.page(request, reply);
    const websites = await listClients(ctx, area.actor(request), { accountId: page.account.id });
    return area.send(reply, clientsPage(page, { websites, kinds: kinds(), ...state }), status);
  };

  /** A website's page: details, actions and one page of its sign-ins. */
  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    client: ClientRecord,
    state: ShownState,
    status = 200,
  ) => {
    const page = await area.page(request, reply);
    const { history, refused } = await loadHistory(ctx, area.actor(request), { client_id: client.id }, state.query);
    return area.send(
      reply,
      clientPage(page, {
        client,
        now: ctx.clock(),
        issuer: ctx.config.baseUrl,
        history,
        values: state.values,
        errors: state.errors,
        notice: state.notice ?? (refused ? REFUSED_FILTER : null),
        publicClients: ctx.config.publicClients,
        actionApprovals: ctx.config.actionApprovals,
      }),
      refused ? 400 : status,
    );
  };

  const act = actOn(area, { reachable, show, pageOf: (client) => clientPath(client.id) });

  scope.get<{ Querystring: Form }>('/websites', (request, reply) =>
    list(request, reply, { notice: noticeFor(request.query.notice) }),
  );

  scope.post<{ Body: Form }>('/websites', { preHandler: guard }, async (request, reply) => {
    const form = request.body ?? {};
    try {
      const { client, secret } = await createClient(ctx, area.actor(request), clientInput(form, kinds()));
      return area.redirectOnce(request, reply, createdPath(client.id), { secret });
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return list(request, reply, refusedForm(form, error), 400);
    }
  });

  // The new website's credentials, its secret once: a reload finds the website's page instead.
  scope.get<{ Params: Params }>('/websites/:id/created', async (request, reply) => {
    const client = await reachable(area.actor(request), request.params.id);
    const once = await area.takeOnce<{ secret: string | null }>(request, createdPath(client.id));
    if (!once) return area.redirect(reply, `${clientPath(client.id)}?notice=shown_once`);
    return area.send(
      reply,
      clientCreatedPage(await area.page(request, reply), {
        client,
        secret: once.secret,
        issuer: ctx.config.baseUrl,
      }),
    );
  });

  scope.get<{ Params: Params; Querystring: Form }>('/websites/:id', async (request, reply) => {
    const client = await reachable(area.actor(request), request.params.id);
    return show(request, reply, client, { notice: noticeFor(request.query.notice), query: request.query });
  });

  // Edit: name, redirect URIs, approval (and a resource server's scopes, a website's actions), under the rules of registration.
  scope.post<{ Params: Params; Body: Form }>('/websites/:id/edit', { preHandler: guard }, (request, reply) =>
    act(request, reply, async (actor, client) => {
      await updateClient(ctx, actor, client.id, clientChanges(request.body ?? {}, client));
      return 'website_updated';
    }),
  );

  // New keys of a website that signs with keys: its key set or jwks_uri, replacing the old ones.
  scope.post<{ Params: Params; Body: Form }>('/websites/:id/keys', { preHandler: guard }, (request, reply) =>
    act(request, reply, async (actor, client) => {
      await updateClient(ctx, actor, client.id, { keys: keysField(request.body ?? {}) });
      return 'website_keys_replaced';
    }),
  );

  scope.post<{ Params: Params; Body: Form }>('/websites/:id/delete', { preHandler: guard }, (request, reply) =>
    act(
      request,
      reply,
      async (actor, client) => {
        await deleteClient(ctx, actor, client.id);
        return 'website_deleted';
      },
      () => '/console/websites',
    ),
  );

  // A real authorization request for the website (testSignIn, src/management/clients.ts).
  scope.post<{ Params: Params; Body: Form }>(
    '/websites/:id/test-sign-in',
    { preHandler: guard },
    async (request, reply) => {
      const actor = area.actor(request);
      const client = await reachable(actor, request.params.id);
      try {
        return area.redirect(reply, await testSignIn(ctx, actor, client.id, request.body?.redirect_uri));
      } catch (error) {
        if (!(error instanceof InvalidField)) throw error;
        return show(request, reply, client, refusedForm(request.body, error), 400);
      }
    },
  );

  ownedRoutes(scope, area, {
    path: '/websites',
    kind: 'website',
    reachable,
    show,
    act,
    pageOf: (client) => clientPath(client.id),
    rotate: rotateClientSecret,
    secretPage: (page, { thing, secret, until }) => clientSecretPage(page, { client: thing, secret, until }),
    setActive: (deps, actor, id, active) => setClientStatus(deps, actor, id, active ? 'active' : 'inactive'),
    revokeGrants: (deps, actor, id) => revokeClientGrants(deps, actor, id),
    historyOf: (client) => ({ client_id: client.id }),
  });
}
