/**
 * Clients as their owners register them in the console, whose pages call them websites
 * (docs/reference/glossary.md, docs/design.md §11), with the same rules as the CLI.
 */
import type { Context } from '../context.ts';
import { type NewClient, registerClient } from '../domain/clients.ts';
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
 * The form's fields as a NewClient, or InvalidField naming what to fix. A public client (no
 * secret) may be chosen only while the server lets public clients sign in.
 */
export function clientInput(form: ClientForm, accountId: string, publicClients = false): NewClient {
  const name = (form.name ?? '').trim();
  const uris = (form.redirect_uris ?? '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  // The client rules (../domain/rules/client.ts), in the form's words; the form's name field is
  // "name" (client_name on the wire).
  const [problem] = [...clientNameProblems(name), ...redirectUrisProblems(uris)];
  if (problem) throw clientFieldError(problem, uris);
  const approval = form.approval ?? 'auto';
  if (approval !== 'auto' && approval !== 'manual')
    throw new InvalidField('approval', 'Choose automatic or manual approval.');
  const clientType = form.client_type ?? 'confidential';
  if (clientType !== 'confidential' && (clientType !== 'public' || !publicClients)) {
    throw new InvalidField(
      'client_type',
      publicClients
        ? 'Choose a website with a server or an app without one.'
        : 'This server does not let public clients sign in.',
    );
  }
  return { name, redirectUris: uris, approval: approval as Approval, accountId, public: clientType === 'public' };
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
