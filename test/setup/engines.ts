/**
 * Which suites the storage engine can change (vitest.config.ts). The two projects differ only in
 * the engine: AGENTAUTH_TEST_ENGINE in the environment, and the PostgreSQL cluster's URL provided
 * as `postgresUrl`. A suite none of whose modules reads either would run the same code twice, so
 * it runs once; everything else runs on both engines unless its header says, with the reason,
 * that what it checks cannot differ by engine (ENGINE_INDEPENDENT).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/** Where the suites are (vitest.config.ts's INCLUDE): every *.test.ts below these folders. */
const SUITE_ROOTS = ['test', 'packages/agent/test'];
/** Never suites of ours, as vitest's default exclude says. */
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', '.git']);

/**
 * How a module reads the engine: test/helpers/server.ts does both; a suite may too. The text is
 * searched, comments included: a mention errs towards both engines.
 */
const READS_ENGINE = /AGENTAUTH_TEST_ENGINE|\binject\(\s*['"]postgresUrl['"]\s*\)/;
/** This module, which names both without reading either (test/engines.test.ts loads it). */
const THIS_MODULE = 'test/setup/engines.ts';

/**
 * The marker of a suite that starts a server on the project's engine, yet checks nothing the
 * engine can change (the layout of pages, say), followed by why: a doc-comment line
 * `@engine-independent <why>`.
 */
export const ENGINE_INDEPENDENT = /^\s*\*\s*@engine-independent\b(.*)$/m;

/** This repository's own package, imported by name (its `@agentauth/source` export, as the suites run it). */
const PACKAGES: Record<string, string> = {
  '@agentauth/agent': 'packages/agent/src/index.ts',
  '@agentauth/agent/cli': 'packages/agent/src/cli/index.ts',
};

/**
 * Every suite under the roots, relative to `root`, sorted.
 *
 * @example
 * suites('/work/agentauth'); // ['packages/agent/test/agent-keys.test.ts', …, 'test/webhooks/delivery.test.ts']
 */
export function suites(root: string): string[] {
  const walk = (folder: string): string[] =>
    readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : walk(path);
      return entry.name.endsWith('.test.ts') ? [path] : [];
    });
  return SUITE_ROOTS.filter((folder) => existsSync(join(root, folder)))
    .flatMap(walk)
    .sort();
}

/**
 * The modules a file loads when it runs: static imports but not `import type` (erased), side-effect
 * imports, and dynamic imports of a literal path; this repository's files only, since no package
 * reads the engine.
 */
function runtimeImports(root: string, file: string, text: string): string[] {
  const found = text.matchAll(
    /(?:^|\n)\s*(?:import|export)(?!\s+type[\s{])[^'"]*?\sfrom\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  );
  return [...found].flatMap((match) => {
    const specifier = (match[1] ?? match[2] ?? match[3])!;
    if (specifier.startsWith('.')) return [relative(root, normalize(join(root, dirname(file), specifier)))];
    return PACKAGES[specifier] ? [PACKAGES[specifier]] : [];
  });
}

/**
 * Whether the engine can reach `suite`: whether it, or a module it loads however indirectly,
 * reads AGENTAUTH_TEST_ENGINE or the `postgresUrl` the postgres project provides.
 *
 * @example
 * engineReaches(root, 'test/flow.test.ts');   // true: it starts a server (test/helpers/server.ts)
 * engineReaches(root, 'test/layout.test.ts'); // false
 */
export function engineReaches(root: string, suite: string): boolean {
  const seen = new Set([suite]);
  const pending = [suite];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    let text: string;
    try {
      text = readFileSync(join(root, file), 'utf8');
    } catch {
      continue; // not a file of ours (a path the code builds, a generated file): nothing to follow
    }
    if (file !== THIS_MODULE && READS_ENGINE.test(text)) return true;
    for (const next of runtimeImports(root, file, text)) {
      if (seen.has(next)) continue;
      seen.add(next);
      pending.push(next);
    }
  }
  return false;
}

/**
 * The suites to run once, on SQLite: those the engine cannot reach, and those marked
 * `@engine-independent` with a reason. A marker without a reason is an error, not a pass.
 *
 * @example
 * const once = runOnce(import.meta.dirname); // ['test/demo-website.test.ts', 'test/layout.test.ts', …]
 */
export function runOnce(root: string): string[] {
  return suites(root).filter((suite) => {
    const marker = ENGINE_INDEPENDENT.exec(readFileSync(join(root, suite), 'utf8'));
    if (marker && marker[1]!.trim() === '')
      throw new Error(`${suite}: @engine-independent needs its reason: why the engine cannot change what it checks`);
    return marker !== null || !engineReaches(root, suite);
  });
}
