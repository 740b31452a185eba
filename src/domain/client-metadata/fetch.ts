/**
 * A bounded HTTPS GET for client metadata documents (draft-ietf-oauth-client-id-metadata-document
 * §5, §8.6, §8.7): 200 only, JSON only, at most 5 KB within 2.5 s, and every failure worded for
 * whoever sent the client_id. The outbound guards (https only, no redirects, no connection to a
 * special-use address, one deadline, one answer for every failure to reach the server) are
 * src/outbound/request.ts's (docs/design.md §13).
 */
import type { IncomingMessage } from 'node:http';
import { guardedRequest, type OutboundOptions } from '../../outbound/request.ts';
import { trustedAddresses } from '../../outbound/special-use.ts';

/**
 * Limits and test seams of {@link fetchJsonDocument}. Production passes at most the limits.
 *
 * @example
 * const options: FetchOptions = { maxBytes: 5120, timeoutMs: 2500 };
 */
export interface FetchOptions extends Partial<OutboundOptions> {
  /** Largest body read, in bytes; the draft recommends 5 KB. Default 5120. */
  maxBytes?: number;
  /** Deadline for the whole exchange (DNS, connect, TLS, headers, body), in ms. Default 2500. */
  timeoutMs?: number;
}

/**
 * A fetched JSON document with the response headers a cache needs (RFC 9111 §4.2).
 *
 * @example
 * const { body, cacheControl } = await fetchJsonDocument(url); // cacheControl: 'max-age=3600'
 */
export interface FetchedJson {
  body: unknown;
  cacheControl: string | undefined;
  expires: string | undefined;
  date: string | undefined;
  age: string | undefined;
}

/**
 * Why a document could not be fetched; the message is fit to show to whoever sent the client_id.
 *
 * @example
 * // "the client's metadata document at app.example could not be fetched: the server answered HTTP 404 instead of 200"
 * if (error instanceof MetadataFetchError) reply(400, error.message);
 */
export class MetadataFetchError extends Error {}

/**
 * The fetch options of metadata documents and key sets: special-use addresses are refused unless
 * CLIENT_METADATA_ALLOWED_ADDRESSES (`allowed`) trusts their network, as webhooks do with
 * WEBHOOK_ALLOWED_ADDRESSES; `seam` is what tests pass (a CA, loopback), kept beside it.
 *
 * @example
 * const options = allowingAddresses(config.clientMetadataAllowedAddresses); // production
 */
export function allowingAddresses(allowed: readonly string[], seam: FetchOptions = {}): FetchOptions {
  if (allowed.length === 0) return seam;
  const trusted = trustedAddresses(allowed);
  return { ...seam, allowAddress: (ip, stage) => trusted(ip) || (seam.allowAddress?.(ip, stage) ?? false) };
}

const DEFAULT_MAX_BYTES = 5120;
const DEFAULT_TIMEOUT_MS = 2500;

/**
 * GETs `url` and parses it as JSON, or throws a {@link MetadataFetchError} whose message names
 * what was fetched (`subject`: a metadata document by default, a client's key set), the URL's
 * host and the reason, and nothing the server or the network said.
 *
 * @example
 * const { body, cacheControl } = await fetchJsonDocument('https://app.example/oauth/client.json');
 * await fetchJsonDocument('https://app.example/jwks.json', { maxBytes: 16_384 }, "the client's key set (jwks_uri)");
 */
export async function fetchJsonDocument(
  url: string,
  options: FetchOptions = {},
  subject = "the client's metadata document",
): Promise<FetchedJson> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const answer = await guardedRequest(
    url,
    { method: 'GET', headers: { accept: 'application/json', 'user-agent': 'agentauth' } },
    { ...options, maxBytes, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS },
    {
      failure: (host, reason) =>
        new MetadataFetchError(
          host === null
            ? `${subject} could not be fetched: its URL is not valid`
            : `${subject} at ${host} could not be fetched: ${reason}`,
        ),
      check: (res) => responseProblem(res, maxBytes),
      tooLarge: 'fail',
      what: 'the document',
    },
  );
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(answer.body));
  } catch {
    throw new MetadataFetchError(
      `${subject} at ${new URL(url).host} could not be fetched: the document is not valid JSON`,
    );
  }
  return {
    body,
    cacheControl: answer.headers['cache-control'],
    expires: answer.headers.expires,
    date: answer.headers.date,
    age: answer.headers.age,
  };
}

/** What the draft refuses once the headers are in: a redirect, not 200, not JSON, a declared size over the cap. */
function responseProblem(res: IncomingMessage, maxBytes: number): string | null {
  const status = res.statusCode ?? 0;
  if (status >= 300 && status < 400)
    return `the server answered with a redirect (HTTP ${status}), which is not followed`;
  if (status !== 200) return `the server answered HTTP ${status} instead of 200`;
  const mediaType = (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json' && !/^application\/[!#$&^_.+\w-]+\+json$/.test(mediaType)) {
    return 'the response is not JSON (its content type must be application/json)';
  }
  const declared = res.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) return `the document is larger than ${maxBytes} bytes`;
  return null;
}

/**
 * Seconds a fetched document stays fresh by its own headers (RFC 9111 §4.2: max-age, else Expires
 * minus Date, less Age), or undefined when they do not say. no-store and no-cache count as 0.
 *
 * @example
 * freshnessLifetime({ cacheControl: 'max-age=600', age: '100' } as FetchedJson, Date.now()); // 500
 */
export function freshnessLifetime(response: FetchedJson, now: number): number | undefined {
  const directives = parseCacheControl(response.cacheControl);
  const age = /^\d+$/.test(response.age?.trim() ?? '') ? Number(response.age) : 0;
  if (directives.has('no-store') || directives.has('no-cache')) return 0;
  const maxAge = directives.get('max-age');
  if (maxAge !== undefined) return Math.max(0, (/^\d+$/.test(maxAge) ? Number(maxAge) : 0) - age);
  if (response.expires !== undefined) {
    const expires = Date.parse(response.expires);
    const date = response.date !== undefined ? Date.parse(response.date) : Number.NaN;
    // An unparseable Expires ("0", "-1") means already expired (RFC 9111 §5.3).
    if (Number.isNaN(expires)) return 0;
    return Math.max(0, Math.floor((expires - (Number.isNaN(date) ? now : date)) / 1000) - age);
  }
  return undefined;
}

/** Cache-Control directives by lower-case name; for a repeated directive the first one counts. */
function parseCacheControl(header: string | undefined): Map<string, string> {
  const directives = new Map<string, string>();
  for (const part of (header ?? '').split(',')) {
    const [name = '', value = ''] = part.split('=', 2).map((piece) => piece.trim());
    const key = name.toLowerCase();
    if (key && !directives.has(key)) directives.set(key, value.replace(/^"(.*)"$/, '$1'));
  }
  return directives;
}
