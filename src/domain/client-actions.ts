/**
 * What a website registers to ask agents' owners to approve actions (docs/design.md §21): its
 * action types (./authorization-details.ts checks them), how it learns an owner's answer (OpenID
 * CIBA's token delivery mode, poll or ping) and, for ping, its notification endpoint. The same
 * rules for every door: the console, the management API, the CLI, dynamic registration.
 */
import { type BlockList, isIP, isIPv4 } from 'node:net';
import type { Context } from '../context.ts';
import { InvalidClientMetadata, InvalidField } from '../errors.ts';
import { isSpecialUseAddress, trustedNetworks } from '../outbound/special-use.ts';
import type { BackchannelTokenDeliveryMode, ClientRecord } from '../store/clients.ts';
import { parseActionTypes } from './authorization-details.ts';
import { specialUseWords } from './webhooks/delivery-failures.ts';
import { checkReceiverAddress } from './webhooks/endpoints.ts';

/** The longest notification endpoint (its column). */
export const MAX_NOTIFICATION_ENDPOINT_LENGTH = 2000;
/** The token delivery modes a website may register (CIBA Core 1.0 §5; push is not supported). */
export const TOKEN_DELIVERY_MODES: readonly BackchannelTokenDeliveryMode[] = ['poll', 'ping'];

/** The setting every field here needs. */
const SETTING = 'ACTION_APPROVALS';

/**
 * What a door gives of a website's actions; what is left out stays as it is (null clears).
 */
export interface ClientActionsInput {
  /** Its action types, as parseActionTypes reads them (an array or its JSON text); [] or null for none. */
  actionTypes?: unknown;
  /** poll or ping; null: none (a website with action types then polls). */
  tokenDelivery?: string | null;
  /** A ping website's https endpoint; null for none. */
  notificationEndpoint?: string | null;
}

/** The columns of a website's actions. */
export type ClientActionColumns = Pick<
  ClientRecord,
  'action_types' | 'backchannel_token_delivery_mode' | 'backchannel_client_notification_endpoint'
>;

/** A website that asks nothing. */
export const NO_ACTIONS: ClientActionColumns = {
  action_types: [],
  backchannel_token_delivery_mode: null,
  backchannel_client_notification_endpoint: null,
};

/**
 * Whether `input` gives the website anything to do with actions (a type, a mode or an endpoint):
 * what needs ACTION_APPROVALS.
 */
function asksForActions(input: ClientActionsInput): boolean {
  return givesTypes(input) || Boolean(input.tokenDelivery) || Boolean(input.notificationEndpoint);
}

/** Whether `input` gives action types (not none: absent, null, '' or []). */
function givesTypes({ actionTypes: types }: ClientActionsInput): boolean {
  return !(types === undefined || types === null || types === '' || (Array.isArray(types) && types.length === 0));
}

/**
 * A website's action columns after `input`, checked: action types by parseActionTypes' rules;
 * the token delivery mode poll or ping; a notification endpoint exactly when the mode is ping,
 * an https URL without credentials or fragment whose host is not a special-use address (unless
 * WEBHOOK_ALLOWED_ADDRESSES lists it: pings go through the webhooks' outbound guard); none of
 * it for a public client (it cannot authenticate at /bc-authorize), and none of it while
 * ACTION_APPROVALS is off. Throws InvalidField naming the field (`action_types`,
 * `backchannel_token_delivery_mode`, `backchannel_client_notification_endpoint`) in words every
 * door shows as they are.
 *
 * @example
 * await clientActionColumns(ctx, { actionTypes: [payment], tokenDelivery: 'ping', notificationEndpoint: 'https://shop.example/ciba' }, client);
 * // { action_types: [payment], backchannel_token_delivery_mode: 'ping', backchannel_client_notification_endpoint: 'https://shop.example/ciba' }
 */
export async function clientActionColumns(
  deps: Pick<Context, 'config' | 'webhooks'>,
  input: ClientActionsInput,
  current: ClientActionColumns & Pick<ClientRecord, 'token_endpoint_auth_method'>,
): Promise<ClientActionColumns> {
  if (input.actionTypes === undefined && input.tokenDelivery === undefined && input.notificationEndpoint === undefined)
    return pick(current);
  if (!deps.config.actionApprovals && asksForActions(input)) {
    // Off, a website may keep what it registered while it was on (a form sends it back) or drop
    // it, never add or change it.
    const off = new InvalidField(
      fieldOf(input),
      `This server does not let websites ask owners to approve actions (${SETTING} is off): action types, a token delivery mode and a notification endpoint need ${SETTING}=on.`,
    );
    const after = await checkedColumns(deps, input, current).catch(() => {
      throw off;
    });
    if (!keptOrDropped(after, current)) throw off;
    return after;
  }
  return checkedColumns(deps, input, current);
}

/** Whether each of `after`'s columns is `current`'s or empty. */
function keptOrDropped(after: ClientActionColumns, current: ClientActionColumns): boolean {
  return (
    (after.action_types.length === 0 || JSON.stringify(after.action_types) === JSON.stringify(current.action_types)) &&
    (after.backchannel_token_delivery_mode === null ||
      after.backchannel_token_delivery_mode === current.backchannel_token_delivery_mode) &&
    (after.backchannel_client_notification_endpoint === null ||
      after.backchannel_client_notification_endpoint === current.backchannel_client_notification_endpoint)
  );
}

/** The columns after `input`, by the rules (clientActionColumns without the setting). */
async function checkedColumns(
  deps: Pick<Context, 'config' | 'webhooks'>,
  input: ClientActionsInput,
  current: ClientActionColumns & Pick<ClientRecord, 'token_endpoint_auth_method'>,
): Promise<ClientActionColumns> {
  const types = input.actionTypes === undefined ? current.action_types : actionTypesField(input.actionTypes);
  const mode =
    input.tokenDelivery === undefined
      ? current.backchannel_token_delivery_mode
      : tokenDeliveryField(input.tokenDelivery);
  const given = input.notificationEndpoint === undefined ? undefined : input.notificationEndpoint?.trim() || null;
  // A website that stops being pinged loses its endpoint with the mode.
  const endpoint =
    given !== undefined ? given : mode === 'ping' ? current.backchannel_client_notification_endpoint : null;
  if (current.token_endpoint_auth_method === 'none' && (types.length > 0 || mode !== null))
    throw new InvalidField(
      types.length > 0 ? 'action_types' : 'backchannel_token_delivery_mode',
      'A public client cannot ask owners to approve actions: it has no secret or keys to authenticate with.',
    );
  if (mode === 'ping' && endpoint === null)
    throw new InvalidField(
      'backchannel_client_notification_endpoint',
      'Token delivery ping needs a notification endpoint: the https URL told when the owner has answered.',
    );
  if (mode !== 'ping' && endpoint !== null)
    throw new InvalidField(
      'backchannel_client_notification_endpoint',
      'A notification endpoint is only for token delivery ping; a website that polls asks the token endpoint.',
    );
  if (endpoint !== null && endpoint !== current.backchannel_client_notification_endpoint)
    await checkNotificationEndpoint(deps, endpoint);
  return {
    action_types: types,
    backchannel_token_delivery_mode: mode,
    backchannel_client_notification_endpoint: endpoint,
  };
}

const pick = (current: ClientActionColumns): ClientActionColumns => ({
  action_types: current.action_types,
  backchannel_token_delivery_mode: current.backchannel_token_delivery_mode,
  backchannel_client_notification_endpoint: current.backchannel_client_notification_endpoint,
});

/** The field a refusal of `input` as a whole is shown beside: the first it gives. */
function fieldOf(input: ClientActionsInput): string {
  if (givesTypes(input)) return 'action_types';
  if (input.tokenDelivery) return 'backchannel_token_delivery_mode';
  return 'backchannel_client_notification_endpoint';
}

/** Action types by parseActionTypes, its refusal beside the field. */
function actionTypesField(value: unknown) {
  try {
    return parseActionTypes(value === '' ? null : value);
  } catch (error) {
    if (error instanceof InvalidClientMetadata) throw new InvalidField('action_types', `${error.description}.`);
    throw error;
  }
}

/** poll, ping, or none. */
function tokenDeliveryField(value: string | null): BackchannelTokenDeliveryMode | null {
  if (value === null || value === '') return null;
  if ((TOKEN_DELIVERY_MODES as readonly string[]).includes(value)) return value as BackchannelTokenDeliveryMode;
  throw new InvalidField('backchannel_token_delivery_mode', 'Token delivery is poll or ping.');
}

/**
 * A ping website's notification endpoint, checked at save as a webhook's URL is (the ping goes
 * through the same outbound guard, which checks every address again when it sends): https, no
 * user name, password or fragment, at most 2,000 characters, and no special-use address (an IP
 * in the URL, or what its name resolves to now) unless WEBHOOK_ALLOWED_ADDRESSES lists it.
 *
 * @example
 * await checkNotificationEndpoint(ctx, 'https://127.0.0.1/ciba'); // InvalidField: 127.0.0.1 is a loopback, private or other special-use address …
 */
export async function checkNotificationEndpoint(
  deps: Pick<Context, 'config' | 'webhooks'>,
  endpoint: string,
): Promise<void> {
  const field = 'backchannel_client_notification_endpoint';
  const refuse = (words: string) => new InvalidField(field, `The notification endpoint ${words}.`);
  if (endpoint.length > MAX_NOTIFICATION_ENDPOINT_LENGTH)
    throw refuse(`is longer than ${MAX_NOTIFICATION_ENDPOINT_LENGTH} characters`);
  const url = URL.parse(endpoint);
  if (url === null) throw refuse('is not a valid URL');
  if (url.protocol !== 'https:') throw refuse('must use https');
  if (url.username !== '' || url.password !== '') throw refuse('may not carry a user name or password');
  if (endpoint.includes('#')) throw refuse('may not have a fragment (#…)');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const trusted: BlockList = trustedNetworks(deps.config.webhookAllowedAddresses);
  if (isIP(host) !== 0 && isSpecialUseAddress(host) && !trusted.check(host, isIPv4(host) ? 'ipv4' : 'ipv6'))
    throw new InvalidField(field, specialUseWords(host, host));
  try {
    await checkReceiverAddress(deps, url.href);
  } catch (error) {
    if (error instanceof InvalidField) throw new InvalidField(field, error.description);
    throw error;
  }
}
