/**
 * What the management API's operations share beyond their records (docs/design.md §15): entity
 * tags and If-Match (RFC 9110 §8.8.3, §13.1.1), cursors of the lists, and idempotent creations
 * (the `Idempotency-Key` header of draft-ietf-httpapi-idempotency-key-header).
 */
import type { Context } from '../context.ts';
import { digest } from '../crypto.ts';
import { Conflict, IdempotencyKeyReused, InvalidRequest, PreconditionFailed } from '../errors.ts';
import type { ApiCaller } from './keys.ts';

/**
 * A strong entity tag of a representation: it changes whenever any of its bytes would.
 *
 * @example
 * entityTag({ id: 'agt_1', name: 'Research' }) // '"Vh2…"'
 */
export function entityTag(representation: unknown): string {
  return `"${digest(JSON.stringify(representation)).slice(0, 27)}"`;
}

/**
 * PreconditionFailed unless `ifMatch` (absent: no condition) names the representation as it
 * now is: `*`, or a list of tags one of which is its strong tag (weak tags never match, RFC 9110
 * §13.1.1).
 *
 * @example
 * checkIfMatch(request.headers['if-match'], agentView(agent));
 */
export function checkIfMatch(ifMatch: string | undefined, representation: unknown): void {
  if (ifMatch === undefined) return;
  const current = entityTag(representation);
  const listed = ifMatch.split(',').map((tag) => tag.trim());
  if (listed.includes('*') || listed.includes(current)) return;
  throw new PreconditionFailed();
}

/** Where a page of a list starts: after the record with this sort value and id. */
export interface Cursor {
  after: string | number;
  id: string;
}

/** Cursors are opaque to callers: base64url of the sort value and the id. */
export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.after, cursor.id]), 'utf8').toString('base64url');
}

/** The cursor a list was given, or InvalidRequest when it is not one this API made. */
export function decodeCursor(raw: string | undefined): Cursor | undefined {
  if (raw === undefined) return undefined;
  try {
    const [after, id] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown[];
    if ((typeof after === 'string' || typeof after === 'number') && typeof id === 'string') return { after, id };
  } catch {
    // Falls through to the refusal.
  }
  throw new InvalidRequest('The cursor is not one this API returned; start again without it.');
}

/** A list's page size: `limit` from the query, 1 to 100, default 20. */
export function pageSize(raw: string | undefined): number {
  if (raw === undefined) return 20;
  const limit = Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new InvalidRequest('limit must be a whole number from 1 to 100.');
  return limit;
}

/** What a creation answers: replayed byte for byte to a retry with the same Idempotency-Key. */
export interface Answer {
  status: number;
  body: unknown;
  location?: string;
}

/** How long a retry of an unfinished creation should wait before trying again, in seconds. */
const IN_PROGRESS_RETRY = 1;

/**
 * Runs a creation once per Idempotency-Key of the caller's key: the first request runs
 * `create`; a retry with the same key and the same request gets the first answer again
 * (`replayed` true), one with a different request 422, one while the first is still running
 * 409. A creation that fails answers its error and leaves the key free for another try. Without
 * the header, `create` simply runs. Answers are kept a day (the purge), sealed: they may carry a
 * secret shown once.
 *
 * @example
 * const { answer, replayed } = await idempotent(ctx, caller, request.headers['idempotency-key'], fingerprint, () => createAgent());
 */
export async function idempotent(
  ctx: Pick<Context, 'store' | 'clock' | 'secrets'>,
  caller: ApiCaller,
  header: string | undefined,
  request: { method: string; url: string; body: unknown },
  create: () => Promise<Answer>,
): Promise<{ answer: Answer; replayed: boolean }> {
  if (header === undefined) return { answer: await create(), replayed: false };
  if (!/^[!-~]{1,255}$/.test(header))
    throw new InvalidRequest('Idempotency-Key must be 1 to 255 visible ASCII characters.');
  const fingerprint = digest(`${request.method} ${request.url}\n${JSON.stringify(request.body ?? null)}`);
  const earlier = await ctx.store.idempotency.claim(caller.key.id, header, fingerprint, ctx.clock());
  if (earlier) {
    if (earlier.fingerprint !== fingerprint)
      throw new IdempotencyKeyReused('This Idempotency-Key was used for a different request; use a new key.');
    if (earlier.status === null || earlier.sealed === null) {
      const busy = new Conflict('A request with this Idempotency-Key is still under way; retry shortly.');
      busy.headers['retry-after'] = String(IN_PROGRESS_RETRY);
      throw busy;
    }
    return { answer: JSON.parse(ctx.secrets.box.openOnce(earlier.sealed)) as Answer, replayed: true };
  }
  let answer: Answer;
  try {
    answer = await create();
  } catch (error) {
    await ctx.store.idempotency.release(caller.key.id, header);
    throw error;
  }
  await ctx.store.idempotency.finish(
    caller.key.id,
    header,
    answer.status,
    ctx.secrets.box.seal(JSON.stringify(answer)),
  );
  return { answer, replayed: false };
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * An RFC 3339 time from a list's filter (`since`, `until`) as epoch seconds, rounded up (a
 * fraction of a second means the next whole one: records are kept to the second), or
 * InvalidRequest naming the parameter.
 *
 * @example
 * timeFilter('since', '2026-01-31T12:00:00Z') // 1769860800
 */
export function timeFilter(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = RFC3339.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms)) throw new InvalidRequest(`${name} must be an RFC 3339 time, such as 2026-01-31T12:00:00Z.`);
  return Math.ceil(ms / 1000);
}

/**
 * The cursor of a list whose sort value is a time in seconds (every list's: `created_at`, or a
 * history's `at`), or InvalidRequest: a forged cursor never reaches the database.
 *
 * @example
 * const cursor = timeCursor(request.query.cursor); // { at: 1769860800, id: 'agt_…' } or undefined
 */
export function timeCursor(raw: string | undefined): { at: number; id: string } | undefined {
  const cursor = decodeCursor(raw);
  if (cursor === undefined) return undefined;
  // Every id is visible ASCII; anything else (a NUL PostgreSQL refuses) is a forgery.
  if (typeof cursor.after !== 'number' || !Number.isSafeInteger(cursor.after) || !/^[!-~]{1,512}$/.test(cursor.id))
    throw new InvalidRequest('The cursor is not one this list returned; start again without it.');
  return { at: cursor.after, id: cursor.id };
}

/**
 * A page of a list from the `limit + 1` rows read after the cursor: the first `limit` as views,
 * and the cursor of the next page when there was one more row (lists sorted by created_at, id).
 *
 * @example
 * return pageOf(await ctx.store.agents.list({ limit: limit + 1, after }), limit, (agent) => agentView(agent, now));
 */
export function pageOf<Row extends { created_at: number; id: string }, View>(
  rows: Row[],
  limit: number,
  view: (row: Row) => View,
): { data: View[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    data: page.map(view),
    next_cursor: rows.length > limit && last ? encodeCursor({ after: last.created_at, id: last.id }) : null,
  };
}
