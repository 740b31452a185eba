/**
 * The webhook events agentauth announces (docs/reference/webhooks.md), each with what it means.
 * An endpoint subscribes to some of them or to all ('*').
 */

export const EVENT_TYPES = {
  'agent.sign_in.succeeded': 'An agent authenticated an authorization request (the website may now get its code).',
  'agent.sign_in.failed':
    'An agent could not authenticate a request: wrong credentials, a disabled agent, a refusal, an expired or used request.',
  'agent.approval.requested':
    "An agent's owner is asked to approve a sign-in to a website it has not used before, or an action a website asks about (kind action); the request waits.",
  'agent.approval.decided':
    'The owner approved (once or always) or denied a sign-in their agent asked for, or approved or denied an action.',
  'authorization_request.cancelled': 'The person at the authorization page cancelled the request.',
  'authorization_request.expired': 'A request expired while it waited for an agent or for the browser to finish.',
  'agent.created': 'An agent was created.',
  'agent.updated': 'An agent was renamed or otherwise changed.',
  'agent.disabled': 'An agent was disabled: it can no longer sign in.',
  'agent.enabled': 'A disabled agent was enabled again.',
  'agent.deleted': 'An agent was deleted, with its grants revoked.',
  'agent.secret_rotated': "An agent's secret was replaced (the old one may work for a grace period).",
  'agent.key_rotated':
    "A key-bound agent's public key was replaced, or an agent with a secret was bound to a key (the old key or secret stops at once).",
  'agent.grants_revoked': "An agent's grants were revoked: its tokens stop working.",
  'client.created': 'A website (client) was registered.',
  'client.updated': "A website's name, redirect URIs, resources, scopes, approval or keys changed.",
  'client.disabled': 'A website was disabled: it can no longer start sign-ins or use tokens.',
  'client.enabled': 'A disabled website was enabled again.',
  'client.deleted': 'A website was deleted, with its grants revoked.',
  'client.secret_rotated': "A website's client secret was replaced.",
  'client.grants_revoked': "A website's grants were revoked: its tokens stop working.",
  'account.created': 'A console account was created (or invited and set up).',
  'account.updated': "An account's name or role changed.",
  'account.disabled': 'An account was disabled: it can no longer sign in to the console.',
  'account.enabled': 'A disabled account was enabled again.',
  'account.sign_in_method_changed': 'A passkey was added or removed, or a password set or removed, on an account.',
  'webhook.disabled': 'A webhook endpoint was disabled because its deliveries kept failing.',
  'webhook.test':
    'An admin sent a test event (Send test event): sent only to that endpoint, whatever it subscribes to.',
} as const;

export type EventType = keyof typeof EVENT_TYPES;

/** Subscribes an endpoint to every event, present and future. */
export const ALL_EVENTS = '*';

/**
 * The catalogue as a list, in the order above.
 *
 * @example
 * eventTypeList()[0]; // { type: 'agent.sign_in.succeeded', description: 'An agent authenticated …' }
 */
export function eventTypeList(): Array<{ type: EventType; description: string }> {
  return (Object.keys(EVENT_TYPES) as EventType[]).map((type) => ({ type, description: EVENT_TYPES[type] }));
}

/**
 * Whether `name` is an event an endpoint may subscribe to (a catalogued type, or '*').
 *
 * @example
 * isEventType('agent.created'); // true
 */
export const isEventType = (name: string): name is EventType | typeof ALL_EVENTS =>
  name === ALL_EVENTS || Object.hasOwn(EVENT_TYPES, name);
