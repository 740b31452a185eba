/**
 * npm run docs:config: writes docs/reference/configuration.md, the reference of every environment
 * variable, from the table loadConfig reads them by (SETTINGS in src/config.ts). The file is
 * never edited by hand; test/config-reference.test.ts fails while it differs from the table.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fileVariable, SETTINGS, type Setting, shownDefault } from '../src/config.ts';

export const REFERENCE_PATH = fileURLToPath(new URL('../docs/reference/configuration.md', import.meta.url));

/** A table cell: one line, with no | to end it early. */
const cell = (markdown: string) => markdown.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** The text of docs/reference/configuration.md. */
export function configurationReference(): string {
  const rows = (SETTINGS as readonly Setting[]).map((entry) => {
    const doc = entry.fromFile ? `${entry.doc} Or from a file: \`${fileVariable(entry.name)}\`.` : entry.doc;
    return `| \`${entry.name}\` | ${cell(entry.type.takes)} | ${cell(shownDefault(entry))} | ${cell(doc)} |`;
  });
  return [
    '<!-- Generated from the table in src/config.ts (SETTINGS) by `npm run docs:config`: edit the table, not this file. -->',
    '',
    '# Configuration',
    '',
    'All configuration comes from environment variables; an empty variable counts as unset. An',
    'invalid value stops start-up (and every CLI command) with one line naming the variable.',
    'Durations are in whole seconds.',
    '',
    'A secret (a row ending "Or from a file") may come instead from a file, named by the same',
    'variable with `_FILE` appended: `JWT_SECRET_FILE=/run/secrets/jwt_secret` (a Docker or Compose',
    'secret, a systemd credential). The file holds the value alone; a final line break is dropped.',
    'Setting both variables, or naming a file that cannot be read or is empty, stops start-up.',
    '',
    '| Variable | Takes | Default | Meaning |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(REFERENCE_PATH, configurationReference());
  process.stdout.write(`wrote ${REFERENCE_PATH}\n`);
}
