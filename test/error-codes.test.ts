/**
 * One table of error codes: the family of classes in src/errors.ts, its ERROR_CODES
 * list, docs/reference/errors.md and the SDKs' generated lists (scripts/error-codes.ts) say the same.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generatedFiles } from '../scripts/error-codes.ts';
import { describeError } from '../src/http/errors.ts';
import * as family from '../src/errors.ts';
import { ERROR_CODES, OAuthError } from '../src/errors.ts';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

/** Every exported subclass of OAuthError, instantiated with a description: its name, code and default status. */
function members(): Array<{ name: string; code: string; status: number }> {
  return Object.entries(family)
    .filter(([, value]) => typeof value === 'function' && value.prototype instanceof OAuthError)
    .map(([name, Class]) => {
      const error = new (Class as new (description: string) => OAuthError)('A description.');
      return { name, code: error.error, status: error.statusCode };
    });
}

/** docs/reference/errors.md's table: one row per code, with its statuses, classes and whether agents meet it. */
function documented(): Map<string, { statuses: number[]; classes: string[]; agent: boolean }> {
  const rows = new Map<string, { statuses: number[]; classes: string[]; agent: boolean }>();
  for (const line of read('docs/reference/errors.md').split('\n')) {
    if (!/^\|\s*`[a-z_]+`\s*\|/.test(line)) continue;
    const [code, statuses, classes, agent] = line
      .split('|')
      .slice(1, 5)
      .map((cell) => cell.trim());
    const name = code!.replace(/`/g, '');
    expect(rows.has(name), `docs/reference/errors.md lists ${name} twice`).toBe(false);
    rows.set(name, {
      statuses: [...statuses!.matchAll(/\d{3}/g)].map(([status]) => Number(status)).sort(),
      classes: [...classes!.matchAll(/`(\w+)`/g)].map(([, name]) => name!).sort(),
      agent: agent === 'agent',
    });
  }
  return rows;
}

const listed = new Map<string, (typeof ERROR_CODES)[number]>(ERROR_CODES.map((entry) => [entry.code, entry]));

describe('the error codes', () => {
  it('every class of the family answers a code ERROR_CODES lists, with a status listed for it', () => {
    const found = members();
    expect(found.length).toBeGreaterThan(20);
    for (const { name, code, status } of found) {
      expect(listed.has(code), `${name} answers ${code}, which ERROR_CODES does not list`).toBe(true);
      expect(listed.get(code)!.statuses as readonly number[], `${name}'s status`).toContain(status);
    }
  });

  it('every code ERROR_CODES lists has a class, once', () => {
    const codes = new Set(members().map((member) => member.code));
    for (const { code } of ERROR_CODES) expect(codes.has(code), `no class answers ${code}`).toBe(true);
    expect(listed.size).toBe(ERROR_CODES.length);
  });

  it("describeError's own answers use codes and statuses ERROR_CODES lists", () => {
    const thrown: unknown[] = [
      new Error('boom'),
      Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }),
      Object.assign(new Error('nul'), { code: '22021' }),
      Object.assign(new Error('body/x must be string'), { validation: [{}] }),
      Object.assign(new Error('csrf'), { code: 'FST_CSRF_INVALID_TOKEN' }),
      Object.assign(new Error('large'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE' }),
      Object.assign(new Error('media'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }),
      Object.assign(new Error('aborted'), { code: 'ECONNRESET' }),
    ];
    for (const error of thrown) {
      const { status, body } = describeError(error);
      expect(listed.get(body.error)?.statuses as readonly number[] | undefined, body.error).toContain(status);
    }
  });

  it('docs/reference/errors.md has one row per code, with its statuses, classes and agent mark, and no other', () => {
    const rows = documented();
    expect([...rows.keys()].sort()).toEqual(ERROR_CODES.map((entry) => entry.code).sort());
    const classes = members();
    for (const entry of ERROR_CODES) {
      const row = rows.get(entry.code)!;
      expect(row.statuses, `${entry.code}'s statuses`).toEqual([...entry.statuses].sort());
      expect(row.agent, `${entry.code}'s agent mark`).toBe(entry.agent);
      expect(row.classes, `${entry.code}'s classes`).toEqual(
        classes
          .filter((member) => member.code === entry.code)
          .map((member) => member.name)
          .sort(),
      );
    }
  });

  it('the SDKs’ generated lists are current (npm run codes)', () => {
    for (const { path, text } of generatedFiles()) expect(read(path), `${path} is stale: npm run codes`).toBe(text);
  });
});
