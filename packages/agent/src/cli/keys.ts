/**
 * Key-bound agents on the command line (docs/design.md §16): `agentauth-agent keygen` makes the
 * key pair (the private key in a file only its user can read, the public key printed for the
 * owner to register), and `sign-in` and `mcp` read the private key from a file named by
 * `--key-file` or AGENTAUTH_AGENT_KEY_FILE instead of using AGENTAUTH_AGENT_SECRET.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import {
  type AgentAuthOptions,
  ConfigurationError,
  generateAgentKey,
  keyThumbprint,
  readPrivateKey,
} from '../index.ts';

/** Where keygen writes the private key when --out is not given. */
export const DEFAULT_KEY_FILE = 'agentauth-agent-key.json';

/**
 * The SDK's option for the private key in `keyFile` (or AGENTAUTH_AGENT_KEY_FILE); none when
 * neither names a file, and the SDK then takes AGENTAUTH_AGENT_SECRET. A file other users can
 * read is refused, as ssh refuses one: the key would not be the agent's alone.
 *
 * @example
 * const agent = new AgentAuth({ ...keyOptions(flags.keyFile) });
 */
export function keyOptions(keyFile?: string): Pick<AgentAuthOptions, 'privateKey'> {
  const path = keyFile ?? (process.env.AGENTAUTH_AGENT_KEY_FILE || undefined);
  if (path === undefined) return {};
  let text: string;
  try {
    if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0)
      throw new ConfigurationError(
        `The key file ${path} can be read by other users: make it yours alone (chmod 600 ${path}).`,
      );
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new ConfigurationError(
      `The key file ${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`,
    );
  }
  // Both a key and a secret in the environment would leave which one signs in to chance.
  if (keyFile === undefined && process.env.AGENTAUTH_AGENT_SECRET)
    throw new ConfigurationError('Both AGENTAUTH_AGENT_SECRET and AGENTAUTH_AGENT_KEY_FILE are set: keep one.');
  return { privateKey: readPrivateKey(text) };
}

function algorithm(value: string): 'Ed25519' | 'ES256' {
  if (value !== 'Ed25519' && value !== 'ES256') throw new InvalidArgumentError('Ed25519 or ES256');
  return value;
}

/** Adds `keygen` to the program. */
export function keygenCommand(program: Command, name = 'agentauth-agent'): void {
  program
    .command('keygen')
    .description(
      "make a key pair for a key-bound agent: writes the private key (a JWK) to a file only you can read, prints the public key for the agent's owner to register",
    )
    .option(
      '--out <file>',
      'where to write the private key (refused if it exists; its folder is made, readable only by you)',
      DEFAULT_KEY_FILE,
    )
    .option('--public-out <file>', 'also write the public key to this file (refused if it exists)')
    .option('--alg <alg>', 'Ed25519 (EdDSA) or ES256 (P-256)', algorithm, 'Ed25519')
    .option('--json', 'print {"public_key", "key_thumbprint", "key_file"} as one JSON object')
    .addHelpText(
      'after',
      `
stdout is the public key alone (JSON); --public-out writes it to a file for the owner, only once
the private key is safely written (a shell's "> file" would leave an empty file on a failure):
  ${name} keygen --out ~/.agentauth/agent-key.json --public-out agent-public.jwk
  agentauth agent create --owner-email you@example.com --public-key agent-public.jwk
Then, where the agent runs: AGENTAUTH_AGENT_KEY_FILE=~/.agentauth/agent-key.json (instead of
AGENTAUTH_AGENT_SECRET). The private key never leaves that file: each sign-in sends a signed
assertion, good for one minute, one request and this issuer only.`,
    )
    .action(async (flags: { out: string; publicOut?: string; alg: 'Ed25519' | 'ES256'; json?: boolean }) => {
      // Both refusals before anything is written: never a private key without its public half.
      for (const file of [flags.out, flags.publicOut])
        if (file !== undefined && existsSync(file))
          throw new Error(`${file} exists; keygen does not overwrite a key (choose another file, or remove it first)`);
      const { privateKey, publicKey } = await generateAgentKey(flags.alg);
      const thumbprint = await keyThumbprint(publicKey);
      const stored = { ...privateKey, alg: flags.alg === 'Ed25519' ? 'EdDSA' : 'ES256', kid: thumbprint };
      try {
        // A fresh machine has no ~/.agentauth: made as ssh makes ~/.ssh, for its user alone.
        mkdirSync(dirname(flags.out), { recursive: true, mode: 0o700 });
        // wx: never over an existing file (another agent's key, lost for good); 0600 from the start.
        writeFileSync(flags.out, `${JSON.stringify(stored, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        throw new Error(
          code === 'EEXIST'
            ? `${flags.out} exists; keygen does not overwrite a key (choose another --out, or remove it first)`
            : `cannot write ${flags.out}: ${code ?? String(error)}`,
        );
      }
      if (flags.publicOut !== undefined) {
        try {
          mkdirSync(dirname(flags.publicOut), { recursive: true });
          writeFileSync(flags.publicOut, `${JSON.stringify(publicKey, null, 2)}\n`, { flag: 'wx' });
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          process.stdout.write(`${JSON.stringify(publicKey, null, 2)}\n`);
          throw new Error(
            `private key written to ${flags.out}, but cannot write ${flags.publicOut}: ${code ?? String(error)}; the public key is on stdout`,
          );
        }
      }
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify({ public_key: publicKey, key_thumbprint: thumbprint, key_file: flags.out })}\n`,
        );
        return;
      }
      process.stdout.write(`${JSON.stringify(publicKey, null, 2)}\n`);
      process.stderr.write(
        `private key written to ${flags.out} (readable only by you)\nkey_thumbprint: ${thumbprint}\nregister the public key above: agentauth agent create --public-key FILE (or the console)\n`,
      );
    });
}
