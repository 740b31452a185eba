/**
 * The rules of a client's fields (a "website" in the console), once for every entry point that
 * registers or describes a client: registerClient (the CLI, the console, dynamic registration),
 * the console's website form, dynamic registration (RFC 7591) and Client ID Metadata Documents.
 * Each rule returns Problems (./problem.ts); each entry point throws the first in its own error
 * shape and wording. A leaf: it imports nothing from the rest of the domain but the other rules.
 */
import { isGrantType, servedGrantTypes } from './grant-type-names.ts';
import type { Problem } from './problem.ts';

export const MAX_REDIRECT_URIS = 10;
export const MAX_REDIRECT_URI_LENGTH = 2000;
/** The longest client_id: an issued one is far shorter; a metadata document's URL may take all of it. */
export const MAX_CLIENT_ID_LENGTH = 512;
/** The longest client name, shown on the authorization page. */
export const MAX_CLIENT_NAME_LENGTH = 200;
/** The longest resource indicator (RFC 8707). */
export const MAX_RESOURCE_LENGTH = 1000;
/**
 * What a name a client chose itself (a metadata document, a registration) may not carry: control
 * characters, the bidirectional marks that can make a name read as another, and lone surrogates,
 * which would be stored as U+FFFD and read back changed.
 */
export const UNDISPLAYABLE_IN_NAME = /[\p{Cc}\p{Cs}\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
/** Visible ASCII, no space: what every issued identifier and every registered redirect URI consists of. */
export const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
/** The hosts a redirect URI may name over plain http: the person's own machine (RFC 8252 §8.3). */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);
/** What the authorization response appends to a redirect URI; a registered query must leave them free. */
const RESPONSE_PARAMETERS = ['code', 'state', 'iss', 'error', 'error_description'];

/** Whether `id` could name a client at all: every client_id is visible ASCII within the limit. */
export const couldBeClientId = (id: string) => id.length <= MAX_CLIENT_ID_LENGTH && VISIBLE_ASCII.test(id);

export type ClientRule =
  | 'empty'
  | 'too_long'
  | 'undisplayable'
  | 'none'
  | 'too_many'
  | 'invalid'
  | 'public_resource_server'
  | 'not_served'
  | 'no_authorization_code'
  | 'not_code';
export type ClientProblem = Problem<ClientRule>;

/**
 * Why a redirect URI cannot be registered, or null when it can: absolute, no fragment,
 * no userinfo, https — or http for localhost, 127.0.0.1 and [::1] only (docs/contract.md, RFC 8252 §8.3).
 * Worded to follow the URI ("redirect URI X must not contain a fragment").
 *
 * @example
 * redirectUriProblem('https://app.example/cb'); // null
 * redirectUriProblem('https://app.example/cb#x'); // 'must not contain a fragment'
 */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `is longer than ${MAX_REDIRECT_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  // URL parsers silently drop tabs and newlines and read a backslash as a slash; a Location
  // header carries only ASCII. A URI must be registered exactly as it will travel
  // (percent-encoded, punycode host), so that what matches is what the browser is sent to.
  if (!VISIBLE_ASCII.test(uri)) return 'must consist of visible ASCII characters (percent-encode the rest)';
  if (uri.includes('\\')) return 'must not contain a backslash';
  if (uri.includes('#')) return 'must not contain a fragment';
  if (url.username || url.password) return 'must not contain user information';
  const taken = RESPONSE_PARAMETERS.filter((name) => url.searchParams.has(name));
  if (taken.length > 0)
    return `must not already carry ${taken.join(', ')} in its query (the server adds them to the redirect)`;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return 'must use https (http is allowed only for localhost, 127.0.0.1 and [::1])';
}

/**
 * Why a value cannot be a resource indicator, or null when it can: an absolute URI (RFC 3986
 * §4.3) without a fragment (RFC 8707 §2), spelled in visible ASCII.
 *
 * @example
 * resourceProblem('https://mcp.example.com/mcp'); // null
 * resourceProblem('/mcp'); // 'must be an absolute URI'
 */
export function resourceProblem(value: string): string | null {
  if (value.length > MAX_RESOURCE_LENGTH) return `must be at most ${MAX_RESOURCE_LENGTH} characters`;
  if (!VISIBLE_ASCII.test(value)) return 'must consist of visible ASCII characters';
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value) || !URL.canParse(value)) return 'must be an absolute URI';
  if (value.includes('#')) return 'must not contain a fragment';
  return null;
}

export interface ClientNameOptions {
  /**
   * A name the client chose itself (dynamic registration, a metadata document) may not carry
   * {@link UNDISPLAYABLE_IN_NAME}; one an operator or owner typed (CLI, console) is not checked
   * for it.
   */
  chosenByClient?: boolean;
  /**
   * How the length is counted: in UTF-16 code units (the CLI, the console, registration), or in
   * code points (a metadata document, whose rules were written that way).
   */
  measure?: 'code units' | 'code points';
}

/**
 * What is wrong with a client's name (already trimmed): empty, longer than
 * {@link MAX_CLIENT_NAME_LENGTH}, and, for a name the client chose, undisplayable characters.
 *
 * @example
 * clientNameProblems('Shop'); // []
 * clientNameProblems('x'.repeat(201)); // [{ field: 'client_name', rule: 'too_long', message: 'is longer than 200 characters' }]
 */
export function clientNameProblems(name: string, options: ClientNameOptions = {}): ClientProblem[] {
  const field = 'client_name';
  if (!name) return [{ field, rule: 'empty', message: 'is missing or empty' }];
  const problems: ClientProblem[] = [];
  const length = options.measure === 'code points' ? [...name].length : name.length;
  if (length > MAX_CLIENT_NAME_LENGTH)
    problems.push({ field, rule: 'too_long', message: `is longer than ${MAX_CLIENT_NAME_LENGTH} characters` });
  if (options.chosenByClient && UNDISPLAYABLE_IN_NAME.test(name))
    problems.push({
      field,
      rule: 'undisplayable',
      message: 'contains control, text-direction or unpaired surrogate characters',
    });
  return problems;
}

/**
 * What is wrong with a client's redirect URIs: none when `required`, more than
 * {@link MAX_REDIRECT_URIS}, and each one {@link redirectUriProblem} refuses (with its index).
 * Past the limit the URIs themselves are not read.
 *
 * @example
 * redirectUrisProblems(['https://app.example/cb']); // []
 * redirectUrisProblems(['https://app.example/cb#x']); // [{ field: 'redirect_uris', rule: 'invalid', index: 0, message: 'must not contain a fragment' }]
 */
export function redirectUrisProblems(uris: readonly string[], options: { required?: boolean } = {}): ClientProblem[] {
  const field = 'redirect_uris';
  if (uris.length === 0)
    return options.required === false ? [] : [{ field, rule: 'none', message: 'must name at least one redirect URI' }];
  if (uris.length > MAX_REDIRECT_URIS)
    return [{ field, rule: 'too_many', message: `may name at most ${MAX_REDIRECT_URIS} redirect URIs` }];
  return uris.flatMap((uri, index): ClientProblem[] => {
    const message = redirectUriProblem(uri);
    return message ? [{ field, rule: 'invalid', message, index }] : [];
  });
}

/**
 * What is wrong with the resources (RFC 8707) a client serves: each one {@link resourceProblem}
 * refuses (with its index), and a public client serving any: a resource server authenticates
 * to introspect the tokens issued for it.
 *
 * @example
 * resourcesProblems(['https://mcp.example.com/mcp'], { public: false }); // []
 * resourcesProblems(['https://mcp.example.com/mcp'], { public: true }); // [{ field: 'token_endpoint_auth_method', rule: 'public_resource_server', … }]
 */
export function resourcesProblems(resources: readonly string[], options: { public?: boolean } = {}): ClientProblem[] {
  const problems = resources.flatMap((resource, index): ClientProblem[] => {
    const message = resourceProblem(resource);
    return message ? [{ field: 'resource', rule: 'invalid', message, index }] : [];
  });
  if (options.public && resources.length > 0)
    problems.push({
      field: 'token_endpoint_auth_method',
      rule: 'public_resource_server',
      message: 'cannot be none for a resource server: it authenticates to introspect tokens',
    });
  return problems;
}

/**
 * What is wrong with the grant types a client asks for: a grant not served here, and a list
 * without authorization_code, the only grant that starts a sign-in.
 *
 * @example
 * grantTypesProblems(['authorization_code', 'refresh_token']); // []
 * grantTypesProblems(['refresh_token']); // [{ field: 'grant_types', rule: 'no_authorization_code', … }]
 */
export function grantTypesProblems(
  grantTypes: readonly string[],
  /** The settings the grants served depend on: with ACTION_APPROVALS, the CIBA grant too. */
  config: { actionApprovals: boolean } = { actionApprovals: false },
): ClientProblem[] {
  const field = 'grant_types';
  const problems: ClientProblem[] = [];
  if (!grantTypes.every((name) => isGrantType(name, config)))
    problems.push({
      field,
      rule: 'not_served',
      message: `may contain only ${servedGrantTypes(config).join(' and ')}`,
    });
  if (!grantTypes.includes('authorization_code'))
    problems.push({
      field,
      rule: 'no_authorization_code',
      message: 'must include authorization_code, the only grant that starts a sign-in',
    });
  return problems;
}

/**
 * What is wrong with the response types a client asks for: anything but code, and no code at
 * all (the authorization_code grant uses it, RFC 7591 §2.1).
 *
 * @example
 * responseTypesProblems(['code']); // []
 * responseTypesProblems(['token']); // [{ field: 'response_types', rule: 'not_code', message: 'may contain only code' }]
 */
export function responseTypesProblems(responseTypes: readonly string[]): ClientProblem[] {
  const field = 'response_types';
  const problems: ClientProblem[] = [];
  if (!responseTypes.every((type) => type === 'code'))
    problems.push({ field, rule: 'not_code', message: 'may contain only code' });
  if (responseTypes.length === 0) problems.push({ field, rule: 'none', message: 'must include code' });
  return problems;
}
