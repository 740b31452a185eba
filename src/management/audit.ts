/**
 * The audit of management acts (docs/design.md §11, §17): one word per act, whichever door it
 * came through, in the console's activity and the API's `/activity`. The words are the ones the
 * console has always stored (`website.update`: the console's word for a client), so older rows
 * read the same. The door is said in the detail: nothing for the console, `cli` for the command,
 * `key key_…` for the API.
 */
import type { Context } from '../context.ts';
import { actingAs } from '../domain/webhooks/actor.ts';
import { type Actor, webhookActorOf } from './actor.ts';

/** Every act a management operation records. */
export type Act =
  | `agent.${'create' | 'rename' | 'rotate_secret' | 'rotate_key' | 'disable' | 'enable' | 'revoke_grants' | 'revoke_site' | 'delete' | 'policy'}`
  | `website.${'create' | 'update' | 'rotate_secret' | 'disable' | 'enable' | 'revoke_grants' | 'delete' | 'test_sign_in'}`
  | 'grant.revoke'
  | `api_key.${'create' | 'revoke' | 'revoke_all'}`
  | `webhook.${'create' | 'update' | 'disable' | 'enable' | 'delete' | 'rotate_secret' | 'redeliver' | 'test'}`
  | `admin.${'create_account' | 'rename_account' | 'set_role' | 'disable_account' | 'enable_account' | 'setup_link' | 'verify_email' | 'revoke_link'}`
  | 'account.invite'
  | `signing_key.${'rotate' | 'rotate_now'}`;

const acted = new WeakSet<Actor>();

/**
 * Records `act` on `target` as `actor`'s, with what the act changed in `detail` (never a secret).
 *
 * @example
 * await recordAct(ctx, actor, 'agent.rename', agent.id, 'Research assistant');
 */
export async function recordAct(
  ctx: Pick<Context, 'store' | 'clock'>,
  actor: Actor,
  act: Act,
  target: string | null,
  detail: string | null = null,
): Promise<void> {
  const door = actor.door === 'cli' ? 'cli' : actor.key ? `key ${actor.key.id}` : null;
  const said = door === null ? detail : detail === null ? door : `${door}: ${detail}`;
  await ctx.store.activity.record({
    at: ctx.clock(),
    actor_id: actor.account?.id ?? null,
    action: act,
    target,
    ip: actor.ip,
    detail: said?.slice(0, 512) ?? null,
  });
  acted.add(actor);
}

/**
 * Records a call of the management API: the key's last use and, unless the call acted (its act
 * is its record), the call as `api.<operationId>` with its method, path and status.
 *
 * @example
 * await recordCall(ctx, caller, { operation: 'listAgents', target: null, request: 'GET /api/admin/v1/agents', status: 200 });
 */
export async function recordCall(
  ctx: Pick<Context, 'store' | 'clock'>,
  caller: Actor & { key: NonNullable<Actor['key']>; account: NonNullable<Actor['account']> },
  call: { operation: string; target: string | null; request: string; status: number },
): Promise<void> {
  const now = ctx.clock();
  const acted = hasActed(caller) && call.status < 400;
  await ctx.store.apiKeys.recordCall(
    caller.key.id,
    now,
    caller.ip,
    acted
      ? null
      : {
          at: now,
          actor_id: caller.account.id,
          action: `api.${call.operation}`,
          target: call.target,
          ip: caller.ip,
          detail: `${call.request} → ${call.status} (key ${caller.key.id})`.slice(0, 512),
        },
  );
}

/**
 * Whether `actor` recorded an act: the API records a call that acted by its act alone, and a
 * call that did not (a read, a refusal) as the call.
 */
const hasActed = (actor: Actor): boolean => acted.has(actor);

/**
 * Runs `work` as `actor`, who is then the `actor` of every webhook event it announces.
 *
 * @example
 * return asActor(actor, () => setAgentStatus(ctx, agent.id, 'disabled'));
 */
export const asActor = <T>(actor: Actor, work: () => T): T => actingAs(webhookActorOf(actor), work);
