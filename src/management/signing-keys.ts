/**
 * The signing keys, as an admin sees and rotates them (docs/design.md §19): the same for every
 * door. The private halves never leave the domain; the views show ids, states and times.
 */
import type { Static } from '@sinclair/typebox';
import type { Context } from '../context.ts';
import { type Actor, requireAdmin, requireWrite } from './actor.ts';
import { recordAct } from './audit.ts';
import { type SigningKeyView, signingKeyView } from './views.ts';

type Deps = Pick<Context, 'store' | 'clock' | 'signingKeys'>;
type View = Static<typeof SigningKeyView>;

/**
 * Every signing key of the shared set, oldest first: next, current and the retired ones still
 * published (an admin's).
 *
 * @example
 * const keys = await listSigningKeys(ctx, operator()); // [{ kid, alg: 'ES256', state: 'current', … }, …]
 */
export async function listSigningKeys(ctx: Deps, actor: Actor): Promise<View[]> {
  requireAdmin(actor);
  return (await ctx.signingKeys.list()).map(signingKeyView);
}

/** What an on-demand rotation asks: at once (a key leaked), and whether earlier keys leave the key set too. */
export interface RotateInput {
  /** A new key pair signs at once, however young the next key is (the emergency rotation). */
  now?: boolean;
  /** With `now`: every earlier key leaves the key set at once; the tokens it signed stop verifying. */
  revokePrevious?: boolean;
}

/**
 * Rotates on demand: the next key signs from now, the current one retires (published until its
 * last token expires), a new next key is published. Conflict (409) when no key signs (HS256) or
 * the next key has not been published for a whole JWKS cache period yet. With `now`, a new key
 * pair signs at once (recorded as `signing_key.rotate_now`); with `revokePrevious` too, every
 * earlier key is withdrawn from the key set at once.
 *
 * @example
 * const keys = await rotateSigningKey(ctx, operator()); // the set after the rotation
 * await rotateSigningKey(ctx, operator(), { now: true, revokePrevious: true }); // a key leaked
 */
export async function rotateSigningKey(ctx: Deps, actor: Actor, input: RotateInput = {}): Promise<View[]> {
  requireAdmin(actor);
  requireWrite(actor);
  const keys = await ctx.signingKeys.rotate(input);
  const current = keys.find((key) => key.state === 'current');
  const signs = current ? `${current.alg} key signs now` : null;
  await recordAct(
    ctx,
    actor,
    input.now ? 'signing_key.rotate_now' : 'signing_key.rotate',
    current?.kid ?? null,
    signs && input.revokePrevious ? `${signs}; earlier keys withdrawn from the key set` : signs,
  );
  return keys.map(signingKeyView);
}
