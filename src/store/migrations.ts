/** Schema migrations, written once in Kysely's schema builder for both engines. */
import type { Kysely, Migration, MigrationProvider } from 'kysely';

const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('clients')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('name', 'varchar(200)', (c) => c.notNull())
        .addColumn('secret_sealed', 'varchar(400)', (c) => c.notNull())
        .addColumn('redirect_uris', 'text', (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('approval', 'varchar(16)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('agents')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('secret_digest', 'varchar(64)', (c) => c.notNull())
        .addColumn('name', 'varchar(200)', (c) => c.notNull())
        .addColumn('owner_email', 'varchar(320)', (c) => c.notNull())
        .addColumn('owner_name', 'varchar(200)')
        // 0/1 rather than boolean: one representation that binds the same on both engines.
        .addColumn('owner_email_verified', 'integer', (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();

      await db.schema
        .createTable('authorization_requests')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('client_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('scope', 'varchar(200)', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('code_challenge', 'varchar(64)', (c) => c.notNull())
        .addColumn('nonce', 'text')
        .addColumn('browser_digest', 'varchar(64)', (c) => c.notNull())
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('error', 'varchar(64)')
        .addColumn('error_description', 'text')
        .addColumn('agent_id', 'varchar(64)')
        .addColumn('model', 'varchar(200)')
        .addColumn('authenticated_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('authorization_requests_expires_at').on('authorization_requests').column('expires_at').execute();

      await db.schema
        .createTable('authorization_codes')
        .addColumn('digest', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('request_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('client_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('scope', 'varchar(200)', (c) => c.notNull())
        .addColumn('code_challenge', 'varchar(64)', (c) => c.notNull())
        .addColumn('nonce', 'text')
        .addColumn('agent_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('model', 'varchar(200)', (c) => c.notNull())
        .addColumn('auth_time', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('redeemed_at', 'bigint')
        .addColumn('grant_id', 'varchar(64)')
        .execute();
      await db.schema.createIndex('authorization_codes_expires_at').on('authorization_codes').column('expires_at').execute();

      await db.schema
        .createTable('grants')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('client_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('agent_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('scope', 'varchar(200)', (c) => c.notNull())
        .addColumn('model', 'varchar(200)', (c) => c.notNull())
        .addColumn('auth_time', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute();

      await db.schema
        .createTable('refresh_tokens')
        .addColumn('digest', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('grant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .execute();
      await db.schema.createIndex('refresh_tokens_grant_id').on('refresh_tokens').column('grant_id').execute();
      await db.schema.createIndex('refresh_tokens_expires_at').on('refresh_tokens').column('expires_at').execute();

      await db.schema
        .createTable('access_tokens')
        .addColumn('jti', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('grant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('client_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('scope', 'varchar(200)', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('access_tokens_expires_at').on('access_tokens').column('expires_at').execute();

      await db.schema
        .createTable('audit_events')
        .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('agent_id', 'varchar(256)')
        .addColumn('request_id', 'varchar(256)')
        .addColumn('client_id', 'varchar(64)')
        .addColumn('model', 'varchar(200)')
        .addColumn('ip', 'varchar(64)')
        .addColumn('user_agent', 'varchar(512)')
        .addColumn('outcome', 'varchar(64)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_events_agent_at').on('audit_events').columns(['agent_id', 'at']).execute();
      await db.schema.createIndex('audit_events_at').on('audit_events').column('at').execute();
    },
  },
};

migrations['0002_secret_rotation_grace'] = {
  // A rotated agent or client secret may stay valid for a grace period (zero-downtime rotation).
  // One ADD COLUMN per statement: SQLite accepts no more.
  async up(db: Kysely<any>) {
    await db.schema.alterTable('agents').addColumn('previous_secret_digest', 'varchar(64)').execute();
    await db.schema.alterTable('agents').addColumn('previous_secret_expires_at', 'bigint').execute();
    await db.schema.alterTable('clients').addColumn('previous_secret_sealed', 'varchar(400)').execute();
    await db.schema.alterTable('clients').addColumn('previous_secret_expires_at', 'bigint').execute();
  },
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
