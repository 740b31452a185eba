/**
 * `agentauth-agent actions`: what websites the agent signed in to asked its owner to approve
 * (OpenID CIBA with RFC 9396 authorization details), and, with --wait, the owner's decision. The
 * agent tells its user "Waiting for your owner to approve: …" and then the outcome. Credentials
 * from the environment, as for sign-in.
 */
import { type Command, type CommanderError, InvalidArgumentError } from 'commander';
import { type AgentAction, AgentAuth, AgentAuthError, quoteUntrusted } from '../index.ts';
import { keyOptions } from './keys.ts';
import { EXIT, errorBody, exitCodeOf, UsageError, withoutSecret } from './sign-in.ts';

/** How each status begins its sentence. */
const LEADS: Record<AgentAction['status'], string> = {
  pending: 'Waiting for your owner to approve',
  approved: 'Your owner approved',
  denied: 'Your owner denied',
  expired: 'Expired before your owner decided',
};

/**
 * An action in a sentence for a person or a model, the website's words quoted as its own (they
 * are data, never instructions): `Waiting for your owner to approve: "Pay 20 EUR to Acme" ("Acme Notes")`.
 *
 * @example
 * actionSentence(action); // 'Your owner approved: "Pay 20 EUR to Acme" ("Acme Notes")'
 */
export function actionSentence(action: Pick<AgentAction, 'status' | 'answered_by' | 'words' | 'client_name'>): string {
  const lead =
    action.answered_by === 'policy' && action.status === 'approved'
      ? "Your owner's policy approved"
      : action.answered_by === 'policy' && action.status === 'denied'
        ? "Your owner's policy refused"
        : LEADS[action.status];
  return `${lead}: ${quoteUntrusted(action.words.join('; '), 300)} (${quoteUntrusted(action.client_name)})`;
}

interface ActionsFlags {
  wait?: string | true;
  timeout?: number;
  json?: boolean;
  keyFile?: string;
  allowInsecureHttp?: boolean;
}

const io = {
  out: (text: string) => process.stdout.write(withoutSecret(`${text}\n`)),
  err: (text: string) => process.stderr.write(withoutSecret(`${text}\n`)),
};

function wholeSeconds(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('a whole number of seconds >= 1');
  return Number(value);
}

async function runActions(name: string, flags: ActionsFlags): Promise<number> {
  try {
    const agent = new AgentAuth({ allowInsecureHttp: flags.allowInsecureHttp === true, ...keyOptions(flags.keyFile) });
    const actions = await agent.listActions();
    if (flags.wait === undefined) {
      io.out(
        flags.json
          ? JSON.stringify({ actions })
          : actions.map((action) => `${action.id}  ${actionSentence(action)}`).join('\n') ||
              'No action waits for your owner or was decided in the last ten minutes.',
      );
      return EXIT.ok;
    }
    // --wait alone: the newest action still waiting.
    const id = flags.wait === true ? actions.find((action) => action.status === 'pending')?.id : flags.wait;
    if (id === undefined) throw new UsageError('no action waits for your owner: nothing to wait for');
    const decided = await agent.waitForAction(id, {
      ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout * 1000 }),
      onWaiting: (action) => io.err(`${actionSentence(action)} (Ctrl-C stops waiting; your owner can still decide.)`),
    });
    io.out(flags.json ? JSON.stringify(decided) : actionSentence(decided));
    // A denial or an expiry is the owner's answer, not a failure of the command: exit 8 says it.
    return decided.status === 'approved' ? EXIT.ok : EXIT.notAllowed;
  } catch (error) {
    const exitCode = exitCodeOf(error);
    const { error: code, error_description: description } = errorBody(error);
    if (flags.json) io.out(JSON.stringify({ error: code, error_description: description, exit_code: exitCode }));
    else io.err(`${name}: ${code}: ${description}`);
    if (exitCode === EXIT.other && !(error instanceof AgentAuthError)) io.err(String((error as Error)?.stack ?? ''));
    return exitCode;
  }
}

/** Adds `actions` to the program. */
export function actionsCommand(program: Command, name = 'agentauth-agent'): void {
  program
    .command('actions')
    .description(
      "what websites asked this agent's owner to approve (pay, delete, send…), and with --wait the owner's decision",
    )
    .option('--wait [action_id]', 'wait for the decision on this action (act_…), or on the newest one still waiting')
    .option('--timeout <seconds>', 'how long --wait waits (default: until the action expires)', wholeSeconds)
    .option('--json', 'print one JSON object')
    .option('--key-file <file>', "a key-bound agent's private key, instead of AGENTAUTH_AGENT_SECRET")
    .option('--allow-insecure-http', 'accept a plain http AGENTAUTH_ISSUER on another host than this machine')
    .addHelpText(
      'after',
      `
Lists the actions waiting for the agent's owner and those decided in the last ten minutes, one a
line: the action id and a sentence ("Waiting for your owner to approve: "Pay 20 EUR to Acme"
("Acme Notes")"); quoted words are the website's own. The server must have ACTION_APPROVALS on.

With --wait it says on stderr what it waits for, then prints the outcome: exit 0 approved,
8 denied or expired (the owner's answer), 7 timed out; other codes as for sign-in.
Environment: AGENTAUTH_ISSUER, AGENTAUTH_AGENT_ID, AGENTAUTH_AGENT_SECRET (or
AGENTAUTH_AGENT_KEY_FILE), as for ${name} sign-in.`,
    )
    .exitOverride((error: CommanderError) => {
      process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
    })
    .action(async (flags: ActionsFlags) => {
      process.exitCode = await runActions(name, flags);
    });
}
