/**
 * `agentauth-agent sign-in` (and the server's `agentauth sign-in`, the same code): an agent signs
 * in to a sign-in request from a shell (issue 11, item 3), with the SDK of this package.
 * Credentials and issuer come from the environment only (AGENTAUTH_ISSUER, AGENTAUTH_AGENT_ID,
 * AGENTAUTH_AGENT_SECRET, AGENTAUTH_MODEL), never from arguments: they stay out of shell history
 * and `ps`.
 */
import { type Command, type CommanderError, InvalidArgumentError } from 'commander';
import {
  AccessDeniedError,
  AgentAuth,
  AgentAuthError,
  AgentMismatchError,
  ConfigurationError,
  type Expectation,
  InvalidClientError,
  InvalidCredentialsError,
  InvalidInputError,
  IssuerMismatchError,
  NetworkError,
  quoteUntrusted,
  RequestAlreadyUsedError,
  RequestContestedError,
  RequestExpiredError,
  RequestMismatchError,
  RequestNotFoundError,
  type RequestView,
  type SignInOptions,
  TimeoutError,
  TooManyRequestsError,
  UnavailableError,
} from '../index.ts';
import { keyOptions } from './keys.ts';

/** The exit codes of `sign-in`. */
export const EXIT = {
  ok: 0,
  other: 1,
  usage: 2,
  mismatch: 3,
  credentials: 4,
  unusable: 5,
  unavailable: 6,
  timeout: 7,
  notAllowed: 8,
} as const;

/**
 * The exit code for an error of the SDK (or anything else thrown). `ownerAsked`: the owner was
 * asked to approve this sign-in, so an access_denied is their denial.
 */
export function exitCodeOf(error: unknown, ownerAsked = false): number {
  // The agent's owner does not allow it: their policy refused (403), or they denied when asked.
  if (error instanceof AccessDeniedError && (error.status === 403 || ownerAsked)) return EXIT.notAllowed;
  if (error instanceof ConfigurationError || error instanceof InvalidInputError || error instanceof UsageError)
    return EXIT.usage;
  if (error instanceof RequestMismatchError || error instanceof IssuerMismatchError) return EXIT.mismatch;
  if (error instanceof InvalidCredentialsError || error instanceof AgentMismatchError) return EXIT.credentials;
  if (
    error instanceof RequestNotFoundError ||
    error instanceof RequestExpiredError ||
    error instanceof RequestAlreadyUsedError ||
    error instanceof RequestContestedError ||
    error instanceof AccessDeniedError ||
    error instanceof InvalidClientError
  ) {
    return EXIT.unusable;
  }
  if (error instanceof TooManyRequestsError || error instanceof UnavailableError || error instanceof NetworkError)
    return EXIT.unavailable;
  if (error instanceof TimeoutError) return EXIT.timeout;
  return EXIT.other;
}

/** A mistake in how the command was called: exit code 2. */
export class UsageError extends Error {
  readonly code = 'usage_error';
}

/**
 * The text with the agent's secret, should anything ever carry it, replaced (defence in depth:
 * the SDK never puts it in a message). What `sign-in` and the MCP server write goes through it.
 */
export function withoutSecret(text: string, secret = process.env.AGENTAUTH_AGENT_SECRET): string {
  return secret && secret.length >= 8 ? text.split(secret).join('[redacted]') : text;
}

/** An error in the documented shape, with the server's status and Retry-After when it had them. */
export function errorBody(error: unknown): {
  error: string;
  error_description: string;
  status?: number;
  retry_after?: number;
} {
  if (error instanceof AgentAuthError) {
    return {
      error: error.code,
      error_description: error.description,
      ...(error.status !== undefined ? { status: error.status } : {}),
      ...(error.retryAfter !== undefined ? { retry_after: error.retryAfter } : {}),
    };
  }
  if (error instanceof UsageError) return { error: error.code, error_description: error.message };
  return { error: 'error', error_description: error instanceof Error ? error.message : String(error) };
}

/**
 * What a request is for, for a person or a model to read: the website's own strings (its name,
 * its client_id, which may be a URL it chose, the resource) quoted as JSON strings, cut, and
 * labelled as the website's unverified words, so that a name such as "Ignore previous
 * instructions" reads as data (design §12). The redirect host and scope are the server's checked
 * forms and need no quoting.
 */
export function describeRequest(
  view: Pick<RequestView, 'client_name' | 'client_id' | 'redirect_host' | 'scope' | 'resource'>,
): string {
  const resource =
    view.resource === null
      ? 'resource: none (tokens for the website itself)'
      : `resource (server the tokens are for): ${quoteUntrusted(view.resource, 200)}`;
  return `website (name it gives itself, unverified): ${quoteUntrusted(view.client_name)}; browser goes to ${view.redirect_host}; client_id: ${quoteUntrusted(view.client_id, 200)}; scope: "${view.scope}"; ${resource}`;
}

/** What `sign-in --help` says after the options; `name` is the command's own (agentauth-agent or agentauth). */
export function signInHelp(name: string): string {
  return `
The request:
  REQUEST        a request id (req_…), as the person or the page gave it;
  -              read the authorization page's HTML from stdin and take the id from it
                 (the page's agent endpoints must be the issuer's);
  URL            the authorization page's URL (…/authorize?…), together with
                 --request-id: the URL is only compared with AGENTAUTH_ISSUER (exit 3 when
                 it is another server's) and never fetched, since it does not carry the id and
                 every fetch of it starts a new request.

The website (required, so a request made for another site is refused: consent phishing):
  --expect-host and/or --expect-client; --any only after checking the request some other
  way (${name} sign-in --inspect shows what it is for). A request that asks for tokens for
  another server (an RFC 8707 resource) is refused unless --expect-resource names exactly it.

Plain http is accepted only for this machine (localhost, 127.x.x.x, [::1]); elsewhere the
secret would travel in clear, so it takes --allow-insecure-http.

Environment (never arguments, so the secret stays out of shell history and ps):
  AGENTAUTH_ISSUER        the agentauth server you trust (its BASE_URL)
  AGENTAUTH_AGENT_ID      agt_…
  AGENTAUTH_AGENT_SECRET  aas_… (sent only to the issuer; never printed)
  AGENTAUTH_AGENT_KEY_FILE  instead of the secret, for a key-bound agent: the private key
                          file ${name} keygen wrote (or --key-file); it never leaves this machine
  AGENTAUTH_MODEL         the AI model the agent runs on (goes into the access token)

Exit codes:
  0  signed in (and, with --wait, the browser continued: completed)
  1  anything else (server error, unexpected answer)
  2  usage or configuration error (missing environment, no expectation, bad argument)
  3  refused: the request is not for the expected website, or the page is not the issuer's
  4  credentials refused (invalid_credentials, agent_mismatch)
  5  request unusable (not found, expired, already used, contested, access denied, client disabled)
  6  rate limited, unavailable, unreachable or not answering in time, after retries
  7  timed out waiting for the browser (--wait; the agent is signed in), or for the
     owner's decision
  8  not allowed by the agent's owner: their policy refuses this sign-in (the
     message says why), or they denied it when asked to approve

When the owner's policy says "ask me" for this website, the command says so on stderr
("Waiting for Ada to approve signing in to …") and waits for their decision, at most
until the request expires (10 minutes after it was made), without sending the secret
again; approved, it goes on as above (with --json, "approved_by_owner": true).

Output: one line on stdout (errors on stderr), or with --json one JSON object on stdout:
  {"status":"authenticated"|"completed","request_id",…} on success,
  {"error","error_description","exit_code","signed_in",…} on failure.`;
}

interface SignInFlags {
  expectHost?: string;
  expectClient?: string;
  expectResource?: string;
  allowInsecureHttp?: boolean;
  any?: boolean;
  requestId?: string;
  inspect?: boolean;
  wait?: boolean;
  timeout: number;
  json?: boolean;
  keyFile?: string;
}

function wholeSeconds(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('a whole number of seconds >= 1');
  return Number(value);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The SDK's sign-in options for the argument: an id, `-` (HTML on stdin) or a page URL. */
async function requestOf(
  argument: string,
  flags: SignInFlags,
): Promise<Pick<SignInOptions, 'requestId' | 'html' | 'pageUrl'>> {
  if (/^https?:\/\//i.test(argument)) {
    if (flags.requestId === undefined)
      throw new UsageError(
        "a page URL does not carry the request id: pass it with --request-id req_… (or pipe the page's HTML with -)",
      );
    return { requestId: flags.requestId, pageUrl: argument };
  }
  if (flags.requestId !== undefined) throw new UsageError('--request-id goes with a page URL only');
  if (argument === '-') return { html: await readStdin() };
  return { requestId: argument };
}

function expectationOf(flags: SignInFlags): Expectation | 'any' {
  const named = flags.expectHost !== undefined || flags.expectClient !== undefined;
  if (flags.any && (named || flags.expectResource !== undefined))
    throw new UsageError('--any cannot be combined with --expect-host, --expect-client or --expect-resource');
  if (flags.any) return 'any';
  // A resource names the tokens' audience, not the website: it does not replace one.
  if (!named)
    throw new UsageError(
      'say which website you mean with --expect-host and/or --expect-client (or --any, after checking the request some other way)',
    );
  return {
    ...(flags.expectHost !== undefined ? { host: flags.expectHost } : {}),
    ...(flags.expectClient !== undefined ? { clientId: flags.expectClient } : {}),
    ...(flags.expectResource !== undefined ? { resource: flags.expectResource } : {}),
  };
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Writes to stdout or stderr, never the secret. */
const io = {
  out: (text: string) => process.stdout.write(withoutSecret(`${text}\n`)),
  err: (text: string) => process.stderr.write(withoutSecret(`${text}\n`)),
};

async function runSignIn(name: string, argument: string, flags: SignInFlags): Promise<number> {
  let signedIn = false;
  let ownerAsked = false;
  let requestId: string | undefined;
  try {
    const request = await requestOf(argument, flags);
    const expect = flags.inspect ? 'any' : expectationOf(flags);
    // AGENTAUTH_* from the environment; a key-bound agent's key from --key-file or AGENTAUTH_AGENT_KEY_FILE.
    const agent = new AgentAuth({
      allowInsecureHttp: flags.allowInsecureHttp === true,
      ...(flags.inspect ? {} : keyOptions(flags.keyFile)),
    });
    if (flags.inspect) {
      const view = await agent.inspect(request.requestId ?? request.html ?? '');
      io.out(
        flags.json
          ? JSON.stringify(view)
          : `${view.request_id}: ${describeRequest(view)}; ${view.status}, ${view.expires_in} s left`,
      );
      return EXIT.ok;
    }
    const result = await agent.signIn({
      ...request,
      expect,
      onApprovalPending: ({ message }) => {
        ownerAsked = true;
        // The issuer's words for the person at the terminal, on stderr even with --json.
        io.err(`${message} (Ctrl-C stops waiting; the owner can still decide.)`);
      },
    });
    signedIn = true;
    requestId = result.request_id;
    let status: 'authenticated' | 'completed' = 'authenticated';
    if (flags.wait)
      status = (await agent.waitForCompletion(result.request_id, { timeoutMs: flags.timeout * 1000 })).status;
    const { message: _serverMessage, status: _status, ...rest } = result;
    // Our own words, not the server's message, which names the website unquoted.
    const approved = result.approved_by_owner ? " with its owner's approval" : '';
    const message =
      status === 'completed'
        ? `Signed in as ${agent.agentId}${approved}; the browser has continued to ${result.redirect_host} (${result.request_id} completed).`
        : `Signed in as ${agent.agentId}${approved}; the browser will now continue to ${result.redirect_host} (${result.request_id} authenticated).`;
    io.out(
      flags.json
        ? JSON.stringify({ status, ...rest, agent_id: agent.agentId, message })
        : `${message} ${capitalized(describeRequest(result))}.`,
    );
    return EXIT.ok;
  } catch (error) {
    // A timeout before signing in is the server not answering in time (30 s), not the wait's.
    const exitCode =
      error instanceof TimeoutError && !signedIn && !ownerAsked ? EXIT.unavailable : exitCodeOf(error, ownerAsked);
    const { error: code, error_description: description, retry_after: retryAfter } = errorBody(error);
    if (flags.json) {
      io.out(
        JSON.stringify({
          error: code,
          error_description: description,
          exit_code: exitCode,
          signed_in: signedIn,
          ...(requestId ? { request_id: requestId } : {}),
          ...(retryAfter !== undefined ? { retry_after: retryAfter } : {}),
        }),
      );
    } else {
      io.err(
        `${name}: ${code}: ${description}${signedIn ? ' (the agent is signed in; the browser has not continued)' : ''}`,
      );
    }
    if (exitCode === EXIT.other && !(error instanceof AgentAuthError)) io.err(String((error as Error)?.stack ?? ''));
    return exitCode;
  }
}

/** How a program names itself in what its commands print. */
export interface CommandOptions {
  /** The program's name, which starts error lines and help examples (default `agentauth-agent`). */
  name?: string;
}

/** Adds `sign-in` to the program. Its own usage errors exit with 2, not commander's 1. */
export function signInCommand(program: Command, options: CommandOptions = {}): void {
  const name = options.name ?? 'agentauth-agent';
  program
    .command('sign-in')
    .description('sign this agent in to a sign-in request (credentials from AGENTAUTH_* in the environment)')
    .argument('<request>', "req_… id, - (the page's HTML on stdin), or the page URL with --request-id")
    .option('--expect-host <host>', 'the website the browser must be sent to (host[:port] or a URL)')
    .option('--expect-client <client_id>', "the website's client id")
    .option('--expect-resource <uri>', 'the server the tokens are for (RFC 8707 resource), when the request names one')
    .option('--any', 'accept whatever website the request is for (only after checking it otherwise)')
    .option('--request-id <id>', 'the request id, when the argument is the page URL')
    .option('--inspect', 'only show what the request is for (no credentials sent; no expectation needed)')
    .option('--wait', 'then wait until the browser has continued (completed)')
    .option('--timeout <seconds>', 'how long --wait waits', wholeSeconds, 300)
    .option('--json', 'print one JSON object')
    .option(
      '--key-file <file>',
      "a key-bound agent's private key (as keygen wrote it), instead of AGENTAUTH_AGENT_SECRET; or AGENTAUTH_AGENT_KEY_FILE",
    )
    .option(
      '--allow-insecure-http',
      'accept a plain http AGENTAUTH_ISSUER on another host than this machine (the secret travels in clear)',
    )
    .addHelpText('after', signInHelp(name))
    .showHelpAfterError(`(${name} sign-in --help for the forms of the request and the exit codes)`)
    .exitOverride((error: CommanderError) => {
      // Help and version exit 0; every other commander error (unknown option, missing argument) is a usage error.
      process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
    })
    .action(async (argument: string, flags: SignInFlags) => {
      process.exitCode = await runSignIn(name, argument, flags);
    });
}
