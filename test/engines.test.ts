/**
 * Which suites run on both engines (test/setup/engines.ts, vitest.config.ts): on a small tree of
 * suites made for the purpose, and on this repository's own.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { engineReaches, runOnce } from './setup/engines.ts';

const REPOSITORY = join(import.meta.dirname, '..');
/**
 * The two ways to read the engine, spelt in pieces, and the made-up suites' helpers in test/stubs/,
 * which this repository has not: this file's text holds the made-up suites, and written whole they
 * would have this suite read the engine.
 */
const ENGINE_VARIABLE = ['AGENTAUTH', 'TEST', 'ENGINE'].join('_');
const CLUSTER_URL = `inject('postgres${'Url'}')`;

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'agentauth-engines-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('the engine reaches a suite', () => {
  const root = tree({
    'test/stubs/server.ts': `export const ENGINE = process.env.${ENGINE_VARIABLE};\n`,
    'test/stubs/flow.ts': "import type { ENGINE } from './server.ts';\nexport const flow = 1;\n",
    'test/stubs/cluster.ts': `import { inject } from 'vitest';\nexport const url = () => ${CLUSTER_URL};\n`,
    'test/server.test.ts':
      "import { flow } from './stubs/flow.ts';\nimport {\n  ENGINE,\n} from './stubs/server.ts';\n",
    'test/types-only.test.ts':
      "import { flow } from './stubs/flow.ts';\nimport type { ENGINE } from './stubs/server.ts';\n",
    'test/dynamic.test.ts': "const { ENGINE } = await import('./stubs/server.ts');\n",
    'test/cluster.test.ts': "export { url } from './stubs/cluster.ts';\n",
    'test/marked.test.ts':
      "/**\n * Pages.\n *\n * @engine-independent it measures layout only\n */\nimport { ENGINE } from './stubs/server.ts';\n",
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('through a runtime import, however indirect, or a dynamic one, but not a type import', () => {
    expect(engineReaches(root, 'test/server.test.ts')).toBe(true);
    expect(engineReaches(root, 'test/dynamic.test.ts')).toBe(true);
    expect(engineReaches(root, 'test/cluster.test.ts')).toBe(true);
    expect(engineReaches(root, 'test/types-only.test.ts')).toBe(false);
  });

  it('runs once the suites it does not reach, and those marked with a reason', () => {
    expect(runOnce(root)).toEqual(['test/marked.test.ts', 'test/types-only.test.ts']);
  });

  it('refuses a marker without its reason', () => {
    const bare = tree({ 'test/bare.test.ts': '/**\n * @engine-independent\n */\n' });
    try {
      expect(() => runOnce(bare)).toThrow(/needs its reason/);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  it('reaches suites of this repository that start a test server, and not this one', () => {
    expect(engineReaches(REPOSITORY, 'test/flow.test.ts')).toBe(true);
    expect(engineReaches(REPOSITORY, 'packages/agent/test/agent-sdk.test.ts')).toBe(true);
    expect(engineReaches(REPOSITORY, 'test/engines.test.ts')).toBe(false);
  });
});
