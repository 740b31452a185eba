/** Configuration (DESIGN.md §8): documented defaults, and one clear line for every invalid value. */
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { ConfigError, loadConfig } from '../src/config.ts';
import { SqliteDriver } from '../src/store/driver.ts';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      baseUrl: 'http://localhost:3000',
      databaseUrl: 'sqlite:./data/agentauth.db',
      jwtSecret: null,
      logLevel: 'info',
      requestTtl: 600,
      codeTtl: 600,
      accessTokenTtl: 3600,
      refreshTokenTtl: 2592000,
      purgeAfter: 86400,
      sqliteSynchronous: 'full',
    });
    expect(loadConfig({ PORT: '8080' }).baseUrl).toBe('http://localhost:8080');
  });

  it.each([
    [{ PORT: 'x' }, /PORT must be a whole number/],
    [{ PORT: '70000' }, /PORT must be at most 65535/],
    [{ BASE_URL: 'not a url' }, /BASE_URL must be an absolute URL/],
    [{ BASE_URL: 'ftp://x' }, /BASE_URL must be an http\(s\) URL/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must start with sqlite: or postgres:\/\//],
    [{ JWT_SECRET: 'short' }, /JWT_SECRET must be at least 32 bytes/],
    [{ NODE_ENV: 'production' }, /JWT_SECRET is required when NODE_ENV=production/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ REQUEST_TTL: '0' }, /REQUEST_TTL must be a whole number >= 1/],
    [{ ACCESS_TOKEN_TTL: '1.5' }, /ACCESS_TOKEN_TTL must be a whole number/],
    [{ TRUST_PROXY: 'maybe' }, /TRUST_PROXY must be true or false/],
    [{ SQLITE_SYNCHRONOUS: 'off' }, /SQLITE_SYNCHRONOUS must be full or normal/],
  ])('refuses %o', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('SQLITE_SYNCHRONOUS=normal is the opt-in without an fsync per commit; full is the default', () => {
    expect(loadConfig({ SQLITE_SYNCHRONOUS: 'NORMAL' }).sqliteSynchronous).toBe('normal');
    // PRAGMA synchronous: 2 = FULL, 1 = NORMAL.
    for (const [mode, expected] of [[undefined, 2], ['full', 2], ['normal', 1]] as const) {
      const db = new Database(':memory:');
      new SqliteDriver(db, { synchronous: mode });
      expect(db.pragma('synchronous', { simple: true })).toBe(expected);
      db.close();
    }
  });
});
