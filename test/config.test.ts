/** Configuration (docs/design.md §8): documented defaults, and one clear line for every invalid value. */
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import {
  ConfigError,
  defaultStatusStreamsMax,
  isSet,
  loadConfig,
  openFilesLimit,
  parseOpenFilesLimit,
} from '../src/config.ts';
import { SqliteDriver } from '../src/store/sqlite-driver.ts';

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
      trustProxy: false,
      headersTimeout: 10,
      requestTimeout: 30,
      keepAliveTimeout: 5,
      shutdownTimeout: 10,
      metricsToken: null,
      metricsPort: null,
      metricsHost: '127.0.0.1',
      publicClients: false,
      clientIdMetadataDocuments: false,
      dynamicRegistration: false,
      allowedResources: [],
      registrationLimitPerIp: 20,
      registrationLimitWindow: 3600,
      selfRegisteredClientRetention: 2592000,
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
    [{ NODE_ENV: 'production' }, /JWT_SECRET \(or JWT_SECRET_FILE\) is required when NODE_ENV=production/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ REQUEST_TTL: '0' }, /REQUEST_TTL must be a whole number >= 1/],
    [{ ACCESS_TOKEN_TTL: '1.5' }, /ACCESS_TOKEN_TTL must be a whole number/],
    [
      { TRUST_PROXY: 'maybe' },
      /TRUST_PROXY must be a number of proxies or a comma-separated list of proxy addresses or CIDRs/,
    ],
    [
      { TRUST_PROXY: 'true' },
      /^TRUST_PROXY=true would trust any X-Forwarded-For the client writes; set TRUST_PROXY to the number of proxies in front of the server \(e\.g\. 1\) or their addresses/,
    ],
    [{ TRUST_PROXY: 'yes' }, /^TRUST_PROXY=true would trust any X-Forwarded-For/],
    [{ TRUST_PROXY: 'TRUE' }, /^TRUST_PROXY=true would trust any X-Forwarded-For/],
    [{ TRUST_PROXY: '10.0.0.1,' }, /TRUST_PROXY must be a number of proxies or a comma-separated list/],
    [{ TRUST_PROXY: '10.0.0.0/33' }, /TRUST_PROXY must be a number of proxies or a comma-separated list/],
    [{ TRUST_PROXY: '10.0.0.300' }, /TRUST_PROXY must be a number of proxies or a comma-separated list/],
    [{ TRUST_PROXY: '-1' }, /TRUST_PROXY must be a number of proxies or a comma-separated list/],
    [{ HEADERS_TIMEOUT: '0' }, /HEADERS_TIMEOUT must be a whole number >= 1/],
    [{ REQUEST_TIMEOUT: '2.5' }, /REQUEST_TIMEOUT must be a whole number >= 1/],
    [{ HEADERS_TIMEOUT: '40' }, /HEADERS_TIMEOUT must not exceed REQUEST_TIMEOUT \(got 40 and 30\)/],
    [{ KEEP_ALIVE_TIMEOUT: 'x' }, /KEEP_ALIVE_TIMEOUT must be a whole number >= 1/],
    [{ SHUTDOWN_TIMEOUT: '0' }, /SHUTDOWN_TIMEOUT must be a whole number >= 1/],
    [{ METRICS_TOKEN: 'short' }, /METRICS_TOKEN must be at least 32 bytes/],
    [
      { METRICS_TOKEN: 'a token of at least 32 bytes with spaces' },
      /METRICS_TOKEN must be printable ASCII without spaces/,
    ],
    [{ METRICS_PORT: '70000' }, /METRICS_PORT must be at most 65535/],
    [{ METRICS_PORT: '0' }, /METRICS_PORT must be a whole number >= 1/],
    [{ METRICS_PORT: '3000' }, /METRICS_PORT must differ from PORT/],
    [{ SQLITE_SYNCHRONOUS: 'off' }, /SQLITE_SYNCHRONOUS must be full or normal/],
    [{ MCP_AUTHORIZATION: 'sure' }, /MCP_AUTHORIZATION must be true or false \(got "sure"\)/],
    [{ CLIENT_ID_METADATA_DOCUMENTS: 'true' }, /CLIENT_ID_METADATA_DOCUMENTS=true needs PUBLIC_CLIENTS=true/],
    [
      { MCP_AUTHORIZATION: 'true', PUBLIC_CLIENTS: 'false' },
      /CLIENT_ID_METADATA_DOCUMENTS=true needs PUBLIC_CLIENTS=true/,
    ],
    [
      { ALLOWED_RESOURCES: 'https://ok.example /relative' },
      /ALLOWED_RESOURCES must list absolute http\(s\) URIs without fragment \(got "\/relative"\)/,
    ],
    [{ ALLOWED_RESOURCES: 'https://x.example/#frag' }, /ALLOWED_RESOURCES must list absolute/],
    [
      { SELF_REGISTERED_CLIENT_RETENTION: '3600' },
      /SELF_REGISTERED_CLIENT_RETENTION must be 0 \(never purge\) or at least 86400 \(got "3600"\)/,
    ],
    [{ SELF_REGISTERED_CLIENT_RETENTION: '-1' }, /SELF_REGISTERED_CLIENT_RETENTION must be a whole number >= 0/],
    [{ STATUS_STREAMS_MAX: '-1' }, /STATUS_STREAMS_MAX must be a whole number >= 0 \(got "-1"\)/],
    [{ STATUS_STREAMS_MAX: '1.5' }, /STATUS_STREAMS_MAX must be a whole number >= 0/],
    [{ STATUS_STREAMS_MAX: 'many' }, /STATUS_STREAMS_MAX must be a whole number >= 0/],
  ])('refuses %o', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('isSet tells a set variable from a default, an empty one counting as unset as loadConfig counts it', () => {
    expect(isSet('BASE_URL', { BASE_URL: 'https://id.example' })).toBe(true);
    expect(isSet('BASE_URL', { BASE_URL: '', PORT: '42100' })).toBe(false);
    expect(loadConfig({ BASE_URL: '', PORT: '42100' }).baseUrl).toBe('http://localhost:42100');
  });

  it('LOG_FORMAT is auto by default, or json or pretty', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ LOG_FORMAT: 'JSON' }).logFormat).toBe('json');
    expect(() => loadConfig({ LOG_FORMAT: 'text' })).toThrow('LOG_FORMAT must be auto, json or pretty (got "text")');
  });

  it('MCP_AUTHORIZATION turns on every MCP feature; each may still be set on its own', () => {
    expect(loadConfig({ MCP_AUTHORIZATION: 'true' })).toMatchObject({
      publicClients: true,
      clientIdMetadataDocuments: true,
      dynamicRegistration: true,
    });
    expect(loadConfig({ MCP_AUTHORIZATION: '1', DYNAMIC_REGISTRATION: 'off' })).toMatchObject({
      publicClients: true,
      clientIdMetadataDocuments: true,
      dynamicRegistration: false,
    });
    expect(loadConfig({ DYNAMIC_REGISTRATION: 'yes' })).toMatchObject({
      publicClients: false,
      clientIdMetadataDocuments: false,
      dynamicRegistration: true,
    });
    expect(loadConfig({ ALLOWED_RESOURCES: 'https://a.example/mcp, https://b.example' }).allowedResources).toEqual([
      'https://a.example/mcp',
      'https://b.example',
    ]);
    expect(loadConfig({ ALLOWED_RESOURCES: '*' }).allowedResources).toBe('*');
  });

  it('CORS follows PUBLIC_CLIENTS (so MCP_AUTHORIZATION turns it on), may be turned off, and needs public clients', () => {
    expect(loadConfig({}).cors).toBe(false);
    expect(loadConfig({ PUBLIC_CLIENTS: 'true' }).cors).toBe(true);
    expect(loadConfig({ MCP_AUTHORIZATION: 'true' }).cors).toBe(true);
    expect(loadConfig({ MCP_AUTHORIZATION: 'true', CORS: 'false' }).cors).toBe(false);
    expect(() => loadConfig({ CORS: 'true' })).toThrow(
      new ConfigError(
        'CORS=true needs PUBLIC_CLIENTS=true: a browser app calls the token endpoint as a public client, with no secret',
      ),
    );
  });

  it('SELF_REGISTERED_CLIENT_RETENTION is 0 (never purge) or at least a day', () => {
    expect(loadConfig({ SELF_REGISTERED_CLIENT_RETENTION: '0' }).selfRegisteredClientRetention).toBe(0);
    expect(loadConfig({ SELF_REGISTERED_CLIENT_RETENTION: '86400' }).selfRegisteredClientRetention).toBe(86400);
  });

  it('STATUS_STREAMS_MAX defaults to half the descriptors the pool and the process leave, 1 to 10,000; 0 turns the cap off', () => {
    expect(defaultStatusStreamsMax(1024, 10)).toBe(475); // (1024 - 10 - 64) / 2
    expect(defaultStatusStreamsMax(1024, 50)).toBe(455);
    expect(defaultStatusStreamsMax(1025, 10)).toBe(475);
    expect(defaultStatusStreamsMax(20_000, 10)).toBe(9963);
    expect(defaultStatusStreamsMax(1_048_576, 10)).toBe(10_000); // containers' usual limit: memory caps it
    expect(defaultStatusStreamsMax(Infinity, 10)).toBe(10_000);
    expect(defaultStatusStreamsMax(64, 10)).toBe(1); // never 0, which would turn the cap off
    const limits =
      'Limit                     Soft Limit           Hard Limit           Units     \nMax processes             63448                63448                processes \nMax open files            4096                 524288               files     \nMax locked memory         8388608              8388608              bytes     \n';
    expect(parseOpenFilesLimit(limits)).toBe(4096);
    expect(
      parseOpenFilesLimit('Max open files            unlimited            unlimited            files     \n'),
    ).toBe(Infinity);
    expect(parseOpenFilesLimit('')).toBeUndefined();
    // This process's own limit, the same way the server reads it.
    expect(openFilesLimit()).toBeGreaterThan(0);
    expect(loadConfig({}).statusStreamsMax).toBe(defaultStatusStreamsMax(openFilesLimit(), 10));
    expect(loadConfig({ DATABASE_POOL_SIZE: '40' }).statusStreamsMax).toBe(
      defaultStatusStreamsMax(openFilesLimit(), 40),
    );
    expect(loadConfig({ STATUS_STREAMS_MAX: '0' }).statusStreamsMax).toBe(0);
    expect(loadConfig({ STATUS_STREAMS_MAX: '250' }).statusStreamsMax).toBe(250);
    expect(loadConfig({ STATUS_STREAMS_MAX: '' }).statusStreamsMax).toBe(defaultStatusStreamsMax(openFilesLimit(), 10));
  });

  it('TRUST_PROXY takes a number of proxies or a list of proxy addresses and CIDRs; false, 0 and unset trust none', () => {
    for (const off of [undefined, '', '0', 'false', 'FALSE', 'no'])
      expect(loadConfig({ TRUST_PROXY: off }).trustProxy, off).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.5' }).trustProxy).toEqual(['10.0.0.5']);
    expect(loadConfig({ TRUST_PROXY: ' 10.0.0.5 , 10.1.0.0/16,::1, fd00::/8 ,loopback' }).trustProxy).toEqual([
      '10.0.0.5',
      '10.1.0.0/16',
      '::1',
      'fd00::/8',
      'loopback',
    ]);
  });

  it('timeouts and the metrics listener take their values', () => {
    expect(
      loadConfig({ HEADERS_TIMEOUT: '5', REQUEST_TIMEOUT: '5', KEEP_ALIVE_TIMEOUT: '2', SHUTDOWN_TIMEOUT: '3' }),
    ).toMatchObject({ headersTimeout: 5, requestTimeout: 5, keepAliveTimeout: 2, shutdownTimeout: 3 });
    const token = 'metrics-token-of-at-least-32-bytes-0123456789';
    expect(loadConfig({ METRICS_TOKEN: token, METRICS_PORT: '9100', METRICS_HOST: '0.0.0.0' })).toMatchObject({
      metricsToken: token,
      metricsPort: 9100,
      metricsHost: '0.0.0.0',
    });
  });

  it('SQLITE_SYNCHRONOUS=normal is the opt-in without an fsync per commit; full is the default', () => {
    expect(loadConfig({ SQLITE_SYNCHRONOUS: 'NORMAL' }).sqliteSynchronous).toBe('normal');
    // PRAGMA synchronous: 2 = FULL, 1 = NORMAL.
    for (const [mode, expected] of [
      [undefined, 2],
      ['full', 2],
      ['normal', 1],
    ] as const) {
      const db = new Database(':memory:');
      new SqliteDriver(db, { synchronous: mode });
      expect(db.pragma('synchronous', { simple: true })).toBe(expected);
      db.close();
    }
  });
});
