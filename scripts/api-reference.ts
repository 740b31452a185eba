/**
 * npm run docs:api: writes docs/reference/api.md, the reference of the management API, from its
 * OpenAPI document (the one GET /api/admin/v1/openapi.json serves, made from the routes' TypeBox
 * schemas): per tag, each operation with its method, path, summary, description, parameters,
 * request body fields and responses; then the records. The preamble (keys, errors, ETag,
 * idempotency, pages, rate limits) is written here. The file is never edited by hand;
 * test/api-reference.test.ts fails while it differs from the document.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildApp, createContext } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { Registry } from 'prom-client';
import { openStore } from '../src/store/open.ts';

export const REFERENCE_PATH = fileURLToPath(new URL('../docs/reference/api.md', import.meta.url));

/** The server the reference's examples name; the document's `servers` is the real one's. */
const EXAMPLE_SERVER = 'https://auth.example.com';
const PREFIX = '/api/admin/v1';

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema and OpenAPI are read as the JSON they are
type Json = any;

/**
 * The OpenAPI document as the server serves it, from a server built in memory (an empty
 * in-memory SQLite database; nothing listens).
 *
 * @example
 * const doc = await apiDocument(); // doc.paths['/agents'].get.operationId === 'listAgents'
 */
export async function apiDocument(): Promise<Json> {
  const config = loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    BASE_URL: EXAMPLE_SERVER,
    JWT_SECRET: 'api-reference: a secret of at least 32 bytes',
    LOG_LEVEL: 'silent',
  });
  const store = await openStore(config.databaseUrl);
  await store.migrate();
  const ctx = await createContext(config, store, config.jwtSecret!, {});
  const app = await buildApp(ctx, new Registry());
  try {
    const answer = await app.inject({ method: 'GET', url: `${PREFIX}/openapi.json` });
    if (answer.statusCode !== 200) throw new Error(`openapi.json answered ${answer.statusCode}`);
    return answer.json();
  } finally {
    await app.close();
    await store.close();
  }
}

/** Text in a table cell: one line, its pipes escaped. */
const cell = (text: string) => text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
/** GitHub's anchor of a heading: lower case, spaces as hyphens, punctuation dropped. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/\s/g, '-');
const refName = (ref: string) => ref.split('/').at(-1)!;
const recordLink = (name: string) => `[${name}](#${anchor(name)})`;

/** A schema's type in words: `string (1 to 200 characters)`, `` `active` or `disabled` ``, a record's link. */
function typeOf(schema: Json): string {
  if (schema.$ref) return recordLink(refName(schema.$ref));
  const options: Json[] | undefined = schema.anyOf ?? schema.oneOf;
  if (options) {
    const words = options.map(typeOf);
    return words.length > 2 ? `${words.slice(0, -1).join(', ')} or ${words.at(-1)}` : words.join(' or ');
  }
  if (schema.const !== undefined) return `\`${schema.const}\``;
  if (schema.enum) return schema.enum.map((value: unknown) => `\`${value}\``).join(' or ');
  switch (schema.type) {
    case 'null':
      return 'null';
    case 'string': {
      if (schema.format === 'date-time') return 'time (RFC 3339)';
      const { minLength: min, maxLength: max } = schema;
      const length =
        min !== undefined && max !== undefined
          ? ` (${min} to ${max} characters)`
          : max !== undefined
            ? ` (at most ${max} characters)`
            : '';
      return `string${length}${schema.pattern ? `, matching \`${schema.pattern}\`` : ''}`;
    }
    case 'integer':
    case 'number': {
      const { minimum: min, maximum: max } = schema;
      return `${schema.type}${min !== undefined && max !== undefined ? ` (${min} to ${max})` : ''}`;
    }
    case 'boolean':
      return 'boolean';
    case 'array':
      return `array of ${typeOf(schema.items ?? {})}${schema.maxItems !== undefined ? ` (at most ${schema.maxItems})` : ''}`;
    case 'object':
      return 'object';
    default:
      return 'any';
  }
}

/** The fields of an object schema as rows, nested objects' fields as `owner.email`. */
function fieldRows(schema: Json, prefix = ''): string[][] {
  const required = new Set<string>(schema.required ?? []);
  return Object.entries((schema.properties ?? {}) as Record<string, Json>).flatMap(([name, field]) => {
    const path = `${prefix}${name}`;
    const row = [`\`${path}\``, typeOf(field), required.has(name) ? 'yes' : 'no', cell(field.description ?? '')];
    return field.type === 'object' && field.properties ? [row, ...fieldRows(field, `${path}.`)] : [row];
  });
}

function table(head: string[], rows: string[][]): string[] {
  if (rows.length === 0) return [];
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
    '',
  ];
}

/** What a response carries: a record's link, or an object's fields in one line. */
function bodyOf(response: Json): string {
  const schema = response.content?.['application/json']?.schema;
  if (!schema) return '';
  if (schema.$ref || schema.type !== 'object') return typeOf(schema);
  const fields = Object.entries((schema.properties ?? {}) as Record<string, Json>).map(
    ([name, field]) => `\`${name}\` (${typeOf(field)})`,
  );
  return `object: ${fields.join(', ')}`;
}

/** One operation's section. */
function operationSection(path: string, method: string, op: Json): string[] {
  const parameters = ((op.parameters ?? []) as Json[]).map((p) => [
    `\`${p.name}\``,
    p.in,
    typeOf(p.schema ?? {}),
    p.required ? 'yes' : 'no',
    cell(p.description ?? ''),
  ]);
  const body = op.requestBody?.content?.['application/json']?.schema;
  const bodyRows = body ? fieldRows(body) : [];
  const answers = Object.entries(op.responses as Record<string, Json>);
  const responses = answers
    .filter(([status]) => !isError(status))
    .map(([status, response]) => [status, cell(response.description ?? ''), bodyOf(response)]);
  const errors = answers.filter(([status]) => isError(status)).map(([status]) => status);
  return [
    `### ${op.operationId}`,
    '',
    `**${cell(op.summary ?? '')}**: \`${method.toUpperCase()} ${path}\``,
    '',
    ...(op.description ? [op.description, ''] : []),
    ...table(['Parameter', 'In', 'Type', 'Required', 'Meaning'], parameters),
    ...(body
      ? [
          `Request body (JSON${op.requestBody.required ? '' : ', optional'}):`,
          '',
          ...(bodyRows.length > 0
            ? table(['Field', 'Type', 'Required', 'Meaning'], bodyRows)
            : ['(an empty object)', '']),
        ]
      : []),
    ...table(['Status', 'Meaning', 'Body'], responses),
    ...(errors.length > 0 ? [`Errors: ${errors.join(', ')} ([error statuses](#error-statuses)).`, ''] : []),
  ];
}

const isError = (status: string) => Number(status) >= 400;

/** Each error status the document answers, with what it means (its first description). */
function errorStatuses(doc: Json): string[][] {
  const meanings = new Map<string, string>();
  for (const item of Object.values(doc.paths as Record<string, Json>))
    for (const op of Object.values(item as Record<string, Json>))
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>))
        if (isError(status) && !meanings.has(status)) meanings.set(status, cell(response.description ?? ''));
  return [...meanings].sort(([a], [b]) => Number(a) - Number(b)).map(([status, meaning]) => [status, meaning]);
}

/** The operations of the document by tag, in the order they first appear. */
function byTag(doc: Json): Map<string, Array<[string, string, Json]>> {
  const tags = new Map<string, Array<[string, string, Json]>>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? 'Other';
      if (!tags.has(tag)) tags.set(tag, []);
      tags.get(tag)!.push([path, method, op]);
    }
  }
  return tags;
}

const PREAMBLE = [
  'The management API lets scripts do what the console and the `agentauth` command do: manage',
  'agents, clients (the console calls them websites), accounts, grants and API keys, and read the',
  'sign-in history and the console’s activity. It calls the same rules as the console, so a',
  'script obeys exactly the rules a person in a browser does ([design §15](../design.md)).',
  '',
  `Every path below is under \`${PREFIX}\` on the server (\`${EXAMPLE_SERVER}${PREFIX}/agents\`).`,
  `The OpenAPI 3.1 document this reference is made from is \`GET ${PREFIX}/openapi.json\`; it needs`,
  'no key. Bodies are JSON in and out; times are RFC 3339 strings in UTC.',
  '',
  '## Authentication',
  '',
  'Every call carries an API key: `Authorization: Bearer aak_…`. Keys are made in the console',
  '(API keys) or with `agentauth api-key create` ([CLI](cli.md)), shown once, and expire. A key',
  'acts as its account, never as more, and has two scopes:',
  '',
  '- *access*: `read` keys only read; any change answers 403 `insufficient_scope` (with',
  '  `WWW-Authenticate: Bearer error="insufficient_scope", scope="write"`).',
  '- *reach*: an `own` key reaches its account’s agents and clients, and the grants and sign-ins',
  '  of those; an `all` key (an administrator’s only) reaches everything. Accounts and the',
  '  activity need an administrator’s `all` key.',
  '',
  'A missing, unknown, revoked or expired key, or one of a disabled account, answers 401',
  '`invalid_token`, all alike.',
  '',
  '## Errors',
  '',
  'Every error is `{"error": "…", "error_description": "…"}`, with the codes of the',
  '[error reference](errors.md): `invalid_request` (400) for a malformed or refused parameter',
  'or field, `not_found` (404) for a record that does not exist *or belongs to another account*',
  '(the two look alike), `precondition_failed` (412), `conflict` (409), `idempotency_key_reused`',
  '(422), `too_many_requests` (429).',
  '',
  '## ETag and If-Match',
  '',
  'Reading or changing a record answers its `ETag`. Send it back as `If-Match` with a change',
  '(`PATCH`, `DELETE`, a rotation): if the record changed since, the change is refused with 412',
  '`precondition_failed`; read it again and retry. `If-Match: *` matches any existing record.',
  'The condition holds in the write itself: of several changes sent at once with one tag, exactly',
  'one is made and the others get 412.',
  '',
  '## Idempotency-Key',
  '',
  'A creation (`createAgent`, `createClient`, `createAccount`) may carry `Idempotency-Key: <a',
  'unique value>` (up to 255 visible characters). A retry with the same key and the same request',
  'answers the first answer again, secret included, with `Idempotent-Replayed: true`; the same key',
  'with another request answers 422 `idempotency_key_reused`; a retry while the first is still',
  'running answers 409 `conflict` with `Retry-After`. Answers are kept a day. A creation that',
  'failed leaves its key free for a corrected retry.',
  '',
  '## Pages',
  '',
  'A list answers `{"data": […], "next_cursor": "…"}`. `limit` takes 1 to 100 (default 20); pass',
  '`next_cursor` as `cursor` for the next page, until it is `null`. Pages neither skip nor repeat',
  'a record, even while records are added. Agents, clients, accounts and grants come oldest',
  'first; sign-ins and the activity newest first.',
  '',
  '## Rate limits',
  '',
  'Each key may make `API_RATE_LIMIT` calls per `API_RATE_LIMIT_WINDOW` (600 a minute by default,',
  'see [configuration](configuration.md)), counted for all nodes together. Every answer carries',
  '`RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds); past the limit, 429',
  '`too_many_requests` with `Retry-After`. Every call is recorded in the console’s activity as',
  '`api.<operationId>`.',
  '',
  'Calls without a usable key (none, a malformed `Authorization`, an unknown, revoked or expired key,',
  'a disabled account’s) are limited per client address (an IPv6 /64 counts as one):',
  '`API_AUTH_FAILURES_PER_IP` in `API_RATE_LIMIT_WINDOW` (30 a minute by default), counted for all',
  'nodes together; past it, such a call is answered 429 `too_many_requests` with `Retry-After`',
  'instead of 401. A call with a usable key is never refused by it: a key cannot be guessed, and',
  'its own limit applies.',
  '',
];

/**
 * The text of docs/reference/api.md.
 *
 * @example
 * writeFileSync(REFERENCE_PATH, apiReference(await apiDocument()));
 */
export function apiReference(doc: Json): string {
  const tags = byTag(doc);
  const schemas = Object.entries((doc.components?.schemas ?? {}) as Record<string, Json>);
  return [
    '<!-- Generated from the OpenAPI document of the management API (src/api/routes) by `npm run docs:api`: change the routes, not this file. -->',
    '',
    '# The management API',
    '',
    ...PREAMBLE,
    '## Error statuses',
    '',
    'What each error status means, whichever operation answers it; the body is an [Error](#error).',
    '',
    ...table(['Status', 'Meaning'], errorStatuses(doc)),
    '## Operations',
    '',
    ...[...tags].map(
      ([tag, ops]) =>
        `- ${tag}: ${ops.map(([, , op]) => `[${op.operationId}](#${anchor(op.operationId)})`).join(', ')}`,
    ),
    '',
    ...[...tags].flatMap(([tag, ops]) => [
      `## ${tag}`,
      '',
      ...ops.flatMap(([path, method, op]) => operationSection(path, method, op)),
    ]),
    '## Records',
    '',
    ...schemas.flatMap(([name, schema]) => [
      `### ${name}`,
      '',
      ...(schema.description ? [schema.description, ''] : []),
      ...table(['Field', 'Type', 'Always there', 'Meaning'], fieldRows(schema)),
    ]),
  ]
    .join('\n')
    .replace(/\n+$/, '\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(REFERENCE_PATH, apiReference(await apiDocument()));
  process.stdout.write(`wrote ${REFERENCE_PATH}\n`);
}
