/**
 * What the agents and websites areas share (docs/design.md §11): an owner rotates the secret of
 * an agent or a website, disables and enables it, and revokes its grants, in the same way and
 * with the same pages; each area says what the thing is and how these act on it.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import type { Actor } from '../../management/actor.ts';
import { graceOf } from '../agents.ts';
import { InvalidField } from '../../errors.ts';
import { csvLine } from '../csv.ts';
import {
  allSignIns,
  decodeCursor,
  outcomeText,
  parseHistoryFilters,
  signInCounterparts,
  signInPage,
} from '../../management/history.ts';
import type { FormState, HistoryInput } from '../pages/owned.ts';
import { describeUserAgent } from '../user-agents.ts';
import type { ConsolePage } from '../pages/shell.ts';
import type { ConsoleScope, Form } from './scope.ts';

type Params = { id: string };
type Request = FastifyRequest<{ Params: Params; Body: Form }>;

/** The string fields of a form, to show again beside an error. */
export const formValues = (form: Form | undefined): Record<string, string | undefined> =>
  Object.fromEntries(
    Object.entries(form ?? {})
      .filter(([name]) => name !== '_csrf')
      .map(([name, value]) => [name, value]),
  );

/**
 * What a list or a page is shown with: a form's values and errors, a notice, and the parameters
 * of its history's URL (filters and page).
 */
export type ShownState = FormState & { notice?: ConsolePage['notice']; query?: Form };

/** Whose sign-ins a history lists: an agent's or a website's. */
export type HistoryOf = { agent_id: string } | { client_id: string };

/** The other side's parameter of a history: an agent's history filters by website, a website's by agent. */
const otherSide = (of: HistoryOf) => ('agent_id' in of ? 'website' : 'agent');

/**
 * One page of a history, as its URL's filters and cursor ask (a malformed cursor reads as the
 * first page); `refused` says whether a filter was refused (its message is in filterErrors).
 */
export async function loadHistory(
  ctx: Context,
  actor: Actor,
  of: HistoryOf,
  query: Form | undefined,
): Promise<{ history: HistoryInput; refused: boolean }> {
  const counterparts = await signInCounterparts(ctx, actor, of);
  const parsed = parseHistoryFilters(query ?? {}, otherSide(of), counterparts, ctx.clock());
  const before = decodeCursor(query?.before);
  const page = await signInPage(ctx, actor, { ...parsed.query, ...of }, before);
  return {
    history: {
      ...page,
      paged: before !== undefined,
      filters: parsed.filters,
      filterErrors: parsed.errors,
      counterparts,
    },
    refused: Object.keys(parsed.errors).length > 0,
  };
}

/** The notice of a page whose history filter was refused. */
export const REFUSED_FILTER: ConsolePage['notice'] = {
  kind: 'error',
  text: 'A filter of the sign-in history was not understood; it is marked below and left out.',
};

const CSV_HEADINGS = [
  'Time (UTC)',
  'Agent ID',
  'Website ID',
  'Website',
  'Outcome',
  'Outcome code',
  'Model',
  'IP address',
  'User agent',
  'User agent (raw)',
];

/**
 * A history's rows as CSV, the heading first, read from the store a page at a time, as `actor`
 * may read them (a cell it may not read is empty).
 */
async function* historyCsv(
  ctx: Context,
  actor: Actor,
  query: Parameters<typeof allSignIns>[2],
): AsyncGenerator<string> {
  yield csvLine(CSV_HEADINGS);
  for await (const row of allSignIns(ctx, actor, query))
    yield csvLine([
      new Date(Number(row.at) * 1000).toISOString(),
      row.agent_id,
      row.client_id,
      row.client_name,
      outcomeText(row.outcome),
      row.outcome,
      row.model,
      row.ip,
      row.user_agent ? describeUserAgent(row.user_agent) : '',
      row.user_agent,
    ]);
}

/** A file name from an id: ids of websites may be URLs (client metadata documents). */
const fileSafe = (id: string) => id.replace(/[^\w-]+/g, '_').slice(0, 80);

/** The form shown again with the refused field's message beside it. */
export const refusedForm = (form: Form | undefined, error: InvalidField): ShownState => ({
  values: formValues(form),
  errors: { [error.field]: error.description },
});

/** An action on an agent or a client, by an operation: what it did, as the notice to show (`agent_renamed`). */
type Action<Thing> = (actor: Actor, thing: Thing) => Promise<string>;

/** Shows a thing's page, with a form's values and errors and a status (400 for refused forms). */
type ShowThing<Thing> = (
  request: FastifyRequest,
  reply: FastifyReply,
  thing: Thing,
  state: ShownState,
  status?: number,
) => Promise<unknown>;

/**
 * The `act` of an area: runs an action on a thing the actor may reach (else 404) and redirects
 * to `where` (the thing's page unless said otherwise) with the notice the action returns; an
 * InvalidField shows the thing's page again with the message beside its field.
 *
 * @example
 * const act = actOn(area, { reachable, show, pageOf: (agent) => agentPath(agent.id) });
 * scope.post('/agents/:id/rename', { preHandler: guard }, (request, reply) =>
 *   act(request, reply, async (actor, agent) => 'agent_renamed'));
 */
export function actOn<Thing>(
  area: ConsoleScope,
  thingOf: {
    reachable(actor: Actor, id: string): Promise<Thing>;
    show: ShowThing<Thing>;
    pageOf(thing: Thing): string;
  },
) {
  return async (
    request: Request,
    reply: FastifyReply,
    action: Action<Thing>,
    where: (thing: Thing) => string = thingOf.pageOf,
  ) => {
    const actor = area.actor(request);
    const thing = await thingOf.reachable(actor, request.params.id);
    try {
      return area.redirect(reply, `${where(thing)}?notice=${await action(actor, thing)}`);
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return thingOf.show(request, reply, thing, refusedForm(request.body, error), 400);
    }
  };
}

/** An agent or a website, as the routes the two areas share see it. */
export interface OwnedThing<Thing extends { id: string }> {
  /** Its area's path under /console: '/agents' or '/websites'. */
  path: string;
  /** What the notices and the history's file name are prefixed with: 'agent' or 'website'. */
  kind: string;
  /** It, if the actor may reach it; NotFound otherwise. */
  reachable(actor: Actor, id: string): Promise<Thing>;
  /** Its page again, with a form's errors. */
  show: ShowThing<Thing>;
  /** Runs an action on it and redirects with the notice the action returns (see actOn). */
  act(request: Request, reply: FastifyReply, action: Action<Thing>): Promise<unknown>;
  /** Its page. */
  pageOf(thing: Thing): string;
  /** Issues a new secret, the old one working `grace` seconds longer (its operation). */
  rotate(ctx: Context, actor: Actor, id: string, grace: number): Promise<{ secret: string }>;
  /** The page that shows the new secret, once. */
  secretPage(
    page: Awaited<ReturnType<ConsoleScope['page']>>,
    input: { thing: Thing; secret: string; until: number | null },
  ): string;
  /** Disables it (active false) or enables it again (its operation). */
  setActive(ctx: Context, actor: Actor, id: string, active: boolean): Promise<unknown>;
  /** Revokes its grants (its operation). */
  revokeGrants(ctx: Context, actor: Actor, id: string): Promise<unknown>;
  /** Whose sign-ins are its history. */
  historyOf(thing: Thing): HistoryOf;
}

/**
 * Registers POST {path}/:id/rotate (and GET /new-secret, its page), /disable, /enable and
 * /revoke-grants, and GET {path}/:id/history.csv (the history as its filters select it), for `owned`.
 *
 * @example
 * ownedRoutes(scope, area, { path: '/agents', kind: 'agent', reachable, show, act, ... });
 */
export function ownedRoutes<Thing extends { id: string }>(
  scope: FastifyInstance,
  area: ConsoleScope,
  owned: OwnedThing<Thing>,
): void {
  const { ctx, guard } = area;
  const { path, kind } = owned;

  // The whole filtered history, streamed; a refused filter shows the page with its message instead.
  scope.get<{ Params: Params; Querystring: Form }>(`${path}/:id/history.csv`, async (request, reply) => {
    const actor = area.actor(request);
    const thing = await owned.reachable(actor, request.params.id);
    const of = owned.historyOf(thing);
    const counterparts = await signInCounterparts(ctx, actor, of);
    const parsed = parseHistoryFilters(request.query, otherSide(of), counterparts, ctx.clock());
    if (Object.keys(parsed.errors).length > 0)
      return owned.show(request, reply, thing, { notice: REFUSED_FILTER, query: request.query }, 400);
    const query = { ...parsed.query, ...of };
    return reply
      .code(200)
      .headers({
        'content-type': 'text/csv; charset=utf-8; header=present',
        'content-disposition': `attachment; filename="${kind}-${fileSafe(thing.id)}-sign-ins.csv"`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      })
      .send(Readable.from(historyCsv(ctx, actor, query)));
  });

  /** Where a rotation's new secret is shown, once. */
  const newSecretPath = (thing: Thing) => `${owned.pageOf(thing)}/new-secret`;

  // A rotation shows the new secret once, on the page its redirect leads to (../flash.ts).
  scope.post<{ Params: Params; Body: Form }>(`${path}/:id/rotate`, { preHandler: guard }, async (request, reply) => {
    const actor = area.actor(request);
    const thing = await owned.reachable(actor, request.params.id);
    let grace: number;
    try {
      grace = graceOf(request.body?.grace);
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return owned.show(request, reply, thing, { errors: { [error.field]: error.description } }, 400);
    }
    const { secret } = await owned.rotate(ctx, actor, thing.id, grace);
    return area.redirectOnce(request, reply, newSecretPath(thing), {
      secret,
      until: grace > 0 ? ctx.clock() + grace : null,
    });
  });
  scope.get<{ Params: Params }>(`${path}/:id/new-secret`, async (request, reply) => {
    const thing = await owned.reachable(area.actor(request), request.params.id);
    const once = await area.takeOnce<{ secret: string; until: number | null }>(request, newSecretPath(thing));
    if (!once) return area.redirect(reply, `${owned.pageOf(thing)}?notice=shown_once`);
    return area.send(reply, owned.secretPage(await area.page(request, reply), { thing, ...once }));
  });

  // The notices agent_disabled, agent_enabled, website_disabled and website_enabled.
  for (const active of [false, true]) {
    const action = active ? 'enable' : 'disable';
    scope.post<{ Params: Params; Body: Form }>(`${path}/:id/${action}`, { preHandler: guard }, (request, reply) =>
      owned.act(request, reply, async (actor, thing) => {
        await owned.setActive(ctx, actor, thing.id, active);
        return `${kind}_${action}d`;
      }),
    );
  }

  scope.post<{ Params: Params; Body: Form }>(`${path}/:id/revoke-grants`, { preHandler: guard }, (request, reply) =>
    owned.act(request, reply, async (actor, thing) => {
      await owned.revokeGrants(ctx, actor, thing.id);
      return 'grants_revoked';
    }),
  );
}
