/**
 * The websites area (docs/design.md §11): an owner's websites (OAuth clients), registering one
 * (its secret shown once), and a website's page with edit, rotation, disable/enable, revocation,
 * deletion, a test sign-in and its sign-ins. Another owner's website answers exactly as a missing one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { deleteClient, rotateClientSecret, setClientStatus } from '../../domain/clients.ts';
import type { AccountRecord } from '../../store/console-types.ts';
import type { ClientRecord } from '../../store/types.ts';
import { reachableClient } from '../access.ts';
import { InvalidField } from '../../errors.ts';
import { recordConsoleEvent } from '../events.ts';
import { noticeFor } from '../pages/shell.ts';
import { clientCreatedPage, clientPage, clientPath, clientSecretPage, clientsPage } from '../pages/clients.ts';
import { clientChangesDetail, createOwnedClient, editOwnedClient, testSignInUrl } from '../clients.ts';
import type { ConsoleScope, Form } from './scope.ts';
import {
  actOn,
  loadHistory,
  ownedRoutes,
  REFUSED_FILTER,
  refusedForm,
  revokedDetail,
  type ShownState,
} from './owned.ts';

type Params = { id: string };

/** Where a new website's secret is shown, once. */
const createdPath = (id: string) => `${clientPath(id)}/created`;

export function clientRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;
  /** The website if the account may reach it; NotFound otherwise, the same for a missing and a foreign one. */
  const reachable = (account: AccountRecord, id: string) => reachableClient(ctx, account, id);

  /** The list of the signed-in account's websites with the registration form. */
  const list = async (request: FastifyRequest, reply: FastifyReply, state: ShownState, status = 200) => {
    const page = await area.page(request, reply);
    const websites = await ctx.store.console.listClientsOf(page.account.id);
    return area.send(reply, clientsPage(page, { websites, publicClients: ctx.config.publicClients, ...state }), status);
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
    const { history, refused } = await loadHistory(ctx, { client_id: client.id }, state.query);
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
      }),
      refused ? 400 : status,
    );
  };

  const act = actOn(area, { reachable, show, pageOf: (client) => clientPath(client.id) });

  scope.get<{ Querystring: Form }>('/websites', (request, reply) =>
    list(request, reply, { notice: noticeFor(request.query.notice) }),
  );

  scope.post<{ Body: Form }>('/websites', { preHandler: guard }, async (request, reply) => {
    const account = area.account(request);
    const form = request.body ?? {};
    try {
      const { client, secret } = await createOwnedClient(ctx, account, {
        name: form.name,
        redirect_uris: form.redirect_uris,
        approval: form.approval,
        client_type: form.client_type,
      });
      await recordConsoleEvent(ctx, account, 'website.create', client.id, request.ip, client.name);
      return area.redirectOnce(request, reply, createdPath(client.id), { secret });
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return list(request, reply, refusedForm(form, error), 400);
    }
  });

  // The new website's credentials, its secret once: a reload finds the website's page instead.
  scope.get<{ Params: Params }>('/websites/:id/created', async (request, reply) => {
    const client = await reachable(area.account(request), request.params.id);
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
    const client = await reachable(area.account(request), request.params.id);
    return show(request, reply, client, { notice: noticeFor(request.query.notice), query: request.query });
  });

  // Edit: name, redirect URIs and approval, under the rules of registration.
  scope.post<{ Params: Params; Body: Form }>('/websites/:id/edit', { preHandler: guard }, (request, reply) =>
    act(request, reply, async (account, client) => {
      const changed = await editOwnedClient(ctx, client, request.body ?? {});
      await recordConsoleEvent(
        ctx,
        account,
        'website.update',
        client.id,
        request.ip,
        clientChangesDetail(client, changed),
      );
      return 'website_updated';
    }),
  );

  scope.post<{ Params: Params; Body: Form }>('/websites/:id/delete', { preHandler: guard }, (request, reply) =>
    act(
      request,
      reply,
      async (account, client) => {
        const revoked = await deleteClient(ctx, client.id);
        await recordConsoleEvent(
          ctx,
          account,
          'website.delete',
          client.id,
          request.ip,
          `${client.name}: ${revokedDetail(revoked)}`,
        );
        return 'website_deleted';
      },
      () => '/console/websites',
    ),
  );

  // A real authorization request for the website, made by the console (../clients.ts testSignInUrl).
  scope.post<{ Params: Params; Body: Form }>(
    '/websites/:id/test-sign-in',
    { preHandler: guard },
    async (request, reply) => {
      const account = area.account(request);
      const client = await reachable(account, request.params.id);
      let url: string;
      try {
        url = testSignInUrl(ctx.config, client, request.body?.redirect_uri);
      } catch (error) {
        if (!(error instanceof InvalidField)) throw error;
        return show(request, reply, client, refusedForm(request.body, error), 400);
      }
      await recordConsoleEvent(
        ctx,
        account,
        'website.test_sign_in',
        client.id,
        request.ip,
        new URL(url, ctx.config.baseUrl).searchParams.get('redirect_uri'),
      );
      return area.redirect(reply, url);
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
    setActive: (deps, id, active) => setClientStatus(deps, id, active ? 'active' : 'inactive'),
    grantsOf: (client) => ({ client_id: client.id }),
    historyOf: (client) => ({ client_id: client.id }),
  });
}
