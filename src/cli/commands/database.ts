/**
 * `agentauth database check`: whether DATABASE_URL's database can serve this build, and what is
 * missing if not (connection, privileges, migrations), each with its remedy. It changes nothing;
 * it exits 1 when something is missing, so a deployment can run it before the server.
 */
import type { Command } from 'commander';
import { loadDatabaseUrl } from '../../config.ts';
import { checkDatabase } from '../../store/check.ts';
import { print } from '../common.ts';
import { BESIDE_THE_SERVER, requireDatabase } from '../target.ts';

export function databaseCommand(program: Command): void {
  const database = program.command('database').description('check the database DATABASE_URL names');
  database
    .command('check')
    .description(
      'check that the database can serve this version: the connection, the privileges and the migrations, each with what to do when it is missing; changes nothing, exits 1 when something is missing',
    )
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      requireDatabase(command, `database check checks the database itself: ${BESIDE_THE_SERVER}`);
      // The database's URL only: the check answers before the node's other settings are set.
      const result = await checkDatabase(loadDatabaseUrl());
      process.stderr.write(`database: ${result.database}\n`);
      const lines = result.checks.flatMap((check) => [
        `${check.name}: ${check.ok ? 'ok' : 'MISSING'}: ${check.message}`,
        ...(check.remedy ? [`  what to do: ${check.remedy}`] : []),
      ]);
      print(!!options.json, result, [...lines, result.ok ? 'ready to serve' : 'not ready to serve'].join('\n'));
      if (!result.ok) process.exitCode = 1;
    });
}
