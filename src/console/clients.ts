/**
 * What the console's website forms say (its pages call clients websites: docs/reference/glossary.md),
 * read into what the operations (src/management/clients.ts) take, each refusal beside its field
 * in the form's words; the operations then apply the rules of registration.
 */
import type { ClientActionsInput } from '../domain/client-actions.ts';
import type { ClientChanges, ClientKeysInput } from '../domain/clients.ts';
import { keySetUriProblem, readKeySet } from '../domain/client-keys/key-set.ts';
import type { NewClientInput } from '../management/clients.ts';
import {
  type ClientProblem,
  clientNameProblems,
  MAX_CLIENT_NAME_LENGTH,
  MAX_REDIRECT_URIS,
  redirectUrisProblems,
} from '../domain/rules/client.ts';
import { resourceScopeOf } from '../domain/rules/resource-scope.ts';
import type { ActionType, Approval, ClientRecord, ResourceScope } from '../store/clients.ts';
import { InvalidField } from '../errors.ts';

type ClientForm = {
  name?: string;
  redirect_uris?: string;
  approval?: string;
  client_type?: string;
  scopes?: string;
  jwks?: string;
  jwks_uri?: string;
  action_types?: string;
  backchannel_token_delivery_mode?: string;
  backchannel_client_notification_endpoint?: string;
};

/** What kinds of client this server lets sign in, beside a confidential one (always). */
export interface ClientKinds {
  /** PUBLIC_CLIENTS: apps without a secret. */
  publicClients: boolean;
  /** PRIVATE_KEY_JWT: servers that sign with keys instead of a secret. */
  privateKeyJwt: boolean;
  /** ACTION_APPROVALS: websites may register action types and ask owners to approve actions. */
  actionApprovals?: boolean;
}

/**
 * A website's actions as the form gives them: its action types as JSON text (as the keys form
 * takes a JWKS; empty for none), its token delivery ('' for none) and its notification
 * endpoint ('' for none), each read only when the form has the field; the rules of registration
 * check them (../domain/client-actions.ts).
 *
 * @example
 * actionsField({ action_types: '[{"type":"payment",…}]', backchannel_token_delivery_mode: 'poll' });
 * // { actions: { actionTypes: '[{"type":"payment",…}]', tokenDelivery: 'poll', notificationEndpoint: undefined } }
 */
export function actionsField(form: ClientForm): { actions?: ClientActionsInput } {
  const {
    action_types: types,
    backchannel_token_delivery_mode: mode,
    backchannel_client_notification_endpoint: endpoint,
  } = form;
  if (types === undefined && mode === undefined && endpoint === undefined) return {};
  return {
    actions: {
      actionTypes: types === undefined ? undefined : types.trim() === '' ? null : types,
      tokenDelivery: mode === undefined ? undefined : mode || null,
      notificationEndpoint: endpoint === undefined ? undefined : endpoint.trim() || null,
    },
  };
}

/** The form's text of a website's action types: their JSON, indented; empty for none. */
export const actionTypesText = (types: readonly ActionType[]) =>
  types.length === 0 ? '' : JSON.stringify(types, null, 2);

/** The registration form's kind of a client that signs with keys (private_key_jwt). */
export const KEYS_KIND = 'private_key_jwt';

/**
 * A resource server's scopes as the edit form writes them: one per line, the scope, a space, and
 * what it allows ("notes:read Read your notes"); the rules of registration check them.
 *
 * @example
 * scopesField('notes:read Read your notes\nnotes:write Add notes'); // [{ name: 'notes:read', … }, { name: 'notes:write', … }]
 */
export function scopesField(text: string): ResourceScope[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .map(resourceScopeOf);
}

/** The form's text of a resource server's scopes: one per line, the scope and its description. */
export const scopesText = (scopes: readonly ResourceScope[]) =>
  scopes.map((scope) => `${scope.name} ${scope.description}`).join('\n');

/**
 * The fields a registration and an edit share: the name, the redirect URIs (one per line; none
 * allowed only when `uris` are not required: a client that is only a resource server) and the
 * approval, or InvalidField naming what to fix.
 */
function websiteFields(
  form: ClientForm,
  options: { urisRequired: boolean } = { urisRequired: true },
): { name: string; uris: string[]; approval: Approval } {
  const name = (form.name ?? '').trim();
  const uris = (form.redirect_uris ?? '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  // The client rules (../domain/rules/client.ts), in the form's words; the form's name field is
  // "name" (client_name on the wire).
  const [problem] = [...clientNameProblems(name), ...redirectUrisProblems(uris, { required: options.urisRequired })];
  if (problem) throw clientFieldError(problem, uris);
  const approval = form.approval ?? 'auto';
  if (approval !== 'auto' && approval !== 'manual')
    throw new InvalidField('approval', 'Choose automatic or manual approval.');
  return { name, uris, approval };
}

/**
 * The form's fields as a NewClient, or InvalidField naming what to fix. A public client (no
 * secret) may be chosen only while the server lets public clients sign in, one that signs with
 * keys only while it accepts them (its key set pasted, or its jwks_uri: keysField).
 *
 * @example
 * clientInput({ name: 'Shop', redirect_uris: 'https://shop.example/cb', client_type: 'private_key_jwt', jwks_uri: 'https://shop.example/jwks.json' }, { publicClients: false, privateKeyJwt: true });
 */
export function clientInput(form: ClientForm, kinds: ClientKinds): NewClientInput {
  const { name, uris, approval } = websiteFields(form);
  const actions = actionsField(form);
  if (form.client_type === KEYS_KIND) {
    if (!kinds.privateKeyJwt)
      throw new InvalidField('client_type', 'This server does not let clients that sign with keys sign in.');
    return { name, redirectUris: uris, approval, type: 'confidential', keys: keysField(form), ...actions };
  }
  const type = publicChosen(form.client_type, kinds.publicClients) ? 'public' : 'confidential';
  return { name, redirectUris: uris, approval, type, ...actions };
}

/**
 * The keys a form gives a client that signs with keys: its key set pasted as JSON (jwks) or the
 * URL where it publishes one (jwks_uri), exactly one, checked by the key-set rule
 * (../domain/client-keys/key-set.ts), or InvalidField beside the field with the rule's words.
 *
 * @example
 * keysField({ jwks: '{"keys":[…]}' }); // { jwks: '{"keys":[…]}' }
 * keysField({ jwks: '{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}' }); // InvalidField('jwks', 'The key set contains private or symmetric key material: …')
 */
export function keysField(form: Pick<ClientForm, 'jwks' | 'jwks_uri'>): ClientKeysInput {
  const jwks = (form.jwks ?? '').trim();
  const jwksUri = (form.jwks_uri ?? '').trim();
  if (jwks !== '' && jwksUri !== '')
    throw new InvalidField('jwks', 'Give the public keys or the key set URL, not both.');
  if (jwksUri !== '') {
    const problem = keySetUriProblem(jwksUri);
    if (problem) throw new InvalidField('jwks_uri', `The key set URL ${problem}.`);
    return { jwksUri };
  }
  if (jwks === '')
    throw new InvalidField(
      'jwks',
      'Paste the public keys (a JWKS, {"keys": [...]}) or give the URL where the server publishes them.',
    );
  const read = readKeySet(jwks);
  if ('problem' in read) throw new InvalidField('jwks', `${keySetProblemSentence(read.problem)}.`);
  return { jwks };
}

/** The key-set rule's words as a sentence: "The key set is not JSON…", "In the key set, keys[0] is…". */
const keySetProblemSentence = (problem: string) =>
  problem.startsWith('the ') ? `T${problem.slice(1)}` : `In the key set, ${problem}`;

/**
 * Whether an owner chose a public client (no secret) over a confidential one (the default), or
 * InvalidField: a public client may be chosen only while the server lets public clients sign in.
 *
 * @example
 * publicChosen('public', ctx.config.publicClients); // true, or InvalidField without PUBLIC_CLIENTS
 */
export function publicChosen(clientType: string | undefined, publicClients: boolean): boolean {
  const chosen = clientType ?? 'confidential';
  if (chosen !== 'confidential' && (chosen !== 'public' || !publicClients)) {
    throw new InvalidField(
      'client_type',
      publicClients
        ? 'Choose a website with a server or an app without one.'
        : 'This server does not let public clients sign in.',
    );
  }
  return chosen === 'public';
}

/**
 * The edit form's fields as the changes of an existing client, checked as a registration's;
 * its kind (public or confidential) does not change. A resource server's form has its scopes
 * too, and, while ACTION_APPROVALS is on, every website's its actions.
 */
export function clientChanges(form: ClientForm, client: ClientRecord): ClientChanges {
  const { name, uris, approval } = websiteFields(form, { urisRequired: client.resources.length === 0 });
  const scopes = client.resources.length > 0 && form.scopes !== undefined ? scopesField(form.scopes) : undefined;
  return { name, redirectUris: uris, approval, ...(scopes === undefined ? {} : { scopes }), ...actionsField(form) };
}

/** A problem of the client rules as the form shows it, beside its field. */
function clientFieldError(problem: ClientProblem, uris: string[]): InvalidField {
  if (problem.field === 'client_name')
    return new InvalidField(
      'name',
      problem.rule === 'empty'
        ? 'Give the website a name; people see it on the sign-in page.'
        : `A name can be at most ${MAX_CLIENT_NAME_LENGTH} characters long.`,
    );
  if (problem.rule === 'none')
    return new InvalidField('redirect_uris', 'Enter at least one redirect URI, one per line.');
  if (problem.rule === 'too_many')
    return new InvalidField('redirect_uris', `Enter at most ${MAX_REDIRECT_URIS} redirect URIs.`);
  const uri = uris[problem.index!]!;
  return new InvalidField(
    'redirect_uris',
    `The redirect URI ${uri.length > 100 ? `${uri.slice(0, 100)}…` : uri} ${problem.message}.`,
  );
}
