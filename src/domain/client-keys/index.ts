/**
 * Clients that sign with keys (RFC 7523 private_key_jwt, docs/design.md §18): a client's keys,
 * registered with it (jwks) or fetched from its jwks_uri through the outbound guards and cached
 * per HTTP headers like metadata documents, and the check of its assertion against them. An
 * assertion naming a key the cached set lacks fetches the set again, at most once per
 * REFETCH_INTERVAL seconds per jwks_uri, so a stream of made-up kids costs its host one request a
 * minute, not one per assertion.
 */
import {
  fetchJsonDocument,
  type FetchedJson,
  type FetchOptions,
  freshnessLifetime,
  MetadataFetchError,
} from '../client-metadata/fetch.ts';
import {
  type AssertionProblem,
  type ClientAssertionExpectations,
  assertionKeyId,
  type VerifiedClientAssertion,
  verifyClientAssertion,
} from './assertion.ts';
import { type ClientKey, MAX_KEY_SET_LENGTH, readKeySet } from './key-set.ts';

export { CLIENT_ASSERTION_TYPE, assertionClientId } from './assertion.ts';
export { CLIENT_ASSERTION_ALGORITHMS, keySetUriProblem, readKeySet } from './key-set.ts';

/** Seconds between two fetches of one jwks_uri for an unknown kid. */
export const REFETCH_INTERVAL = 60;

/**
 * Options of {@link ClientKeySets}; every one has a production default.
 *
 * @example
 * new ClientKeySets({ fetch: { allowAddress: trusted }, maxEntries: 500 });
 */
export interface ClientKeySetsOptions {
  /** Passed to the fetcher: CLIENT_METADATA_ALLOWED_ADDRESSES in production; tests add a CA. */
  fetch?: FetchOptions;
  /** Epoch milliseconds. Default Date.now. */
  clock?: () => number;
  /** Key sets kept at most; the least recently used goes first. Default 1000. */
  maxEntries?: number;
}

/** The client's side of an assertion check: where its keys are. */
export interface KeyHolder {
  id: string;
  jwks: string | null;
  jwks_uri: string | null;
}

interface CacheEntry {
  keys: ClientKey[];
  expiresAt: number;
  fetchedAt: number;
}

/** The shortest and longest time a fetched key set is kept, and the time without caching headers (seconds). */
const MIN_CACHE = 60;
const MAX_CACHE = 86_400;
const DEFAULT_CACHE = 300;

/**
 * Why a client's keys could not be had (its jwks_uri could not be fetched or holds no usable
 * key); the message is fit for the client's developer.
 *
 * @example
 * if (error instanceof KeySetUnavailable) throw new InvalidClient(error.message);
 */
export class KeySetUnavailable extends Error {}

/**
 * The key sets of clients that sign with keys, fetched and cached per jwks_uri, and the check of
 * their assertions. One per node; concurrent fetches of one URL share one request.
 *
 * @example
 * const keySets = new ClientKeySets();
 * const checked = await keySets.verify(client, assertion, { clientId: client.id, audiences, now });
 */
export class ClientKeySets {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<CacheEntry>>();
  /** When each URL was last fetched (ms), kept apart from the cache so a failed fetch counts too. */
  private readonly lastFetch = new Map<string, number>();
  private readonly clock: () => number;
  private readonly maxEntries: number;

  constructor(private readonly options: ClientKeySetsOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.maxEntries = options.maxEntries ?? 1000;
  }

  /**
   * Checks a client's assertion against its keys (verifyClientAssertion). A registered set is used
   * as stored; a jwks_uri's from the cache or fetched, and fetched again once when the assertion
   * names a key it lacks, unless it was fetched within REFETCH_INTERVAL. Throws KeySetUnavailable
   * when the keys cannot be had.
   *
   * @example
   * const checked = await keySets.verify(client, assertion, expected);
   * if ('problem' in checked) refuse(checked.problem);
   */
  async verify(
    client: KeyHolder,
    assertion: string,
    expected: ClientAssertionExpectations,
  ): Promise<VerifiedClientAssertion | AssertionProblem> {
    if (client.jwks !== null) {
      const read = readKeySet(client.jwks);
      if ('problem' in read)
        throw new KeySetUnavailable(`the client's registered key set is unusable: ${read.problem}`);
      return verifyClientAssertion(read.keys, assertion, expected);
    }
    if (client.jwks_uri === null) throw new KeySetUnavailable('the client has no keys (neither jwks nor jwks_uri)');
    const url = client.jwks_uri;
    // An assertion that cannot even be read is refused before any fetch.
    if (assertionKeyId(assertion) === undefined) return verifyClientAssertion([], assertion, expected);
    const checked = verifyClientAssertion((await this.keys(url)).keys, assertion, expected);
    if (!('unknownKey' in checked) || !checked.unknownKey || !this.mayRefetch(url)) return checked;
    this.cache.delete(url);
    return verifyClientAssertion((await this.keys(url)).keys, assertion, expected);
  }

  /** Whether `url` was last fetched at least REFETCH_INTERVAL ago. */
  private mayRefetch(url: string): boolean {
    const last = this.lastFetch.get(url);
    return last === undefined || this.clock() - last >= REFETCH_INTERVAL * 1000;
  }

  private keys(url: string): Promise<CacheEntry> {
    const entry = this.cache.get(url);
    if (entry) {
      this.cache.delete(url);
      if (this.clock() < entry.expiresAt) {
        this.cache.set(url, entry); // re-inserted last: the Map's order is the LRU order
        return Promise.resolve(entry);
      }
    }
    const running = this.inFlight.get(url);
    if (running) return running;
    const pending = this.fetchKeys(url).finally(() => this.inFlight.delete(url));
    this.inFlight.set(url, pending);
    return pending;
  }

  private async fetchKeys(url: string): Promise<CacheEntry> {
    const subject = "the client's key set (jwks_uri)";
    this.lastFetch.set(url, this.clock());
    let response: FetchedJson;
    try {
      response = await fetchJsonDocument(url, { maxBytes: MAX_KEY_SET_LENGTH, ...this.options.fetch }, subject);
    } catch (error) {
      if (error instanceof MetadataFetchError) throw new KeySetUnavailable(error.message);
      throw error;
    }
    const read = readKeySet(response.body, { lenient: true });
    if ('problem' in read)
      throw new KeySetUnavailable(`${subject} at ${new URL(url).host} is unusable: ${read.problem}`);
    const now = this.clock();
    const lifetime = freshnessLifetime(response, now) ?? DEFAULT_CACHE;
    const entry = {
      keys: read.keys,
      fetchedAt: now,
      expiresAt: now + Math.min(MAX_CACHE, Math.max(MIN_CACHE, lifetime)) * 1000,
    };
    this.cache.delete(url);
    this.cache.set(url, entry);
    this.lastFetch.delete(url);
    this.lastFetch.set(url, now);
    while (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
    while (this.lastFetch.size > this.maxEntries * 2) {
      const oldest = this.lastFetch.keys().next().value;
      if (oldest === undefined) break;
      this.lastFetch.delete(oldest);
    }
    return entry;
  }
}
