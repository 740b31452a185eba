/**
 * The management operations of a remote server, through its management API (/api/admin/v1,
 * docs/design.md §15): an HTTP client that answers what ./local.ts answers, and turns the
 * API's `{error, error_description}` into one line naming the server. The API key is sent only
 * over https, or plain http to a loopback address, and never printed.
 */
import packageJson from '../../package.json' with { type: 'json' };
import { emailKey, terminalSafe } from './common.ts';
import type {
  AccountView,
  AgentPolicyView,
  AgentView,
  ApiKey,
  ClientView,
  Management,
  Revoked,
  SigningKey,
  Webhook,
  WebhookDelivery,
} from './management.ts';

const API_PATH = 'api/admin/v1/';

/** A remote server to act on: its management API's address and the key to call it with. */
export interface RemoteTarget {
  /** The API's base, ending in /api/admin/v1/. */
  api: URL;
  apiKey: string;
}

/** What the command line gives (global options), beside the environment. */
export interface RemoteOptions {
  url?: string;
  apiKey?: string;
}

const given = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

/**
 * The remote server the command line or the environment names (`--url`/`AGENTAUTH_URL` and
 * `--api-key`/`AGENTAUTH_API_KEY`), or null to work on the database. Either alone, an address
 * that is no http(s) URL, and plain http to another host than a loopback address are refused
 * with one line.
 *
 * @example
 * remoteTarget({}, { AGENTAUTH_URL: 'https://id.example.com', AGENTAUTH_API_KEY: 'aak_…' });
 */
export function remoteTarget(options: RemoteOptions, env: NodeJS.ProcessEnv = process.env): RemoteTarget | null {
  const urlName = given(options.url) ? '--url' : 'AGENTAUTH_URL';
  const url = given(options.url) ?? given(env.AGENTAUTH_URL);
  const apiKey = given(options.apiKey) ?? given(env.AGENTAUTH_API_KEY);
  if (url === undefined && apiKey === undefined) return null;
  if (url === undefined)
    throw new Error(
      "an API key is given but no server: set AGENTAUTH_URL (or --url) to the server's address, or unset AGENTAUTH_API_KEY to work on the database",
    );
  if (apiKey === undefined)
    throw new Error(
      `${urlName} names a server but no API key is given: set AGENTAUTH_API_KEY (or --api-key) to a key made in the console or with \`agentauth api-key create\``,
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${urlName} must be the server's address, such as https://id.example.com (got "${url}")`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new Error(`${urlName} must be an https address, such as https://id.example.com (got "${url}")`);
  if (parsed.protocol === 'http:' && !isLoopback(parsed.hostname))
    throw new Error(
      `refusing to send the API key over plain http to ${parsed.host}: use https (plain http only to a loopback address: localhost, 127.0.0.0/8, [::1])`,
    );
  // The server's address, with or without the API's path.
  const base = parsed.pathname.replace(/\/+$/, '').replace(/\/api\/admin\/v1$/, '');
  return { api: new URL(`${base}/${API_PATH}`, parsed.origin), apiKey };
}

/**
 * A loopback address, where plain http never leaves the machine: a loopback literal (127.0.0.0/8,
 * [::1]; the URL parser writes every IPv4 spelling as dotted quads) or `localhost` itself. Not
 * other names, `*.localhost` included: RFC 6761 says they should resolve to loopback, but the
 * resolver decides, and one that forwards them (or a hosts file) may send the key elsewhere.
 */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** The most pages a list is followed for (100 records each): a server that pages on for ever is stopped. */
export const MAX_PAGES = 1000;

/** Every string of an answer as a terminal may show it (terminalSafe): a server's words are never acted on. */
function printable(value: unknown): unknown {
  if (typeof value === 'string') return terminalSafe(value);
  if (Array.isArray(value)) return value.map(printable);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [terminalSafe(name), printable(item)]));
  return value;
}

interface Call {
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** The representation's tag the change is made on (RFC 9110 If-Match). */
  ifMatch?: string;
}

/** The server refused a call: its status, and one line for the operator. */
class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** How often a policy change is tried again on a fresh read when another change landed between. */
const POLICY_ATTEMPTS = 5;

/** A page of a list, as the API answers it. */
interface Page<T> {
  data: T[];
  next_cursor?: string | null;
}

/**
 * The management operations of the server `target` names, over its API.
 *
 * @example
 * const agents = await remoteManagement(target).listAgents();
 */
export function remoteManagement(target: RemoteTarget): Management {
  const server = target.api.origin;

  async function call<T>(method: string, path: string, options: Call = {}): Promise<T> {
    return (await tagged<T>(method, path, options)).body;
  }

  /** A call, with the representation's tag (ETag) the server answered, if any. */
  async function tagged<T>(
    method: string,
    path: string,
    { query, body, ifMatch }: Call = {},
  ): Promise<{ body: T; etag: string | null }> {
    const url = new URL(path, target.api);
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${target.apiKey}`,
          accept: 'application/json',
          'user-agent': `agentauth-cli/${packageJson.version}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        // A redirect is reported, not followed: the key goes only where the operator said.
        redirect: 'manual',
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(`cannot reach ${server}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? printable(JSON.parse(text)) : undefined;
    } catch {
      json = undefined;
    }
    if (response.ok && json !== undefined) return { body: json as T, etag: response.headers.get('etag') };
    if (response.status >= 300 && response.status < 400)
      throw new Error(
        `${server} answered ${response.status}, a redirect to ${terminalSafe(response.headers.get('location') ?? '(nowhere)')}: set AGENTAUTH_URL to the address it redirects to`,
      );
    const problem = json as { error?: unknown; error_description?: unknown } | undefined;
    if (typeof problem?.error === 'string')
      throw new Refused(
        response.status,
        `${server} refused: ${typeof problem.error_description === 'string' ? problem.error_description : problem.error} (${response.status} ${problem.error})`,
      );
    throw new Error(
      `${server} answered ${response.status} without the management API's answer: is ${target.api.href} the address of an agentauth server?`,
    );
  }

  /**
   * Every item of a list, page after page: at most MAX_PAGES pages, and never the same cursor
   * twice, so a server that pages on for ever, or in a circle, stops the command with a message.
   */
  async function all<T>(path: string, query: Record<string, string> = {}): Promise<T[]> {
    const items: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let pages = 0; ; pages++) {
      if (pages === MAX_PAGES)
        throw new Error(
          `${server} answered more than ${MAX_PAGES} pages of ${path} (${MAX_PAGES * 100} records) and still named a next page: stopped`,
        );
      const page = await call<Page<T>>('GET', path, { query: { ...query, limit: '100', cursor } });
      if (!Array.isArray(page.data) || !(typeof page.next_cursor === 'string' || page.next_cursor == null))
        throw new Error(`${server} answered a page of ${path} that is not a list of the management API: stopped`);
      items.push(...page.data);
      cursor = page.next_cursor ?? undefined;
      if (cursor === undefined) return items;
      if (seen.has(cursor))
        throw new Error(`${server} named the same next page of ${path} twice (its paging goes in a circle): stopped`);
      seen.add(cursor);
    }
  }

  const at = (collection: string, id: string, action = '') =>
    `${collection}/${encodeURIComponent(id)}${action ? `/${action}` : ''}`;

  return {
    listAgents: () => all<AgentView>('agents'),
    createAgent({ name, owner, public_key }) {
      if (!owner && name === undefined)
        throw new Error("give --name (the agent then belongs to the API key's account) or --owner-email");
      const label = name ?? owner?.name ?? owner?.email;
      const key = public_key === undefined ? {} : { public_key };
      return call('POST', 'agents', {
        body: owner
          ? {
              name: label?.trim(),
              owner: {
                email: owner.email,
                ...(owner.name === undefined ? {} : { name: owner.name }),
                email_verified: !!owner.email_verified,
              },
              ...key,
            }
          : { name: label, ...key },
      });
    },
    rotateAgentKey: (id, publicKey) =>
      call('POST', at('agents', id, 'rotate-key'), { body: { public_key: publicKey } }),
    setAgentStatus: (id, status) => call('PATCH', at('agents', id), { body: { status } }),
    rotateAgentSecret: (id, grace) =>
      call('POST', at('agents', id, 'rotate-secret'), { body: { grace_seconds: grace } }),
    revokeAgentGrants: (id) => call<Revoked>('POST', at('agents', id, 'revoke-grants')),
    deleteAgent: (id) => call<Revoked>('DELETE', at('agents', id)),
    // Read with its tag, changed, written If-Match the tag: a change that landed between is
    // not overwritten but read again and the command's change applied to it.
    changeAgentPolicy: async (id, change) => {
      for (let attempt = 1; ; attempt++) {
        const read = await tagged<AgentPolicyView>('GET', at('agents', id, 'policy'));
        const next = change(read.body);
        if (next === null) return read.body;
        try {
          return await call<AgentPolicyView>('PUT', at('agents', id, 'policy'), {
            body: next,
            ifMatch: read.etag ?? undefined,
          });
        } catch (error) {
          if (!(error instanceof Refused && error.status === 412) || attempt === POLICY_ATTEMPTS) throw error;
        }
      }
    },

    listClients: () => all<ClientView>('clients'),
    createClient: (input) => call('POST', 'clients', { body: input }),
    updateClient: (id, changes) => call('PATCH', at('clients', id), { body: changes }),
    setClientStatus: (id, status) => call('PATCH', at('clients', id), { body: { status } }),
    rotateClientSecret: (id, grace) =>
      call('POST', at('clients', id, 'rotate-secret'), { body: { grace_seconds: grace } }),
    revokeClientGrants: (id) => call<Revoked>('POST', at('clients', id, 'revoke-grants')),
    deleteClient: (id) => call<Revoked>('DELETE', at('clients', id)),

    listAccounts: () => all<AccountView>('accounts'),
    // No API key makes an account with its setup link, or a setup link (docs/design.md §15): the
    // commands refuse a remote server before they get here.
    createAccount: () => Promise.reject(new Error('account create needs the database')),
    async accountByEmail(email) {
      emailKey(email); // the same refusal of a non-email as on the database
      const page = await call<Page<AccountView>>('GET', 'accounts', { query: { email } });
      const [account] = page.data;
      if (!account) throw new Error(`no account with the email ${email}`);
      return account;
    },
    setAccountStatus: (id, status) => call('PATCH', at('accounts', id), { body: { status } }),
    createSetupLink: () => Promise.reject(new Error('account setup-link needs the database')),

    listApiKeys: async () => (await call<Page<ApiKey>>('GET', 'api-keys')).data,
    revokeApiKey: (id) => call<ApiKey>('POST', at('api-keys', id, 'revoke')),

    listWebhooks: async () => (await call<{ data: Webhook[] }>('GET', 'webhooks')).data,
    createWebhook: (input) => call('POST', 'webhooks', { body: input }),
    getWebhook: (id) => call<Webhook>('GET', at('webhooks', id)),
    updateWebhook: (id, changes) => call<Webhook>('PATCH', at('webhooks', id), { body: changes }),
    deleteWebhook: (id) => call<Webhook>('DELETE', at('webhooks', id)),
    rotateWebhookSecret: (id) => call('POST', at('webhooks', id, 'rotate-secret')),
    listWebhookDeliveries: async (id, limit) =>
      (await call<Page<WebhookDelivery>>('GET', at('webhooks', id, 'deliveries'), { query: { limit: String(limit) } }))
        .data,
    retryWebhookDelivery: (id, messageId) =>
      call<WebhookDelivery>('POST', at('webhooks', id, `deliveries/${encodeURIComponent(messageId)}/retry`)),
    sendWebhookTestEvent: (id) => call<WebhookDelivery>('POST', at('webhooks', id, 'test')),

    listSigningKeys: async () => (await call<{ data: SigningKey[] }>('GET', 'signing-keys')).data,
    async rotateSigningKey({ now, revokePrevious } = {}) {
      const body = { ...(now ? { now } : {}), ...(revokePrevious ? { revoke_previous: revokePrevious } : {}) };
      const options = Object.keys(body).length > 0 ? { body } : {};
      return (await call<{ data: SigningKey[] }>('POST', 'signing-keys/rotate', options)).data;
    },
  };
}
