/**
 * The rules of action types and authorization details (src/domain/authorization-details.ts,
 * docs/design.md §21) as plain functions: what a website may register, what a request's
 * `authorization_details` may say, and how a detail reads in words. The doors that call them are
 * tested over HTTP beside this suite; the protocol's use is test/action-requests/.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ActionType,
  type AuthorizationDetail,
  checkAuthorizationDetails,
  describeAuthorizationDetail,
  parseActionTypes,
  plainNumber,
} from '../../src/domain/authorization-details.ts';
import { InvalidAuthorizationDetails, InvalidClientMetadata } from '../../src/errors.ts';

const payment: ActionType = {
  type: 'payment',
  description: 'Pay {amount} {currency} to {payee} {memo}',
  fields: {
    amount: { type: 'number', required: true },
    currency: { type: 'string', required: true },
    payee: { type: 'string', required: true },
    memo: { type: 'string' },
  },
  amount_field: 'amount',
  currency_field: 'currency',
};
const removal: ActionType = {
  type: 'urn:acme:delete',
  description: 'Delete {count} backups (keep the latest: {keep_latest})',
  fields: { count: { type: 'integer', required: true }, keep_latest: { type: 'boolean' } },
};

/** The words of an InvalidClientMetadata thrown by parseActionTypes. */
function refusal(input: unknown): string {
  try {
    parseActionTypes(input);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidClientMetadata);
    return (error as InvalidClientMetadata).description;
  }
  throw new Error('accepted');
}

const type = (overrides: Record<string, unknown>) => ({
  type: 'payment',
  description: 'Pay {amount}',
  fields: { amount: { type: 'number', required: true } },
  ...overrides,
});

describe('action types as a website registers them', () => {
  it('reads back what it was given, as an array or its JSON text; none is []', () => {
    expect(parseActionTypes([payment, removal])).toEqual([payment, removal]);
    expect(parseActionTypes(JSON.stringify([payment]))).toEqual([payment]);
    expect(parseActionTypes([])).toEqual([]);
    expect(parseActionTypes(null)).toEqual([]);
    // Whitespace around the template goes; `required: false` is the same as leaving it out.
    expect(
      parseActionTypes([
        type({ description: '  Pay {amount} ', fields: { amount: { type: 'number', required: false } } }),
      ]),
    ).toEqual([{ type: 'payment', description: 'Pay {amount}', fields: { amount: { type: 'number' } } }]);
  });

  it.each<[string, unknown, string]>([
    ['not JSON', '[{', 'action_types is not valid JSON'],
    ['not an array', { type: 'payment' }, 'action_types must be a JSON array of action types'],
    ['too many types', Array.from({ length: 21 }, (_, i) => type({ type: `t${i}` })), 'at most 20 action types'],
    ['a type twice', [type({}), type({})], 'action_types name "payment" more than once'],
    ['an entry not an object', ['payment'], 'action_types[0] must be an object'],
    ['an unknown member', [type({ label: 'x' })], 'action_types[0] has an unknown member "label"'],
    ['no name', [type({ type: '' })], 'action_types[0].type "" must be 1 to 64 characters'],
    ['a name with a space', [type({ type: 'pay ment' })], 'action_types[0].type "pay ment" must be 1 to 64'],
    ['a name of 65 characters', [type({ type: 'x'.repeat(65) })], 'must be 1 to 64 characters'],
    ['a name not text', [type({ type: 7 })], 'action_types[0].type must be 1 to 64'],
    ['no fields', [type({ fields: undefined })], 'action_types[0].fields must be an object'],
    [
      'too many fields',
      [type({ fields: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`f${i}`, { type: 'string' }])) })],
      'action_types[0].fields may name at most 16 fields',
    ],
    ['a field named type', [type({ fields: { type: { type: 'string' } } })], 'may not name "type"'],
    [
      'a field in capitals',
      [type({ fields: { Amount: { type: 'number' } } })],
      'the name "Amount" must start with a-z',
    ],
    [
      'a field named __proto__',
      [JSON.parse('{"type":"x","description":"X","fields":{"__proto__":{"type":"string"}}}')],
      'the name "__proto__"',
    ],
    ['a field of 33 characters', [type({ fields: { ['a'.repeat(33)]: { type: 'string' } } })], 'up to 32 characters'],
    [
      'a field of an unknown type',
      [type({ fields: { amount: { type: 'money' } } })],
      'action_types[0].fields.amount.type must be one of string, number, integer, boolean',
    ],
    [
      'a field declared as text',
      [type({ fields: { amount: 'number' } })],
      'action_types[0].fields.amount must be an object',
    ],
    [
      'required not a boolean',
      [type({ fields: { amount: { type: 'number', required: 'yes' } } })],
      '.required must be true or false',
    ],
    [
      'an unknown member of a field',
      [type({ fields: { amount: { type: 'number', min: 0 } } })],
      'fields.amount has an unknown member "min"',
    ],
    ['no description', [type({ description: undefined })], 'action_types[0].description must be text'],
    ['an empty description', [type({ description: '  ' })], 'action_types[0].description must be 1 to 200 characters'],
    [
      'a description of 201 characters',
      [type({ description: `Pay {amount}${'x'.repeat(189)}` })],
      '1 to 200 characters',
    ],
    ['a description with a newline', [type({ description: 'Pay\n{amount}' })], 'control or text-direction characters'],
    ['a description with a bidi override', [type({ description: 'Pay \u202e{amount}' })], 'control or text-direction'],
    [
      'a description naming an undeclared field',
      [type({ description: 'Pay {amount} to {payee}' })],
      'names {payee}, which is not one of its fields',
    ],
    ['a lone brace', [type({ description: 'Pay {amount} }' })], 'has a lone "}"'],
    ['nested braces', [type({ description: 'Pay {{amount}}' })], 'has a lone "{"'],
    [
      'a field the description leaves out',
      [type({ fields: { amount: { type: 'number' }, iban: { type: 'string' } } })],
      'action_types[0].description must name every field, so the owner reads all they approve: {iban} is missing',
    ],
    [
      'an amount field that is text',
      [type({ fields: { amount: { type: 'string' } }, amount_field: 'amount' })],
      'amount_field must name one of its number fields',
    ],
    [
      'an amount field not declared',
      [type({ amount_field: 'total' })],
      'amount_field must name one of its number fields',
    ],
    [
      'a currency field that is a number',
      [
        type({
          fields: { amount: { type: 'number' }, cur: { type: 'number' } },
          description: 'Pay {amount} {cur}',
          amount_field: 'amount',
          currency_field: 'cur',
        }),
      ],
      'currency_field must name one of its string fields',
    ],
    [
      'a currency field without an amount',
      [
        type({
          fields: { amount: { type: 'number' }, cur: { type: 'string' } },
          description: 'Pay {amount} {cur}',
          currency_field: 'cur',
        }),
      ],
      'currency_field is the currency of amount_field',
    ],
  ])('refuses %s, in words', (_case, input, words) => {
    expect(refusal(input)).toContain(words);
  });
});

/** The words of an InvalidAuthorizationDetails thrown by checkAuthorizationDetails. */
function detailRefusal(raw: unknown): string {
  try {
    checkAuthorizationDetails(raw, [payment, removal]);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidAuthorizationDetails);
    expect((error as InvalidAuthorizationDetails).error).toBe('invalid_authorization_details');
    expect((error as InvalidAuthorizationDetails).statusCode).toBe(400);
    return (error as InvalidAuthorizationDetails).description;
  }
  throw new Error('accepted');
}

const pay = { type: 'payment', amount: 20, currency: 'EUR', payee: 'Acme' };

describe("a request's authorization details", () => {
  it('are accepted as JSON text or an array, and come back as fresh copies', () => {
    const given = [pay, { type: 'urn:acme:delete', count: 3 }];
    const checked = checkAuthorizationDetails(JSON.stringify(given), [payment, removal]);
    expect(checked).toEqual(given);
    expect(checkAuthorizationDetails(given, [payment, removal])[0]).not.toBe(given[0]);
  });

  it.each<[string, unknown, string]>([
    ['not JSON', '[{"type"', 'authorization_details is not valid JSON'],
    ['an object, not an array', JSON.stringify(pay), 'must be a JSON array of 1 to 10 objects'],
    ['an empty array', '[]', 'must be a JSON array of 1 to 10 objects'],
    ['11 entries', JSON.stringify(Array.from({ length: 11 }, () => pay)), 'of 1 to 10 objects'],
    ['an entry not an object', '["payment"]', 'authorization_details[0] must be an object with a type'],
    ['no type', '[{"amount":1}]', "authorization_details[0].type must be the name of one of the client's action types"],
    [
      'an unregistered type',
      '[{"type":"transfer"}]',
      'authorization_details[0].type "transfer" is not one of the client\'s action types',
    ],
    [
      'an unknown field',
      JSON.stringify([{ ...pay, iban: 'DE00' }]),
      'authorization_details[0] has "iban", which is not a field of "payment"',
    ],
    ["RFC 9396's locations, undeclared", JSON.stringify([{ ...pay, locations: ['https://x'] }]), 'has "locations"'],
    ['a field named like a prototype member', JSON.stringify([{ ...pay, constructor: 'x' }]), 'has "constructor"'],
    [
      '__proto__',
      '[{"type":"payment","amount":1,"currency":"EUR","payee":"A","__proto__":{"x":1}}]',
      'has "__proto__"',
    ],
    [
      'a required field missing',
      JSON.stringify([{ type: 'payment', amount: 20, currency: 'EUR' }]),
      'authorization_details[0] needs payee',
    ],
    [
      'a number as text',
      JSON.stringify([{ ...pay, amount: '20' }]),
      'authorization_details[0].amount must be a number',
    ],
    ['a number as null', JSON.stringify([{ ...pay, amount: null }]), '.amount must be a number'],
    [
      'an integer with a fraction',
      JSON.stringify([{ type: 'urn:acme:delete', count: 1.5 }]),
      '.count must be a whole number',
    ],
    ['an integer past 2^53', '[{"type":"urn:acme:delete","count":9007199254740993}]', '.count must be a whole number'],
    [
      'a boolean as text',
      JSON.stringify([{ type: 'urn:acme:delete', count: 1, keep_latest: 'no' }]),
      '.keep_latest must be true or false',
    ],
    ['a string as a number', JSON.stringify([{ ...pay, payee: 7 }]), '.payee must be a string'],
    ['a string as an object', JSON.stringify([{ ...pay, payee: { name: 'x' } }]), '.payee must be a string'],
    [
      'a string of 201 characters',
      JSON.stringify([{ ...pay, payee: 'x'.repeat(201) }]),
      '.payee must be at most 200 characters',
    ],
    ['a string with a newline', JSON.stringify([{ ...pay, payee: 'Acme\nPay 1 EUR' }]), 'control or text-direction'],
    ['a string with a bidi override', JSON.stringify([{ ...pay, payee: '\u202eemcA' }]), 'control or text-direction'],
    ['the second entry wrong', JSON.stringify([pay, { type: 'payment' }]), 'authorization_details[1] needs amount'],
  ])('refuses %s, in words', (_case, raw, words) => {
    expect(detailRefusal(raw)).toContain(words);
  });

  it('refuses an infinite number given as an array (JSON cannot carry one)', () => {
    expect(detailRefusal([{ ...pay, amount: Number.POSITIVE_INFINITY }])).toContain('.amount must be a number');
    expect(detailRefusal([{ ...pay, amount: Number.NaN }])).toContain('.amount must be a number');
  });

  it('no input ends in anything but checked details or InvalidAuthorizationDetails (property)', () => {
    const value = fc.oneof(
      fc.constant(20),
      fc.double(),
      fc.integer(),
      fc.string({ maxLength: 220 }),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 2 }),
      fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
    );
    const key = fc.oneof(
      fc.constantFrom(
        'type',
        'amount',
        'currency',
        'payee',
        'memo',
        'count',
        'keep_latest',
        '__proto__',
        'constructor',
        'toString',
        'locations',
      ),
      fc.string({ maxLength: 8 }),
    );
    const entry = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.dictionary(key, fc.oneof(value, fc.constantFrom('payment', 'urn:acme:delete')), { maxKeys: 7 }),
      },
      { weight: 1, arbitrary: value },
    );
    const raw = fc.oneof(
      fc.array(entry, { maxLength: 12 }).map((list) => JSON.stringify(list)),
      fc.array(entry, { maxLength: 12 }),
      fc.string({ maxLength: 60 }),
      value,
    );
    fc.assert(
      fc.property(raw, (input) => {
        let checked: AuthorizationDetail[];
        try {
          checked = checkAuthorizationDetails(input, [payment, removal]);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidAuthorizationDetails);
          return;
        }
        // What passes is what the types allow: a registered type, declared fields of their type, required ones there.
        expect(checked.length).toBeGreaterThanOrEqual(1);
        expect(checked.length).toBeLessThanOrEqual(10);
        for (const detail of checked) {
          const registered = [payment, removal].find((each) => each.type === detail.type)!;
          expect(registered).toBeDefined();
          for (const [field, declared] of Object.entries(registered.fields))
            if (declared.required) expect(Object.hasOwn(detail, field)).toBe(true);
          for (const [field, fieldValue] of Object.entries(detail)) {
            if (field === 'type') continue;
            const declared = registered.fields[field]!;
            expect(Object.hasOwn(registered.fields, field)).toBe(true);
            const kind = declared.type === 'integer' ? 'number' : declared.type;
            expect(typeof fieldValue).toBe(kind);
            if (typeof fieldValue === 'string') expect(fieldValue.length).toBeLessThanOrEqual(200);
            if (typeof fieldValue === 'number') expect(Number.isFinite(fieldValue)).toBe(true);
          }
          expect(typeof describeAuthorizationDetail(detail, [payment, removal])).toBe('string');
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('a detail in words', () => {
  it.each<[string, AuthorizationDetail, string]>([
    ['every field', { ...pay, memo: 'invoice 7' }, 'Pay 20 EUR to Acme invoice 7'],
    ['a missing optional field reads as nothing, spaces collapsed', pay, 'Pay 20 EUR to Acme'],
    ['a fraction as written', { ...pay, amount: 19.99 }, 'Pay 19.99 EUR to Acme'],
    ['a large number without an exponent', { ...pay, amount: 1e21 }, 'Pay 1000000000000000000000 EUR to Acme'],
    ['a small number without an exponent', { ...pay, amount: 1.5e-7 }, 'Pay 0.00000015 EUR to Acme'],
    [
      'booleans as yes or no',
      { type: 'urn:acme:delete', count: 3, keep_latest: true },
      'Delete 3 backups (keep the latest: yes)',
    ],
    ['a value that reads like a placeholder, once', { ...pay, payee: '{amount}' }, 'Pay 20 EUR to {amount}'],
    ['markup, as text (the caller escapes)', { ...pay, payee: '<b>Acme</b>' }, 'Pay 20 EUR to <b>Acme</b>'],
    [
      'a type no longer registered: its name and fields',
      { type: 'transfer', amount: 5, to: 'Bob' },
      'transfer (amount: 5, to: Bob)',
    ],
  ])('%s', (_case, detail, words) => {
    expect(describeAuthorizationDetail(detail, [payment, removal])).toBe(words);
  });

  it('writes numbers as JavaScript reads them back, without an exponent (property)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        const words = plainNumber(value);
        expect(words).not.toMatch(/e/i);
        expect(Number(words)).toBe(value === 0 ? 0 : value);
      }),
      { numRuns: 1000 },
    );
  });
});
