/** `agentauth serve` and `agentauth migrate`: the server process, and its database's migrations. */
import type { Command } from 'commander';
import { type Config, loadConfig } from '../../config.ts';
import { startServer } from '../../server.ts';
import { inWords } from '../../store/diagnosis.ts';
import { databaseName, openStore } from '../../store/open.ts';
import { warn } from '../common.ts';
import { BESIDE_THE_SERVER, requireDatabase } from '../target.ts';

export function serveCommands(program: Command): void {
  program
    .command('serve')
    .description('run the server (configured by the environment: PORT, DATABASE_URL, JWT_SECRET, …)')
    .action(async (_options: object, command: Command) => {
      requireDatabase(command, 'serve runs the server on its own database; it takes no --url or AGENTAUTH_URL');
      const config: Config = loadConfig();
      const server = await startServer(config, { warn });
      // The stream cap's default depends on the descriptor limit, so the operator sees what it came to.
      server.app.log.info(
        {
          issuer: config.baseUrl,
          database: databaseName(config.databaseUrl),
          statusStreamsMax: config.statusStreamsMax,
        },
        'agentauth is serving',
      );
      const stop = (signal: string) => {
        server.app.log.info({ signal }, 'shutting down: finishing in-flight requests');
        server.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
        // close() ends the connections after the grace; this holds the bound even if closing
        // the database hangs.
        setTimeout(() => {
          server.app.log.error(
            { signal },
            `shutdown did not finish within SHUTDOWN_TIMEOUT (${config.shutdownTimeout} s); exiting`,
          );
          process.exit(1);
        }, config.shutdownTimeout * 1000).unref();
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });

  program
    .command('migrate')
    .description('apply database migrations and exit')
    .action(async (_options: object, command: Command) => {
      requireDatabase(command, `migrate applies the migrations to the database: ${BESIDE_THE_SERVER}`);
      const config = loadConfig();
      const store = await openStore(config.databaseUrl, { poolSize: 1 }).catch((error: unknown) => {
        throw inWords(error, config.databaseUrl);
      });
      try {
        await store.migrate();
      } catch (error) {
        throw inWords(error, config.databaseUrl);
      } finally {
        await store.close();
      }
      process.stdout.write(`migrations applied to ${databaseName(config.databaseUrl)}\n`);
    });
}
