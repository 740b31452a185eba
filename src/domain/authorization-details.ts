/**
 * Action types and authorization details (RFC 9396; docs/design.md §21): what a website registers
 * as the actions it may ask an agent's owner about (each type names its fields and how it reads
 * in words, "Pay {amount} {currency} to {payee}"), the check of a request's
 * `authorization_details` against them, and one detail in words. The words are plain text:
 * every HTML caller escapes them.
 */
import type { Context } from '../context.ts';
import { InvalidAuthorizationDetails, InvalidClientMetadata } from '../errors.ts';
import type { ActionField, ActionType } from '../store/clients.ts';
import { UNDISPLAYABLE_IN_NAME } from './rules/client.ts';

export type { ActionField, ActionType };

/** One entry of a request's authorization_details, checked. */
export interface AuthorizationDetail {
  type: string;
  [field: string]: unknown;
}

/** The most action types one client registers. */
export const MAX_ACTION_TYPES = 20;
/** The longest action type name. */
export const MAX_ACTION_TYPE_NAME_LENGTH = 64;
/** The most fields of one action type. */
export const MAX_ACTION_FIELDS = 16;
/** The longest description template. */
export const MAX_ACTION_DESCRIPTION_LENGTH = 200;
/** The most entries of one request's authorization_details. */
export const MAX_AUTHORIZATION_DETAILS = 10;
/** The longest string value of a detail's field. */
export const MAX_DETAIL_STRING_LENGTH = 200;
/** The field types a type may declare. */
export const ACTION_FIELD_TYPES: readonly ActionField['type'][] = ['string', 'number', 'integer', 'boolean'];

const TYPE_NAME = /^[A-Za-z0-9_.:/-]{1,64}$/;
const FIELD_NAME = /^[a-z][a-z0-9_]{0,31}$/;
const TYPE_KEYS = ['type', 'description', 'fields', 'amount_field', 'currency_field'];
const FIELD_KEYS = ['type', 'required'];
/** A `{` or `}`, or a placeholder `{name}`: in a template every brace is part of a placeholder. */
const BRACES = /\{([^{}]*)\}|[{}]/g;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value quoted for an error message, short. */
const quoted = (value: string) => JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);

/** The JSON text or value a door gave: its parsed value, or `fail` with the words of JSON.parse's refusal. */
function parsedJson(raw: unknown, fail: (message: string) => Error): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    throw fail('is not valid JSON');
  }
}

/**
 * A client's action types as registered (a JSON array, or its text), checked: a type name of
 * 1–64 characters of [A-Za-z0-9_.:/-], each once, at most 20 types; fields named
 * [a-z][a-z0-9_]{0,31} (not `type`, which names the type), at most 16, each of type string,
 * number, integer or boolean; a description of 1–200 characters, no control or text-direction
 * characters, whose braces name only declared fields, and every one of them; `amount_field` a number (or integer)
 * field and `currency_field` a string field given with it. Throws InvalidClientMetadata saying
 * which entry and why, in words every door shows as they are.
 *
 * @example
 * parseActionTypes('[{"type":"payment","description":"Pay {amount} {currency} to {payee}","fields":{"amount":{"type":"number","required":true},"currency":{"type":"string","required":true},"payee":{"type":"string","required":true}},"amount_field":"amount","currency_field":"currency"}]');
 * // [{ type: 'payment', description: 'Pay {amount} {currency} to {payee}', fields: {…}, amount_field: 'amount', currency_field: 'currency' }]
 * parseActionTypes([{ type: 'pay ment', description: 'Pay', fields: {} }]);
 * // InvalidClientMetadata: action_types[0].type "pay ment" must be 1 to 64 characters of A-Z a-z 0-9 _ . : / -
 */
export function parseActionTypes(input: unknown): ActionType[] {
  const fail = (message: string) => new InvalidClientMetadata(`action_types ${message}`);
  const list = parsedJson(input, fail);
  if (list === null || list === undefined) return [];
  if (!Array.isArray(list)) throw fail('must be a JSON array of action types');
  if (list.length > MAX_ACTION_TYPES) throw fail(`may name at most ${MAX_ACTION_TYPES} action types`);
  const seen = new Set<string>();
  return list.map((entry, index) => {
    const type = parseActionType(entry, `action_types[${index}]`);
    if (seen.has(type.type)) throw fail(`name ${quoted(type.type)} more than once`);
    seen.add(type.type);
    return type;
  });
}

/** One action type, checked; `at` names it in the error (action_types[2]). */
function parseActionType(entry: unknown, at: string): ActionType {
  const fail = (message: string) => new InvalidClientMetadata(`${at}${message}`);
  if (!isObject(entry)) throw fail(' must be an object with type, description and fields');
  const unknown = Object.keys(entry).find((key) => !TYPE_KEYS.includes(key));
  if (unknown !== undefined)
    throw fail(` has an unknown member ${quoted(unknown)}; its members are ${TYPE_KEYS.join(', ')}`);
  const { type, description, fields, amount_field: amountField, currency_field: currencyField } = entry;
  if (typeof type !== 'string' || !TYPE_NAME.test(type))
    throw fail(
      `.type ${typeof type === 'string' ? `${quoted(type)} ` : ''}must be 1 to ${MAX_ACTION_TYPE_NAME_LENGTH} characters of A-Z a-z 0-9 _ . : / -`,
    );
  if (!isObject(fields)) throw fail('.fields must be an object naming each field and its type');
  const names = Object.keys(fields);
  if (names.length > MAX_ACTION_FIELDS) throw fail(`.fields may name at most ${MAX_ACTION_FIELDS} fields`);
  const parsedFields: Record<string, ActionField> = {};
  for (const name of names) {
    if (name === 'type') throw fail('.fields may not name "type": it names the action type');
    if (!FIELD_NAME.test(name))
      throw fail(`.fields: the name ${quoted(name)} must start with a-z and be up to 32 characters of a-z, 0-9 and _`);
    parsedFields[name] = parseField(fields[name], `${at}.fields.${name}`);
  }
  if (typeof description !== 'string') throw fail('.description must be text: how the action reads in words');
  const words = description.trim();
  if (!words || words.length > MAX_ACTION_DESCRIPTION_LENGTH)
    throw fail(`.description must be 1 to ${MAX_ACTION_DESCRIPTION_LENGTH} characters`);
  if (UNDISPLAYABLE_IN_NAME.test(words)) throw fail('.description contains control or text-direction characters');
  const named = new Set<string>();
  for (const [brace, name] of words.matchAll(BRACES)) {
    if (name === undefined) throw fail(`.description has a lone ${quoted(brace)}: braces only name fields, {field}`);
    if (!Object.hasOwn(parsedFields, name)) throw fail(`.description names {${name}}, which is not one of its fields`);
    named.add(name);
  }
  // The owner approves what they read: a field the words leave out would be approved unseen.
  const unread = names.find((name) => !named.has(name));
  if (unread !== undefined)
    throw fail(`.description must name every field, so the owner reads all they approve: {${unread}} is missing`);
  const parsed: ActionType = { type, description: words, fields: parsedFields };
  if (amountField !== undefined) {
    const field = typeof amountField === 'string' && Object.hasOwn(parsedFields, amountField) ? amountField : null;
    const kind = field === null ? undefined : parsedFields[field]!.type;
    if (kind !== 'number' && kind !== 'integer') throw fail('.amount_field must name one of its number fields');
    parsed.amount_field = field!;
  }
  if (currencyField !== undefined) {
    if (parsed.amount_field === undefined) throw fail('.currency_field is the currency of amount_field: name both');
    const field =
      typeof currencyField === 'string' && Object.hasOwn(parsedFields, currencyField) ? currencyField : null;
    if (field === null || parsedFields[field]!.type !== 'string')
      throw fail('.currency_field must name one of its string fields');
    parsed.currency_field = field;
  }
  return parsed;
}

/** One field's declaration, checked. */
function parseField(declaration: unknown, at: string): ActionField {
  const fail = (message: string) => new InvalidClientMetadata(`${at}${message}`);
  if (!isObject(declaration)) throw fail(' must be an object: {"type": "string", "required": true}');
  const unknown = Object.keys(declaration).find((key) => !FIELD_KEYS.includes(key));
  if (unknown !== undefined)
    throw fail(` has an unknown member ${quoted(unknown)}; its members are ${FIELD_KEYS.join(', ')}`);
  const { type, required } = declaration;
  if (typeof type !== 'string' || !(ACTION_FIELD_TYPES as readonly string[]).includes(type))
    throw fail(`.type must be one of ${ACTION_FIELD_TYPES.join(', ')}`);
  if (required !== undefined && typeof required !== 'boolean') throw fail('.required must be true or false');
  return required ? { type: type as ActionField['type'], required: true } : { type: type as ActionField['type'] };
}

/**
 * A request's `authorization_details` (its JSON text, as a form posts it, or the parsed array)
 * checked against the client's action types: 1–10 objects, each of a registered `type`, with
 * only that type's fields (an unknown one is refused, as RFC 9396 §5 allows), every required
 * one, each value of its declared type (strings up to 200 characters without control or
 * text-direction characters, finite numbers, integers that are safe). Returns fresh copies;
 * throws InvalidAuthorizationDetails saying which entry and why.
 *
 * @example
 * checkAuthorizationDetails('[{"type":"payment","amount":20,"currency":"EUR","payee":"Acme"}]', [payment]);
 * // [{ type: 'payment', amount: 20, currency: 'EUR', payee: 'Acme' }]
 * checkAuthorizationDetails('[{"type":"payment","amount":"20"}]', [payment]);
 * // InvalidAuthorizationDetails: authorization_details[0].amount must be a number
 */
export function checkAuthorizationDetails(raw: unknown, types: ActionType[]): AuthorizationDetail[] {
  const fail = (message: string) => new InvalidAuthorizationDetails(`authorization_details${message}`);
  const list = parsedJson(raw, (message) => fail(` ${message}`));
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_AUTHORIZATION_DETAILS)
    throw fail(` must be a JSON array of 1 to ${MAX_AUTHORIZATION_DETAILS} objects`);
  return list.map((entry, index) => {
    const at = `[${index}]`;
    if (!isObject(entry)) throw fail(`${at} must be an object with a type`);
    const name = entry.type;
    if (typeof name !== 'string') throw fail(`${at}.type must be the name of one of the client's action types`);
    const type = types.find((each) => each.type === name);
    if (!type) throw fail(`${at}.type ${quoted(name)} is not one of the client's action types`);
    const detail: AuthorizationDetail = { type: name };
    for (const [field, value] of Object.entries(entry)) {
      if (field === 'type') continue;
      if (!Object.hasOwn(type.fields, field))
        throw fail(`${at} has ${quoted(field)}, which is not a field of ${quoted(name)}`);
      const problem = valueProblem(value, type.fields[field]!);
      if (problem) throw fail(`${at}.${field} ${problem}`);
      // defineProperty: a field could be named like an Object.prototype member.
      Object.defineProperty(detail, field, { value, enumerable: true, writable: true, configurable: true });
    }
    for (const [field, declared] of Object.entries(type.fields))
      if (declared.required && !Object.hasOwn(detail, field)) throw fail(`${at} needs ${field}`);
    return detail;
  });
}

/** Why a value is not of its field's type, or null. */
function valueProblem(value: unknown, field: ActionField): string | null {
  switch (field.type) {
    case 'string':
      if (typeof value !== 'string') return 'must be a string';
      if (value.length > MAX_DETAIL_STRING_LENGTH) return `must be at most ${MAX_DETAIL_STRING_LENGTH} characters`;
      if (UNDISPLAYABLE_IN_NAME.test(value)) return 'contains control or text-direction characters';
      return null;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? null : 'must be a number';
    case 'integer':
      return Number.isSafeInteger(value) ? null : 'must be a whole number';
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
  }
}

/**
 * One detail in words, plain text (the caller escapes): its type's description with each
 * {field} replaced by its value (numbers as written, without an exponent; booleans yes or no),
 * a missing optional field reading as nothing. A detail whose type the client no longer
 * registers reads as its type and its fields.
 *
 * @example
 * describeAuthorizationDetail({ type: 'payment', amount: 20, currency: 'EUR', payee: 'Acme' }, [payment]); // 'Pay 20 EUR to Acme'
 */
export function describeAuthorizationDetail(detail: AuthorizationDetail, types: ActionType[]): string {
  const type = types.find((each) => each.type === detail.type);
  if (!type) {
    const fields = Object.entries(detail)
      .filter(([field]) => field !== 'type')
      .map(([field, value]) => `${field}: ${inWords(value)}`);
    return fields.length === 0 ? detail.type : `${detail.type} (${fields.join(', ')})`;
  }
  // One pass: a value that itself reads "{payee}" is not replaced again.
  return type.description
    .replace(BRACES, (_brace, field: string | undefined) =>
      field !== undefined && Object.hasOwn(detail, field) ? inWords(detail[field]) : '',
    )
    .replace(/\s+/g, ' ')
    .trim();
}

/** A field's value in words. */
function inWords(value: unknown): string {
  if (typeof value === 'number') return plainNumber(value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? '';
}

/**
 * A number as written, without an exponent: 20, 20.5, 0.0000001, 1000000000000000000000.
 *
 * @example
 * plainNumber(1e-7); // '0.0000001'
 */
export function plainNumber(value: number): string {
  const text = String(value);
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign, head, tail = '', exponent] = match;
  const digits = `${head}${tail}`;
  const point = 1 + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** How long discovery reuses the names it read (a type registered shows within this many seconds on every node). */
const NAMES_TTL_SECONDS = 10;
const namesCache = new WeakMap<object, { until: number; names: Promise<string[]> }>();

/**
 * Forgets the names actionTypeNames read from `store`, after this node changed a client: here
 * the change shows at once, on other nodes within the 10 seconds.
 *
 * @example
 * forgetActionTypeNames(ctx.store);
 */
export function forgetActionTypeNames(store: object): void {
  namesCache.delete(store);
}

/**
 * The sorted, distinct names of the action types active clients registered: discovery's
 * `authorization_details_types_supported`. Read at most once every 10 seconds per store (a
 * type registered shows within that on every node); none, without reading, while
 * ACTION_APPROVALS is off.
 *
 * @example
 * await actionTypeNames(ctx); // ['payment', 'urn:acme:delete']
 */
export async function actionTypeNames(ctx: Pick<Context, 'store' | 'config' | 'clock'>): Promise<string[]> {
  if (!ctx.config.actionApprovals) return [];
  const now = ctx.clock();
  const cached = namesCache.get(ctx.store);
  if (cached && cached.until > now) return cached.names;
  const names = ctx.store.clients
    .listActionTypeNames()
    .then((all) => [...new Set(all)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  namesCache.set(ctx.store, { until: now + NAMES_TTL_SECONDS, names });
  names.catch(() => namesCache.delete(ctx.store));
  return names;
}
