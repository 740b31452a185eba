/**
 * A bounded HTTPS GET for client metadata documents (draft-ietf-oauth-client-id-metadata-document
 * §5, §8.6, §8.7): 200 only, JSON only, at most 5 KB within 2.5 s, and every failure worded for
 * whoever sent the client_id. The outbound guards (https only, no redirects, no connection to a
 * special-use address, one deadline, one answer for every failure to reach the server) are
 * src/outbound/request.ts's (docs/design.md §13).
 */
import type { IncomingMessage } from 'node:http';
import { guardedRequest, type OutboundOptions } from '../../outbound/request.ts';

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

const DEFAULT_MAX_BYTES = 5120;
const DEFAULT_TIMEOUT_MS = 2500;

/**
 * GETs `url` and parses it as JSON, or throws a {@link MetadataFetchError} whose message names
 * the URL's host and the reason, and nothing the server or the network said.
 *
 * @example
 * const { body, cacheControl } = await fetchJsonDocument('https://app.example/oauth/client.json');
 */
export async function fetchJsonDocument(url: string, options: FetchOptions = {}): Promise<FetchedJson> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const answer = await guardedRequest(
    url,
    { method: 'GET', headers: { accept: 'application/json', 'user-agent': 'agentauth' } },
    { ...options, maxBytes, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS },
    {
      failure: (host, reason) =>
        new MetadataFetchError(
          host === null
            ? "the client's metadata document could not be fetched: its URL is not valid"
            : `the client's metadata document at ${host} could not be fetched: ${reason}`,
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
      `the client's metadata document at ${new URL(url).host} could not be fetched: the document is not valid JSON`,
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
