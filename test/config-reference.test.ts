/** docs/reference/configuration.md is made from the table loadConfig reads the environment by, and kept so. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configurationReference, REFERENCE_PATH } from '../scripts/config-reference.ts';
import { SETTINGS, shownDefault } from '../src/config.ts';

describe('the configuration reference', () => {
  it('docs/reference/configuration.md is what `npm run docs:config` writes from the table (run it after changing the table)', () => {
    expect(readFileSync(REFERENCE_PATH, 'utf8')).toBe(configurationReference());
  });

  it('has every relative link of the table lead to a file', () => {
    for (const [, target] of configurationReference().matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)) {
      expect(existsSync(join(dirname(REFERENCE_PATH), target!)), target).toBe(true);
    }
  });

  it('names every variable once, each with its default and what it does', () => {
    const names = SETTINGS.map((entry) => entry.name);
    expect(new Set(names).size).toBe(names.length);
    for (const entry of SETTINGS) {
      expect(shownDefault(entry), entry.name).not.toBe('');
      expect(entry.doc, entry.name).toMatch(/\.$/);
    }
  });
});
