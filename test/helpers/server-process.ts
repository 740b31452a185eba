/**
 * `agentauth serve` as a child process: started with an environment, awaited until ready, and
 * stopped or killed, its output kept for the failure message.
 */
import { type ChildProcess, spawn } from 'node:child_process';

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything the process wrote on stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code or signal once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `node bin/agentauth serve` with this environment (on top of the test's own), and with
 * `openFiles`, under that descriptor limit (`ulimit -n`, soft and hard).
 */
export function spawnServer(env: Record<string, string>, options: { openFiles?: number } = {}): ServerProcess {
  const command =
    options.openFiles === undefined
      ? ['node', 'bin/agentauth', 'serve']
      : ['sh', '-c', `ulimit -n ${Math.floor(options.openFiles)} && exec node bin/agentauth serve`];
  // Load from one address would otherwise meet the /authorize flood guard.
  return spawnCommand(command, { env: { ...process.env, AUTHORIZE_LIMIT_PER_IP: '100000', ...env }, port: env.PORT! });
}

/**
 * Starts a server by any command line (an installed `agentauth`, a systemd unit's `ExecStart`)
 * with exactly this environment, in `cwd`, listening on `port` of 127.0.0.1.
 *
 * @example
 * const server = spawnCommand(['/opt/agentauth/bin/agentauth', 'serve'], { env: { PATH, PORT: '4100' }, port: '4100' });
 * await waitReady(server);
 */
export function spawnCommand(
  command: string[],
  options: { env: NodeJS.ProcessEnv; port: string; cwd?: string },
): ServerProcess {
  const child = spawn(command[0]!, command.slice(1), {
    env: options.env,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    baseUrl: `http://127.0.0.1:${options.port}`,
    output: () => output,
    exited,
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Waits until GET /readyz answers 200; throws after `timeoutMs` or when the process ends. */
export async function waitReady(server: ServerProcess, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null || server.child.signalCode !== null)
      throw new Error(`server exited before it was ready:\n${server.output()}`);
    try {
      if ((await fetch(`${server.baseUrl}/readyz`, { signal: AbortSignal.timeout(2000) })).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`server ${server.baseUrl} did not become ready within ${timeoutMs} ms:\n${server.output()}`);
}
