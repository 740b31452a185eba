/** What the management commands share: the context they work in, and how they print. */
import { loadConfig } from '../config.ts';
import type { Context } from '../context.ts';
import { createContext } from '../app.ts';
import { resolveJwtSecret } from '../server.ts';
import { openStore } from '../store/open.ts';

export const warn = (message: string) => process.stderr.write(`warning: ${message}\n`);

export async function withContext<T>(work: (ctx: Context) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config.databaseUrl, { poolSize: 1 });
  try {
    await store.migrate();
    return await work(
      await createContext(
        config,
        store,
        resolveJwtSecret(config, () => {}),
      ),
    );
  } finally {
    await store.close();
  }
}

export function print(json: boolean, value: object, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

export const isoTime = (epochSeconds: number | null) =>
  epochSeconds === null ? null : new Date(epochSeconds * 1000).toISOString();

export const collect = (value: string, previous: string[]) => [...previous, value];
