/**
 * Clients as their owners register them in the console, whose pages call them websites
 * (docs/reference/glossary.md, docs/design.md §11), with the same rules as the CLI.
 */
import type { Context } from '../context.ts';
import { digest, randomId } from '../crypto.ts';
import { type ClientChanges, isPublicClient, type NewClient, registerClient, updateClient } from '../domain/clients.ts';
import {
  type ClientProblem,
  clientNameProblems,
  MAX_CLIENT_NAME_LENGTH,
  MAX_REDIRECT_URIS,
  redirectUrisProblems,
} from '../domain/rules/client.ts';
import type { AccountRecord } from '../store/console-types.ts';
import type { Approval, ClientRecord } from '../store/types.ts';
import { InvalidField } from '../errors.ts';

type Deps = Pick<Context, 'store' | 'secrets' | 'clock' | 'config'>;
type ClientForm = { name?: string; redirect_uris?: string; approval?: string; client_type?: string };

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
 * secret) may be chosen only while the server lets public clients sign in.
 */
export function clientInput(form: ClientForm, accountId: string, publicClients = false): NewClient {
  const { name, uris, approval } = websiteFields(form);
  return { name, redirectUris: uris, approval, accountId, public: publicChosen(form.client_type, publicClients) };
}

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
 * its kind (public or confidential) does not change.
 */
export function clientChanges(form: ClientForm, client: ClientRecord): ClientChanges {
  const { name, uris, approval } = websiteFields(form, { urisRequired: client.resources.length === 0 });
  return { name, redirectUris: uris, approval };
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

/**
 * @example
 * const { client, secret } = await createOwnedClient(ctx, account, { name: 'Shop', redirect_uris: 'https://shop.example/cb' });
 */
export function createOwnedClient(
  deps: Deps,
  account: AccountRecord,
  form: ClientForm,
): Promise<{ client: ClientRecord; secret: string | null }> {
  return registerClient(deps, clientInput(form, account.id, deps.config.publicClients));
}

/**
 * Saves an owner's edit of a website; InvalidField for the form, else the changed client.
 *
 * @example
 * const client = await editOwnedClient(ctx, client, { name: 'Shop', redirect_uris: 'https://shop.example/cb', approval: 'manual' });
 */
export async function editOwnedClient(deps: Deps, client: ClientRecord, form: ClientForm): Promise<ClientRecord> {
  if (client.source === 'metadata_document')
    throw new InvalidField('name', 'This client is described by its metadata document: change the document instead.');
  return updateClient(deps, client.id, clientChanges(form, client));
}

/**
 * The /authorize URL of a test sign-in (docs/design.md §11): a real authorization request for
 * the website, to one of its own registered redirect URIs, with a state, a nonce and a PKCE
 * challenge the console makes here. Nothing is kept: the code verifier is thrown away, so the
 * code the website's redirect URI receives can never be redeemed (by the website, the console or
 * anyone who sees the URL); the sign-in shows in the website's history. InvalidField when the
 * website cannot start one.
 *
 * @example
 * testSignInUrl(ctx.config, client, 'https://shop.example/callback');
 * // '/authorize?response_type=code&client_id=cli_…&redirect_uri=…&scope=openid+email+profile&state=…'
 */
export function testSignInUrl(
  config: Pick<Context['config'], 'publicClients'>,
  client: ClientRecord,
  redirectUri: string | undefined,
): string {
  if (client.status !== 'active')
    throw new InvalidField('redirect_uri', 'Enable the website first: a disabled website cannot start sign-ins.');
  if (client.redirect_uris.length === 0)
    throw new InvalidField('redirect_uri', 'Add a redirect URI first: a sign-in ends at one.');
  if (isPublicClient(client) && !config.publicClients)
    throw new InvalidField('redirect_uri', 'This server does not let public clients sign in.');
  const target = redirectUri ?? client.redirect_uris[0]!;
  if (!client.redirect_uris.includes(target))
    throw new InvalidField('redirect_uri', 'Choose one of the website’s redirect URIs.');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.id,
    redirect_uri: target,
    // A public client gets no ID token; /authorize drops openid for it.
    scope: 'openid email profile',
    state: randomId('test_', 16),
    nonce: randomId('', 16),
    code_challenge: digest(randomId('', 32)),
    code_challenge_method: 'S256',
  });
  return `/authorize?${query}`;
}

/**
 * What an edit changed, for the console's audit (console or CLI): the fields, with their new values.
 *
 * @example
 * clientChangesDetail(before, after); // 'name Shop; approval manual'
 */
export function clientChangesDetail(before: ClientRecord, after: ClientRecord): string {
  const changed = [
    before.name === after.name ? '' : `name ${after.name}`,
    before.redirect_uris.join(' ') === after.redirect_uris.join(' ')
      ? ''
      : `redirect URIs ${after.redirect_uris.join(' ')}`,
    before.approval === after.approval ? '' : `approval ${after.approval}`,
  ].filter(Boolean);
  return changed.join('; ') || 'no change';
}
