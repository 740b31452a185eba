/**
 * A durable adapter for the peer (oidc-provider), on SQLite or PostgreSQL, so that agentauth is
 * compared with what people run in production and not only with the in-memory adapter that
 * oidc-provider's documentation says is not for production (issue 25).
 *
 * It follows the shape of the peer's own example adapters (example/adapters/redis.js in
 * panva/node-oidc-provider): every model is stored as the JSON payload the provider hands over,
 * keyed by model name and id, with the grant id of the grantable models (so revokeByGrantId is
 * one statement), the session's uid and the device flow's user code as lookups, the expiry, and
 * consumption as a timestamp returned as `consumed`. One statement per adapter call, each its own
 * durable commit (SQLite: WAL with synchronous=FULL, agentauth's default; PostgreSQL: the
 * cluster's synchronous_commit), as a straightforward production adapter would do; nothing is
 * cached in memory.
 */
import Database from 'better-sqlite3';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import pg from 'pg';

/** The models whose payload carries a grantId that revokeByGrantId must find (as the example's). */
const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

const SCHEMA = `CREATE TABLE IF NOT EXISTS oidc_models (
  name varchar(64) NOT NULL,
  id varchar(255) NOT NULL,
  payload text NOT NULL,
  grant_id varchar(255),
  uid varchar(255),
  user_code varchar(255),
  expires_at bigint,
  consumed_at bigint,
  PRIMARY KEY (name, id)
)`;
const INDEXES = [
  'CREATE INDEX IF NOT EXISTS oidc_models_grant_id ON oidc_models (grant_id)',
  'CREATE INDEX IF NOT EXISTS oidc_models_uid ON oidc_models (name, uid)',
  'CREATE INDEX IF NOT EXISTS oidc_models_user_code ON oidc_models (name, user_code)',
];

interface Row {
  payload: string;
  expires_at: number | string | null;
  consumed_at: number | string | null;
}

/** The statements each engine runs, with `$n` placeholders in order (SQLite gets `?`). */
const SQL = {
  upsert: `INSERT INTO oidc_models (name, id, payload, grant_id, uid, user_code, expires_at, consumed_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)
    ON CONFLICT (name, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
      uid = excluded.uid, user_code = excluded.user_code, expires_at = excluded.expires_at, consumed_at = NULL`,
  find: 'SELECT payload, expires_at, consumed_at FROM oidc_models WHERE name = $1 AND id = $2',
  findByUid: 'SELECT payload, expires_at, consumed_at FROM oidc_models WHERE name = $1 AND uid = $2',
  findByUserCode: 'SELECT payload, expires_at, consumed_at FROM oidc_models WHERE name = $1 AND user_code = $2',
  consume: 'UPDATE oidc_models SET consumed_at = $1 WHERE name = $2 AND id = $3',
  destroy: 'DELETE FROM oidc_models WHERE name = $1 AND id = $2',
  revokeByGrantId: 'DELETE FROM oidc_models WHERE grant_id = $1',
} as const;
type Statement = keyof typeof SQL;

interface Engine {
  one(statement: Statement, params: unknown[]): Promise<Row | undefined>;
  run(statement: Statement, params: unknown[]): Promise<void>;
}

const now = () => Math.floor(Date.now() / 1000);

function payloadOf(row: Row | undefined): AdapterPayload | undefined {
  if (!row) return undefined;
  if (row.expires_at !== null && Number(row.expires_at) <= now()) return undefined;
  const payload = JSON.parse(row.payload) as AdapterPayload;
  return row.consumed_at === null ? payload : { ...payload, consumed: Number(row.consumed_at) };
}

function sqliteEngine(path: string): Engine {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.exec(SCHEMA);
  for (const index of INDEXES) db.exec(index);
  const prepared = Object.fromEntries(
    Object.entries(SQL).map(([key, sql]) => [key, db.prepare(sql.replace(/\$\d+/g, '?'))]),
  ) as Record<Statement, Database.Statement>;
  return {
    async one(statement, params) {
      return prepared[statement].get(...params) as Row | undefined;
    },
    async run(statement, params) {
      prepared[statement].run(...params);
    },
  };
}

function postgresEngine(url: string): Engine {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const ready = (async () => {
    await pool.query(SCHEMA);
    for (const index of INDEXES) await pool.query(index);
  })();
  // Named statements: each connection prepares each once, as agentauth's driver does.
  const query = async (statement: Statement, params: unknown[]) => {
    await ready;
    return pool.query<Row>({ name: `oidc_${statement}`, text: SQL[statement], values: params });
  };
  return {
    async one(statement, params) {
      return (await query(statement, params)).rows[0];
    },
    async run(statement, params) {
      await query(statement, params);
    },
  };
}

/**
 * The adapter class for `configuration.adapter`, on the store of `url` (`sqlite:<path>` or a
 * `postgres://` URL).
 *
 * @example
 * const configuration = { adapter: durableAdapter('sqlite:/tmp/peer.db'), … };
 */
export function durableAdapter(url: string): new (name: string) => Adapter {
  const engine = url.startsWith('sqlite:') ? sqliteEngine(url.slice('sqlite:'.length)) : postgresEngine(url);
  return class DurableAdapter implements Adapter {
    constructor(private readonly name: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await engine.run('upsert', [
        this.name,
        id,
        JSON.stringify(payload),
        GRANTABLE.has(this.name) ? (payload.grantId ?? null) : null,
        this.name === 'Session' ? (payload.uid ?? null) : null,
        payload.userCode ?? null,
        expiresIn ? now() + expiresIn : null,
      ]);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      return payloadOf(await engine.one('find', [this.name, id]));
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return payloadOf(await engine.one('findByUid', [this.name, uid]));
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return payloadOf(await engine.one('findByUserCode', [this.name, userCode]));
    }

    async consume(id: string): Promise<void> {
      await engine.run('consume', [now(), this.name, id]);
    }

    async destroy(id: string): Promise<void> {
      await engine.run('destroy', [this.name, id]);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await engine.run('revokeByGrantId', [grantId]);
    }
  };
}
