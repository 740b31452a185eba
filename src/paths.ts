import { realpathSync } from 'node:fs';
import { basename, delimiter, isAbsolute, join, relative } from 'node:path';

/**
 * The project's root directory. This module lies one level below it both as source (src/)
 * and inside the bundle bin/agentauth builds (dist/), so the same expression holds for both.
 */
export const PROJECT_ROOT = new URL('..', import.meta.url);

/**
 * How the operator runs the agentauth command where this process runs, for the hints it prints:
 * `agentauth` when that name on the PATH is this very program (an installed package, the
 * container image) or when the process is not the command at all (a server started in process);
 * otherwise the path it was started by, as typed from the working directory (`./bin/agentauth`
 * in a checkout, where nothing is on the PATH).
 *
 * @example
 * agentauthCommand('/srv/agentauth/bin/agentauth', '/srv/agentauth', '/usr/bin'); // './bin/agentauth'
 * agentauthCommand('/usr/lib/node_modules/agentauth/bin/agentauth', '/', '/usr/bin'); // 'agentauth', if /usr/bin/agentauth links to it
 */
export function agentauthCommand(
  started = process.argv[1],
  cwd = process.cwd(),
  searchPath = process.env.PATH ?? '',
): string {
  if (!started || basename(started) !== 'agentauth') return 'agentauth';
  const program = realpathOrNull(started);
  const onPath = searchPath
    .split(delimiter)
    .filter(Boolean)
    .some((folder) => program !== null && realpathOrNull(join(folder, 'agentauth')) === program);
  if (onPath) return 'agentauth';
  const typed = relative(cwd, started);
  return typed.startsWith('..') || isAbsolute(typed) ? started : `./${typed}`;
}

function realpathOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
