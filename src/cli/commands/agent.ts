/** `agentauth agent …`: agent credentials. */
import { readFileSync } from 'node:fs';
import { type Command, InvalidArgumentError } from 'commander';
import { WEBSITES_WORDS, actionRuleWords } from '../../management/policies.ts';
import { collect, print } from '../common.ts';
import type { AgentPolicyView, AgentView } from '../management.ts';
import { withManagement } from '../target.ts';
import { deleteCommand, revokeGrantsCommand, rotateSecretCommand } from './grants.ts';

/** An agent as the command prints it, on the database or a remote server alike. */
const agentJson = (a: AgentView) => ({
  agent_id: a.id,
  name: a.name,
  owner_email: a.owner.email,
  owner_name: a.owner.name,
  email_verified: a.owner.email_verified,
  status: a.status,
  created_at: a.created_at,
  last_used_at: a.last_used_at,
  credential: a.credential,
  key_thumbprint: a.key_thumbprint,
});

/**
 * The public JWK in `path` (as `agentauth-agent keygen` prints it), as an object; whether it is
 * an acceptable key is the domain's rule, checked on the database or by the server.
 */
function publicKeyFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the public key file ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not JSON: give the public JWK that agentauth-agent keygen printed`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${path} does not hold a JWK (a JSON object with kty, crv and x)`);
  return value as Record<string, unknown>;
}

/** What the commands print of a key-bound agent's key. */
const keyText = (a: AgentView) =>
  `key_thumbprint: ${a.key_thumbprint}\n(the agent proves itself with its private key; it has no secret)`;

export function agentCommand(program: Command): void {
  const agent = program.command('agent').description('manage agent credentials');
  agent
    .command('create')
    .description('register an agent; prints its agent_secret once')
    .option(
      '--owner-email <email>',
      "the owner's email (the email claim): the agent of the console account with this email if there is one (with its name and verification), else of someone without an account; required on the database; on a remote server, without it the agent belongs to the API key's account",
    )
    .option('--owner-name <name>', "the owner's name (the name claim)")
    .option('--name <label>', 'a label for the agent')
    .option('--email-verified', "the owner's email address has been verified (email_verified claim)")
    .option(
      '--public-key <file>',
      'a key-bound agent: the file holds its public JWK (Ed25519 or P-256, as agentauth-agent keygen prints it); prints its thumbprint instead of a secret',
    )
    .option('--json', 'print JSON')
    .action(
      async (
        options: {
          ownerEmail?: string;
          ownerName?: string;
          name?: string;
          emailVerified?: boolean;
          publicKey?: string;
          json?: boolean;
        },
        command: Command,
      ) => {
        const owner =
          options.ownerEmail === undefined
            ? undefined
            : { email: options.ownerEmail, name: options.ownerName, email_verified: !!options.emailVerified };
        const publicKey = options.publicKey === undefined ? undefined : publicKeyFile(options.publicKey);
        const { agent: created, agent_secret: secret } = await withManagement(command, (management) =>
          management.createAgent({ name: options.name, owner, public_key: publicKey }),
        );
        if (secret === undefined) {
          print(!!options.json, agentJson(created), `agent_id:       ${created.id}\n${keyText(created)}`);
          return;
        }
        print(
          !!options.json,
          { ...agentJson(created), agent_secret: secret },
          `agent_id:     ${created.id}\nagent_secret: ${secret}\n(the secret is shown only now; give it to the agent, never to a browser)`,
        );
      },
    );
  agent
    .command('list')
    .description('list agents')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      const agents = await withManagement(command, (management) => management.listAgents());
      print(
        !!options.json,
        { agents: agents.map(agentJson) },
        agents.map((a) => `${a.id}  ${a.status.padEnd(8)}  ${a.name}  <${a.owner.email}>`).join('\n') || '(no agents)',
      );
    });
  for (const [name, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    agent
      .command(`${name} <agent_id>`)
      .description(`${name} an agent`)
      .option('--json', 'print JSON')
      .action(async (id: string, options: { json?: boolean }, command: Command) => {
        const changed = await withManagement(command, (management) => management.setAgentStatus(id, status));
        print(!!options.json, { agent_id: changed.id, status: changed.status }, `${changed.id} is ${changed.status}`);
      });
  }
  agent
    .command('policy <agent_id>')
    .description("show what the agent's owner allows it; the options change it (websites, scopes, expiry, rate)")
    .option(
      '--clients <rule>',
      'any (every website), listed (only --allow ones) or ask (ask the owner for a new one)',
      clientsRule,
    )
    .option('--allow <client_id>', 'add a website to its list (repeatable)', collect, [])
    .option('--disallow <client_id>', 'remove a website from its list (repeatable)', collect, [])
    .option('--scope-ceiling <scopes>', 'the most a sign-in may share, e.g. "openid profile"')
    .option('--no-scope-ceiling', 'no scope ceiling')
    .option(
      '--credentials-expire <time>',
      'refuse its sign-ins from then on: a date (2027-01-31, its start in UTC) or an ISO time',
      expiryTime,
    )
    .option('--no-credentials-expire', 'credentials that do not expire')
    .option('--max-sign-ins-per-hour <n>', 'refuse sign-ins past this many in the last hour', perHour)
    .option('--no-max-sign-ins-per-hour', 'no limit on sign-ins per hour')
    .option(
      '--action <client_id=answer>',
      "how the owner answers a website's action requests: always, always:50EUR (up to an amount), never or ask (repeatable)",
      collectActionRule,
      [],
    )
    .option('--json', 'print JSON')
    .addHelpText('after', POLICY_HELP)
    .action(async (id: string, options: PolicyOptions, command: Command) => {
      const policy = await withManagement(command, (management) =>
        management.changeAgentPolicy(id, (current) => changedPolicy(current, options) ?? null),
      );
      print(!!options.json, { agent_id: id, policy }, policyText(id, policy));
    });
  rotateSecretCommand(agent, 'agent', async (management, id, grace) => {
    const { agent_secret } = await management.rotateAgentSecret(id, grace);
    return agent_secret;
  });
  agent
    .command('rotate-key <agent_id>')
    .description(
      'bind the agent to a new public key: the old key (or its secret, for an agent that had one) stops working at once',
    )
    .requiredOption('--public-key <file>', 'the file holding the new public JWK (as agentauth-agent keygen prints it)')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { publicKey: string; json?: boolean }, command: Command) => {
      const publicKey = publicKeyFile(options.publicKey);
      const rotated = await withManagement(command, (management) => management.rotateAgentKey(id, publicKey));
      print(
        !!options.json,
        { agent_id: rotated.id, credential: rotated.credential, key_thumbprint: rotated.key_thumbprint },
        `agent_id:       ${rotated.id}\n${keyText(rotated)}\nthe previous key no longer works`,
      );
    });
  revokeGrantsCommand(agent, 'agent');
  deleteCommand(agent, 'agent');
}

type ActionRuleView = AgentPolicyView['actions'][number];

interface PolicyOptions {
  clients?: AgentPolicyView['clients'];
  allow: string[];
  disallow: string[];
  /** A string to set, false for --no-scope-ceiling, undefined to keep. */
  scopeCeiling?: string | false;
  credentialsExpire?: string | false;
  maxSignInsPerHour?: number | false;
  action: ActionRuleView[];
  json?: boolean;
}

const POLICY_HELP = `
Without options it shows the policy; each option changes one part, the rest stays. An agent
nobody restricted signs in to any website, with any scope, at any time (the default).
A refusal is answered to the agent as access_denied in plain words, and recorded in the
sign-in history; with --clients ask, a website not on the list is held for the owner's
approval in the console (approve once, always, or deny). --action sets how a website's
action requests are answered (ACTION_APPROVALS): always, up to an amount in a currency
(always:50EUR), never, or ask (the default: the owner decides each one in the console).

Examples:
  agentauth agent policy agt_… --clients listed --allow cli_notes --allow cli_mail
  agentauth agent policy agt_… --clients ask --scope-ceiling "openid profile"
  agentauth agent policy agt_… --credentials-expire 2027-01-31 --max-sign-ins-per-hour 20
  agentauth agent policy agt_… --clients any --no-scope-ceiling --no-credentials-expire
  agentauth agent policy agt_… --action cli_shop=always:50EUR --action cli_mail=never`;

function clientsRule(value: string): AgentPolicyView['clients'] {
  if (value !== 'any' && value !== 'listed' && value !== 'ask') throw new InvalidArgumentError('any, listed or ask');
  return value;
}

/** An RFC 3339 time from a date (its start, UTC) or an ISO time. */
function expiryTime(value: string): string {
  const text = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;
  const ms = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(ms)) throw new InvalidArgumentError('a date (2027-01-31) or an ISO time (2027-01-31T18:00:00Z)');
  return new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function perHour(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new InvalidArgumentError('a whole number of sign-ins, at least 1');
  return Number(value);
}

const ACTION_RULE = /^(always|never|ask)(?::(\d{1,13}(?:\.\d{1,6})?) ?([A-Za-z]{3}))?$/;

/** `cli_shop=always:50EUR` as a rule (the last `=`: a client id may be a URL), added to those before. */
function collectActionRule(value: string, rules: ActionRuleView[]): ActionRuleView[] {
  const at = value.lastIndexOf('=');
  const match = ACTION_RULE.exec(value.slice(at + 1));
  if (at < 1 || !match || (match[2] !== undefined && match[1] !== 'always'))
    throw new InvalidArgumentError(
      'CLIENT_ID=always, CLIENT_ID=always:50EUR (up to an amount), CLIENT_ID=never or CLIENT_ID=ask',
    );
  const [, answer, amount, currency] = match;
  return [
    ...rules,
    {
      client_id: value.slice(0, at),
      answer: answer as ActionRuleView['answer'],
      ...(amount === undefined ? {} : { up_to: { amount: Number(amount), currency: currency!.toUpperCase() } }),
    },
  ];
}

/** The policy the options make of the current one, or undefined when no option changes it. */
function changedPolicy(current: AgentPolicyView, options: PolicyOptions): AgentPolicyView | undefined {
  const rule = options.clients;
  const touched =
    rule !== undefined ||
    options.allow.length > 0 ||
    options.disallow.length > 0 ||
    options.scopeCeiling !== undefined ||
    options.credentialsExpire !== undefined ||
    options.maxSignInsPerHour !== undefined ||
    options.action.length > 0;
  if (!touched) return undefined;
  const given = new Set(options.action.map((rule) => rule.client_id));
  const listed = [...current.allowed_clients, ...options.allow].filter((id) => !options.disallow.includes(id));
  return {
    clients: rule ?? current.clients,
    allowed_clients: [...new Set(listed)],
    scope_ceiling:
      options.scopeCeiling === undefined
        ? current.scope_ceiling
        : options.scopeCeiling === false
          ? null
          : // Checked by the server's rule, which names any value that is not a scope.
            (options.scopeCeiling.split(/[\s,]+/).filter(Boolean) as AgentPolicyView['scope_ceiling']),
    credentials_expire_at:
      options.credentialsExpire === undefined ? current.credentials_expire_at : options.credentialsExpire || null,
    max_sign_ins_per_hour:
      options.maxSignInsPerHour === undefined ? current.max_sign_ins_per_hour : options.maxSignInsPerHour || null,
    // A website's rule given here replaces its rule; the others stay (ask needs no rule: the server drops it).
    actions: [...current.actions.filter((rule) => !given.has(rule.client_id)), ...options.action],
  };
}

function policyText(id: string, policy: AgentPolicyView): string {
  return [
    `${id}`,
    `  Websites:           ${WEBSITES_WORDS[policy.clients]} (${policy.clients})`,
    `  Listed websites:    ${policy.allowed_clients.join(', ') || 'none'}`,
    `  Scope ceiling:      ${policy.scope_ceiling === null ? 'none' : policy.scope_ceiling.join(' ') || '(no scope at all)'}`,
    `  Credentials expire: ${policy.credentials_expire_at ?? 'never'}`,
    `  Sign-ins per hour:  ${policy.max_sign_ins_per_hour ?? 'no limit'}`,
    `  Actions:            ${policy.actions.length === 0 ? 'ask the owner for every website' : policy.actions.map((rule) => `${rule.client_id}: ${actionRuleWords(rule)}`).join(', ')}`,
  ].join('\n');
}
