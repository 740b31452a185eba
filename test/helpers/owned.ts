/**
 * Agents and websites made for a console account, as the console makes them (the operations of
 * src/management/ with the account as the actor): set-up for suites that start from owned records.
 */
import { clientInput } from '../../src/console/clients.ts';
import type { Context } from '../../src/context.ts';
import type { AgentKey } from '../../src/domain/agent-keys.ts';
import { consoleActor } from '../../src/management/actor.ts';
import { createAgent } from '../../src/management/agents.ts';
import { createClient } from '../../src/management/clients.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import type { AgentRecord } from '../../src/store/agents.ts';
import type { ClientRecord } from '../../src/store/clients.ts';

type Deps = Pick<Context, 'store' | 'secrets' | 'clock' | 'config' | 'webhooks'>;

/** An agent of `account` with a secret. */
export async function createOwnedAgent(
  ctx: Deps,
  account: AccountRecord,
  name: string | undefined,
): Promise<{ agent: AgentRecord; secret: string }> {
  const { agent, secret } = await createAgent(ctx, consoleActor(account, null), { name });
  return { agent, secret: secret! };
}

/** A key-bound agent of `account`. */
export async function createOwnedKeyBoundAgent(
  ctx: Deps,
  account: AccountRecord,
  name: string | undefined,
  key: AgentKey,
): Promise<AgentRecord> {
  return (await createAgent(ctx, consoleActor(account, null), { name, key })).agent;
}

/** A website of `account`, from the console's form fields (redirect URIs one per line). */
export function createOwnedClient(
  ctx: Deps,
  account: AccountRecord,
  form: { name?: string; redirect_uris?: string; approval?: string; client_type?: string },
): Promise<{ client: ClientRecord; secret: string | null }> {
  return createClient(
    ctx,
    consoleActor(account, null),
    clientInput(form, { publicClients: ctx.config.publicClients, privateKeyJwt: ctx.config.privateKeyJwt }),
  );
}
