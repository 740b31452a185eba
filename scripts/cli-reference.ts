/**
 * npm run docs:cli: writes docs/reference/cli.md, the reference of the agentauth command, from
 * the program itself (buildCli in src/cli/main.ts): every command and subcommand there is, with
 * its usage, arguments, options (their defaults and choices as --help states them) and the text
 * its --help adds. The file is never edited by hand; test/cli-reference.test.ts fails while it
 * differs from the program.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Argument, Command, Help } from 'commander';
import { buildAgentCli } from '@agentauth/agent/cli';
import { buildCli } from '../src/cli/main.ts';

export const REFERENCE_PATH = fileURLToPath(new URL('../docs/reference/cli.md', import.meta.url));

/** Plain text in Markdown: nothing in it read as emphasis, HTML, a link or a table's edge. */
const prose = (text: string) => text.replace(/[\\*<[\]|]|(?<!\w)_|_(?!\w)/g, (c) => `\\${c}`).replace(/\s*\n\s*/g, ' ');

/** A term (flags, an argument) as code in a table cell. */
const code = (text: string) => `\`${text.replace(/\|/g, '\\|')}\``;

/** `agentauth client create`: the command's name after its parents'. */
function fullName(command: Command): string {
  return command.parent ? `${fullName(command.parent)} ${command.name()}` : command.name();
}

/** An argument as the usage line writes it: `<request>`, `[name]`, `<uri...>`. */
function usageTerm(argument: Argument): string {
  const name = `${argument.name()}${argument.variadic ? '...' : ''}`;
  return argument.required ? `<${name}>` : `[${name}]`;
}

/** GitHub's anchor of a heading made of plain words and hyphens. */
const anchor = (heading: string) => heading.toLowerCase().replace(/\s+/g, '-');

/** The commands under `command` that --help lists, without commander's implicit `help`. */
function subcommands(command: Command, help: Help): Command[] {
  return help.visibleCommands(command).filter((sub) => command.commands.includes(sub));
}

/**
 * What the command's --help prints before and after what commander makes of its arguments and
 * options (addHelpText): captured from outputHelp, around helpInformation. The program's
 * additions for every command ('beforeAll', 'afterAll') would come with each; there are none.
 */
function addedHelp(command: Command): { before: string; after: string } {
  let output = '';
  const write = (text: string) => void (output += text);
  command.configureOutput({
    writeOut: write,
    writeErr: write,
    getOutHelpWidth: () => 100,
    getOutHasColors: () => false,
  });
  command.outputHelp();
  const own = command.helpInformation();
  const at = output.indexOf(own);
  return { before: output.slice(0, at).trim(), after: output.slice(at + own.length).trim() };
}

/** A table of terms and what they mean; nothing when there are none. */
function table(heading: string, rows: Array<[string, string]>): string[] {
  if (rows.length === 0) return [];
  return [
    `| ${heading} | Meaning |`,
    '| --- | --- |',
    ...rows.map(([term, meaning]) => `| ${term} | ${meaning} |`),
    '',
  ];
}

/** Text kept as --help prints it (lists, columns, examples). */
const preformatted = (text: string) => (text ? ['```text', text, '```', ''] : []);

/** One command's section, then those of its subcommands. */
function section(command: Command): string[] {
  const help = command.createHelp();
  const name = fullName(command);
  const subs = subcommands(command, help);
  const { before, after } = addedHelp(command);
  const options = help
    .visibleOptions(command)
    .filter((option) => option.long !== '--help')
    .map((option): [string, string] => [
      code(help.optionTerm(option)),
      prose(`${help.optionDescription(option)}${option.mandatory ? ' (required)' : ''}`),
    ]);
  const lines = [
    `## ${name}`,
    '',
    `${prose(help.commandDescription(command))}`,
    '',
    ...preformatted(before),
    '```sh',
    help.commandUsage(command),
    '```',
    '',
    ...table(
      'Argument',
      help
        .visibleArguments(command)
        .map((argument) => [code(usageTerm(argument)), prose(help.argumentDescription(argument))]),
    ),
    ...table('Option', options),
    ...table(
      'Command',
      subs.map((sub) => [`[${sub.name()}](#${anchor(fullName(sub))})`, prose(help.subcommandDescription(sub))]),
    ),
    ...preformatted(after),
  ];
  return [...lines, ...subs.flatMap(section)];
}

/** The text of docs/reference/cli.md. */
export function cliReference(): string {
  const program = buildCli();
  return [
    '<!-- Generated from the commands in src/cli (buildCli) and packages/agent/src/cli (buildAgentCli) by `npm run docs:cli`: change the commands, not this file. -->',
    '',
    '# The agentauth command',
    '',
    'From a checkout, `./bin/agentauth …` (after `npm ci`); once installed, `agentauth …`. The',
    'server and the management commands read the same environment: every variable of the',
    '[configuration](configuration.md). Every command takes `-h`, `--help`, and',
    '`agentauth help COMMAND` prints the same. Unless its text below says otherwise, a command',
    'exits 0 when it did its work, and 1 with one line on standard error (`agentauth: …`) when',
    'it did not; `--json` prints one JSON object on standard output.',
    '',
    'Given `--url` and `--api-key` (or `AGENTAUTH_URL` and `AGENTAUTH_API_KEY`), the management',
    'commands act on that server through its management API instead of the database, and print',
    'the same (see [Managing a remote server from a script](../guides/operator.md#managing-a-remote-server-from-a-script)).',
    '`serve`, `migrate`, `client reseal` and `api-key create` need the database and refuse then.',
    '',
    ...section(program),
    '',
    '# The agentauth-agent command',
    '',
    "The agent package's command (`@agentauth/agent`; see the [agent guide](../guides/agent.md)): the",
    'same `sign-in`, `mcp` and `keygen` as above, on a machine with only the package installed. It reads',
    "the `AGENTAUTH_*` variables of the environment, never the server's configuration.",
    '',
    ...section(buildAgentCli()),
  ]
    .join('\n')
    .replace(/\n+$/, '\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(REFERENCE_PATH, cliReference());
  process.stdout.write(`wrote ${REFERENCE_PATH}\n`);
}
