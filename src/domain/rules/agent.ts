/**
 * The rules of an agent's fields, once for every entry point (the CLI's registerAgent, the
 * console's forms). A leaf: it imports nothing from the rest of the domain.
 */
import type { Problem } from './problem.ts';

/** The longest agent name. */
export const MAX_AGENT_NAME_LENGTH = 200;

/** What an owner email must look like: something, an @, something, no spaces. */
export const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export type AgentRule = 'empty' | 'too_long' | 'not_an_email';

/**
 * What is wrong with an agent's name (already trimmed): empty, or longer than
 * {@link MAX_AGENT_NAME_LENGTH} UTF-16 code units.
 *
 * @example
 * agentNameProblems('Research assistant'); // []
 * agentNameProblems(''); // [{ field: 'name', rule: 'empty', message: 'must not be empty' }]
 */
export function agentNameProblems(name: string): Problem<AgentRule>[] {
  if (!name) return [{ field: 'name', rule: 'empty', message: 'must not be empty' }];
  if (name.length > MAX_AGENT_NAME_LENGTH)
    return [{ field: 'name', rule: 'too_long', message: `is longer than ${MAX_AGENT_NAME_LENGTH} characters` }];
  return [];
}

/**
 * What is wrong with an agent's owner email.
 *
 * @example
 * ownerEmailProblems('ada@example.com'); // []
 * ownerEmailProblems('ada'); // [{ field: 'owner_email', rule: 'not_an_email', message: 'is not an email address' }]
 */
export function ownerEmailProblems(email: string): Problem<AgentRule>[] {
  return EMAIL.test(email) ? [] : [{ field: 'owner_email', rule: 'not_an_email', message: 'is not an email address' }];
}
