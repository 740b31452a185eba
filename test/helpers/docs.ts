/** The documentation a newcomer reads, for the suites that check it (links, install commands). */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..');

/**
 * README.md and the other top-level Markdown files, docs/ and the READMEs (and other Markdown) of
 * packages/, python/ and examples/; node_modules, build output and dot-folders are not documentation.
 *
 * @example
 * documentationFiles(); // ['/…/CHANGELOG.md', '/…/README.md', …, '/…/docs/guides/agent.md', …]
 */
export function documentationFiles(): string[] {
  const files = readdirSync(ROOT)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, name));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  for (const dir of ['docs', 'packages', 'python', 'examples']) walk(join(ROOT, dir));
  return files;
}
