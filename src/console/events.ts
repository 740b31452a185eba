/** The audit of console actions (docs/design.md §11): who did what to what, when and from where. */
import type { Context } from '../context.ts';
import type { AccountRecord } from '../store/accounts.ts';

/**
 * @example
 * await recordConsoleEvent(ctx, actor, 'agent.rotate_secret', agent.id, request.ip, 'grace 3600 s');
 */
export async function recordConsoleEvent(
  ctx: Pick<Context, 'store' | 'clock'>,
  actor: AccountRecord | null,
  action: string,
  target: string | null,
  ip: string | null,
  detail: string | null = null,
): Promise<void> {
  await ctx.store.activity.record({
    at: ctx.clock(),
    actor_id: actor?.id ?? null,
    action,
    target,
    ip,
    detail: detail?.slice(0, 512) ?? null,
  });
}
