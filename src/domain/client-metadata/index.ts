/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document-02): a client_id
 * that is an https URL is resolved by fetching the document there, validating it and caching
 * it for as long as its HTTP caching headers say, within this server's bounds (§5.2).
 */
import { InvalidClient } from '../../errors.ts';
import {
  type ClientMetadataDocument,
  clientIdUrlProblem,
  InvalidMetadataDocument,
  validateClientMetadataDocument,
} from './document.ts';
import {
  type FetchedJson,
  fetchJsonDocument,
  type FetchOptions,
  freshnessLifetime,
  MetadataFetchError,
} from './fetch.ts';

export {
  type ClientMetadataDocument,
  clientIdUrlProblem,
  isClientIdUrl,
  validateClientMetadataDocument,
} from './document.ts';
export { allowingAddresses, fetchJsonDocument, type FetchOptions } from './fetch.ts';

/**
 * Options of {@link ClientMetadataDocuments}; every one has a production default.
 *
 * @example
 * new ClientMetadataDocuments({ maxEntries: 500, maxCacheSeconds: 3600 });
 */
export interface ClientMetadataDocumentsOptions {
  /** Passed to the fetcher; production passes nothing (tests pass a CA and loopback). */
  fetch?: FetchOptions;
  /** Epoch milliseconds. Default Date.now. */
  clock?: () => number;
  /** Documents kept at most; the least recently used goes first. Default 1000. */
  maxEntries?: number;
  /** Shortest time a valid document is kept, whatever its headers say. Default 60. */
  minCacheSeconds?: number;
  /** Longest time a valid document is kept, whatever its headers say. Default 86400. */
  maxCacheSeconds?: number;
  /** Time a document without Cache-Control max-age or Expires is kept. Default 300. */
  defaultCacheSeconds?: number;
  /** PRIVATE_KEY_JWT: documents declaring private_key_jwt are served with it. Default false. */
  privateKeyJwt?: boolean;
}

interface CacheEntry {
  document: ClientMetadataDocument;
  expiresAt: number;
}

/**
 * Resolves Client Identifier URLs to validated metadata documents, with a bounded LRU cache
 * and one fetch at a time per URL (concurrent callers share it). Errors are never cached.
 *
 * @example
 * const documents = new ClientMetadataDocuments();
 * const client = await documents.resolve('https://app.example/oauth/client.json');
 * client.client_name; // 'Example App'
 */
export class ClientMetadataDocuments {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<ClientMetadataDocument>>();
  private readonly clock: () => number;
  private readonly maxEntries: number;
  private readonly minCacheSeconds: number;
  private readonly maxCacheSeconds: number;
  private readonly defaultCacheSeconds: number;

  constructor(private readonly options: ClientMetadataDocumentsOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.maxEntries = options.maxEntries ?? 1000;
    this.minCacheSeconds = options.minCacheSeconds ?? 60;
    this.maxCacheSeconds = options.maxCacheSeconds ?? 86_400;
    this.defaultCacheSeconds = options.defaultCacheSeconds ?? 300;
  }

  /**
   * The validated document at `url`, from the cache or freshly fetched. Throws InvalidClient
   * (status 400) saying why, for a URL that is not a Client Identifier URL, a failed fetch or
   * an invalid document.
   *
   * @example
   * await documents.resolve('https://app.example/oauth/client.json'); // { client_id, client_name, redirect_uris }
   */
  resolve(url: string): Promise<ClientMetadataDocument> {
    const problem = clientIdUrlProblem(url);
    if (problem) return Promise.reject(new InvalidClient(`client_id ${problem}`, 400));
    const cached = this.cached(url);
    if (cached) return Promise.resolve(cached);
    const running = this.inFlight.get(url);
    if (running) return running;

    const pending: Promise<ClientMetadataDocument> = this.fetchAndValidate(url)
      .then(({ document, response }) => {
        // A forget() during the fetch means this result must not land in the cache.
        if (this.inFlight.get(url) === pending) this.remember(url, document, response);
        return document;
      })
      .finally(() => {
        if (this.inFlight.get(url) === pending) this.inFlight.delete(url);
      });
    this.inFlight.set(url, pending);
    return pending;
  }

  /**
   * Drops what is cached for `url`, so the next resolve fetches it again.
   *
   * @example
   * documents.forget('https://app.example/oauth/client.json');
   */
  forget(url: string): void {
    this.cache.delete(url);
    this.inFlight.delete(url);
  }

  private cached(url: string): ClientMetadataDocument | undefined {
    const entry = this.cache.get(url);
    if (!entry) return undefined;
    this.cache.delete(url);
    if (this.clock() >= entry.expiresAt) return undefined;
    this.cache.set(url, entry); // re-inserted last: the Map's order is the LRU order
    return entry.document;
  }

  private remember(url: string, document: ClientMetadataDocument, response: FetchedJson): void {
    const seconds = this.cacheSeconds(response);
    this.cache.delete(url);
    this.cache.set(url, { document, expiresAt: this.clock() + seconds * 1000 });
    while (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }

  /**
   * The freshness lifetime of RFC 9111 §4.2 (max-age, else Expires minus Date, less Age),
   * clamped to [minCacheSeconds, maxCacheSeconds]. no-store and no-cache count as 0 and so
   * get the minimum: fetching on every authorization would hand the client's host a timing
   * side channel on our users (draft §9.1) and us a request amplifier, and the draft lets
   * the authorization server bound the lifetime (§5.2).
   */
  private cacheSeconds(response: FetchedJson): number {
    const lifetime = freshnessLifetime(response, this.clock()) ?? this.defaultCacheSeconds;
    return Math.min(this.maxCacheSeconds, Math.max(this.minCacheSeconds, lifetime));
  }

  private async fetchAndValidate(url: string): Promise<{ document: ClientMetadataDocument; response: FetchedJson }> {
    try {
      const response = await fetchJsonDocument(url, this.options.fetch);
      return {
        document: validateClientMetadataDocument(url, response.body, { privateKeyJwt: this.options.privateKeyJwt }),
        response,
      };
    } catch (error) {
      if (error instanceof MetadataFetchError || error instanceof InvalidMetadataDocument)
        throw new InvalidClient(error.message, 400);
      throw error;
    }
  }
}
