/** docs/reference/cli.md is made from the program the agentauth command runs, and kept so. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { cliReference, REFERENCE_PATH } from '../scripts/cli-reference.ts';
import { buildAgentCli } from '@agentauth/agent/cli';
import { buildCli } from '../src/cli/main.ts';

/** Every command of the program, as `agentauth client create`. */
function commandNames(command: Command, parent = ''): string[] {
  const name = `${parent}${command.name()}`;
  return [name, ...command.commands.flatMap((sub) => commandNames(sub, `${name} `))];
}

describe('the CLI reference', () => {
  it('docs/reference/cli.md is what `npm run docs:cli` writes from the program (run it after changing a command)', () => {
    expect(readFileSync(REFERENCE_PATH, 'utf8')).toBe(cliReference());
  });

  it('has a section for every command and a row for every option, and its links lead somewhere', () => {
    const text = cliReference();
    const walk = (command: Command): Command[] => [command, ...command.commands.flatMap(walk)];
    for (const program of [buildCli(), buildAgentCli()]) {
      for (const name of commandNames(program)) expect(text, name).toContain(`\n## ${name}\n`);
      for (const command of walk(program)) {
        for (const option of command.options) expect(text, option.flags).toContain(`| \`${option.flags}\` |`);
      }
    }
    for (const [, target] of text.matchAll(/\]\(([^)#]+)(#[^)]*)?\)/g)) {
      expect(existsSync(join(dirname(REFERENCE_PATH), target!)), target).toBe(true);
    }
    // GitHub's anchors of the headings: lower case, spaces as hyphens.
    const anchors = new Set(
      [...text.matchAll(/^## (.+)$/gm)].map(([, heading]) => heading!.toLowerCase().replace(/ /g, '-')),
    );
    for (const [, anchor] of text.matchAll(/\]\(#([^)]+)\)/g)) expect(anchors, anchor).toContain(anchor);
  });
});
