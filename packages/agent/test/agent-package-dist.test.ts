/**
 * packages/agent/dist/ is committed, since `npm install <repository>/packages/agent` runs no
 * build and installs no dependencies: it must be what build.mjs makes of the sources today,
 * byte for byte, and its modules may import nothing but Node's built-ins and each other.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('../', import.meta.url));
const dist = join(packageDir, 'dist');
const REBUILD = 'packages/agent/dist/ is stale: run `npm run build:agent` and commit dist/';

/** Every file under a directory, as paths relative to it, sorted. */
function filesOf(directory: string): string[] {
  const walk = (folder: string): string[] =>
    readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(folder, entry.name)) : [relative(directory, join(folder, entry.name))],
    );
  return walk(directory).sort();
}

let fresh: string;

beforeAll(async () => {
  fresh = mkdtempSync(join(tmpdir(), 'agentauth-agent-dist-'));
  await run(process.execPath, [join(packageDir, 'build.mjs'), fresh], { cwd: packageDir });
}, 120_000);
afterAll(() => {
  if (fresh) rmSync(fresh, { recursive: true, force: true });
});

describe('packages/agent/dist (committed)', () => {
  it('is what `npm run build:agent` builds from the sources now, byte for byte', () => {
    expect(filesOf(dist), REBUILD).toEqual(filesOf(fresh));
    for (const file of filesOf(fresh)) {
      expect(readFileSync(join(dist, file)).equals(readFileSync(join(fresh, file))), `${file}: ${REBUILD}`).toBe(true);
    }
  });

  it('has the command executable, with its interpreter line', () => {
    expect(statSync(join(dist, 'cli.js')).mode & 0o111).toBe(0o111);
    expect(readFileSync(join(dist, 'cli.js'), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  it('imports nothing but node: built-ins and its own files; the SDK imports nothing at all', () => {
    const bare: string[] = [];
    for (const file of filesOf(dist).filter((name) => name.endsWith('.js'))) {
      const text = readFileSync(join(dist, file), 'utf8');
      const specifiers = [
        ...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g),
        ...text.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g),
        ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
        // Calls only: ajv keeps require("ajv/dist/runtime/…") in strings, code it would generate.
        ...text.matchAll(/(?<![\w$.'"`])(?:__)?require\(\s*['"]([^'"]+)['"]\s*\)/g),
      ].map((match) => match[1]!);
      for (const specifier of specifiers)
        if (!specifier.startsWith('node:') && !specifier.startsWith('./') && !specifier.startsWith('../'))
          bare.push(`${file}: ${specifier}`);
    }
    expect(bare).toEqual([]);
    expect(readFileSync(join(dist, 'index.js'), 'utf8')).not.toMatch(/^\s*import\s|\brequire\(|\bimport\(/m);
  });

  it('carries the licence of every package bundled into the command', () => {
    const notices = readFileSync(join(dist, 'THIRD-PARTY-NOTICES'), 'utf8');
    for (const name of ['commander', '@modelcontextprotocol/sdk', 'zod'])
      expect(notices).toMatch(new RegExp(`^## ${name.replace('/', '\\/')} \\d`, 'm'));
  });
});
