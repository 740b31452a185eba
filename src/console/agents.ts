/**
 * What the console's agent forms say that the operations (src/management/agents.ts) take as
 * values: a public key pasted as text, a grace period chosen from a list.
 */
import type { AgentKey } from '../domain/agent-keys.ts';
import { readPublicKey } from '../domain/agent-keys.ts';
import { InvalidField } from '../errors.ts';

/** Grace periods a rotation may keep the old secret for, in seconds (the form's choices). */
export const GRACE_CHOICES = [0, 3600, 86400, 604800] as const;

/**
 * The form's public key (a JWK pasted or uploaded as text), or InvalidField in the key rule's
 * words; null when the field is empty (the agent gets a secret).
 *
 * @example
 * const key = publicKeyField(request.body?.public_key); // null: a secret agent
 */
export function publicKeyField(raw: string | undefined, name = 'public_key'): AgentKey | null {
  if (raw === undefined || raw.trim() === '') return null;
  const read = readPublicKey(raw.trim());
  if ('problem' in read) throw new InvalidField(name, read.problem);
  return read.key;
}

/** The form's grace choice in seconds, or InvalidField. */
export function graceOf(raw: string | undefined): number {
  const grace = Number(raw ?? '0');
  if (!(GRACE_CHOICES as readonly number[]).includes(grace))
    throw new InvalidField('grace', 'Choose how long the old secret keeps working.');
  return grace;
}
