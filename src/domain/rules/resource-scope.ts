/**
 * The rules of a resource server's scopes (docs/design.md §13, "Scopes of resource servers"):
 * the scopes a resource-server client registers for its resources, each with a description the
 * authorization page shows a person. Once for every door (the CLI, the console, the management
 * API). A leaf: it imports nothing from the rest of the domain but the other rules.
 */
import type { ResourceScope } from '../../store/clients.ts';
import { UNDISPLAYABLE_IN_NAME } from './client.ts';
import type { Problem } from './problem.ts';

export type { ResourceScope };

/** The scopes of the contract and of OpenID Connect, which no resource server may claim. */
export const RESERVED_SCOPES: readonly string[] = ['openid', 'email', 'profile', 'offline_access'];
/** The longest scope name. */
export const MAX_SCOPE_NAME_LENGTH = 64;
/** The longest description. */
export const MAX_SCOPE_DESCRIPTION_LENGTH = 200;
/** The most scopes one resource server registers. */
export const MAX_RESOURCE_SCOPES = 20;
/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ): visible ASCII but `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export type ResourceScopeRule = 'empty' | 'too_long' | 'invalid' | 'reserved' | 'repeated' | 'too_many' | 'no_resource';
export type ResourceScopeProblem = Problem<ResourceScopeRule>;

/**
 * What is wrong with a resource server's scopes: more than {@link MAX_RESOURCE_SCOPES}; a name
 * that is not an RFC 6749 scope-token, is longer than {@link MAX_SCOPE_NAME_LENGTH}, is one of
 * {@link RESERVED_SCOPES} or is given twice; a description that is empty, longer than
 * {@link MAX_SCOPE_DESCRIPTION_LENGTH} or carries control or text-direction characters; scopes
 * on a client that serves no resource. Descriptions are plain text: they are escaped wherever
 * they are shown, never read as HTML.
 *
 * @example
 * resourceScopesProblems([{ name: 'notes:read', description: 'Read your notes' }], 1); // []
 * resourceScopesProblems([{ name: 'openid', description: 'Sign in' }], 1);
 * // [{ field: 'scopes', rule: 'reserved', index: 0, message: 'openid is a scope of this server, not of a resource server' }]
 */
export function resourceScopesProblems(
  scopes: readonly ResourceScope[],
  resourceCount: number,
): ResourceScopeProblem[] {
  const field = 'scopes';
  if (scopes.length === 0) return [];
  if (resourceCount === 0)
    return [{ field, rule: 'no_resource', message: 'belong to a resource server: register its resource too' }];
  if (scopes.length > MAX_RESOURCE_SCOPES)
    return [{ field, rule: 'too_many', message: `may name at most ${MAX_RESOURCE_SCOPES} scopes` }];
  const seen = new Set<string>();
  return scopes.flatMap(({ name, description }, index): ResourceScopeProblem[] => {
    const problem = (rule: ResourceScopeRule, message: string): ResourceScopeProblem[] => [
      { field, rule, index, message },
    ];
    if (!name) return problem('empty', 'must each have a name');
    if (name.length > MAX_SCOPE_NAME_LENGTH)
      return problem('too_long', `${name.slice(0, 20)}… is longer than ${MAX_SCOPE_NAME_LENGTH} characters`);
    if (!SCOPE_TOKEN.test(name))
      return problem('invalid', `${name} must be visible ASCII characters without spaces, " or \\ (RFC 6749 §3.3)`);
    if (RESERVED_SCOPES.includes(name))
      return problem('reserved', `${name} is a scope of this server, not of a resource server`);
    if (seen.has(name)) return problem('repeated', `name ${name} more than once`);
    seen.add(name);
    const text = description.trim();
    if (!text) return problem('empty', `${name} needs a description: what it allows, in words a person reads`);
    if (text.length > MAX_SCOPE_DESCRIPTION_LENGTH)
      return problem('too_long', `${name}'s description is longer than ${MAX_SCOPE_DESCRIPTION_LENGTH} characters`);
    if (UNDISPLAYABLE_IN_NAME.test(text))
      return problem('invalid', `${name}'s description contains control or text-direction characters`);
    return [];
  });
}

/**
 * A scope as one line of text gives it (the CLI's `--scope`, a line of the console's form): the
 * name, a space, the description. A scope-token has no space, so the first one divides them.
 *
 * @example
 * resourceScopeOf('notes:read Read your notes'); // { name: 'notes:read', description: 'Read your notes' }
 * resourceScopeOf('notes:read'); // { name: 'notes:read', description: '' } (refused by the rules)
 */
export function resourceScopeOf(line: string): ResourceScope {
  const text = line.trim();
  const space = text.search(/\s/);
  return space === -1
    ? { name: text, description: '' }
    : { name: text.slice(0, space), description: text.slice(space + 1).trim() };
}
