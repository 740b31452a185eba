/**
 * The rules of each entity (src/domain/rules/) as plain functions: valid input gives no
 * problems; each broken input gives its field, rule and message (the entry points word their
 * errors from these: test/cli.test.ts, test/console, test/dynamic-registration.test.ts and
 * test/client-metadata-document.test.ts check that wording).
 */
import { describe, expect, it } from 'vitest';
import { agentNameProblems, EMAIL, MAX_AGENT_NAME_LENGTH, ownerEmailProblems } from '../src/domain/rules/agent.ts';
import {
  clientNameProblems,
  couldBeClientId,
  grantTypesProblems,
  MAX_CLIENT_ID_LENGTH,
  MAX_CLIENT_NAME_LENGTH,
  MAX_REDIRECT_URI_LENGTH,
  MAX_REDIRECT_URIS,
  MAX_RESOURCE_LENGTH,
  redirectUriProblem,
  redirectUrisProblems,
  resourceProblem,
  resourcesProblems,
  responseTypesProblems,
} from '../src/domain/rules/client.ts';
import { GRANT_TYPES, isGrantType } from '../src/domain/rules/grant-type-names.ts';

describe('client rules', () => {
  describe('clientNameProblems', () => {
    it('accepts a name up to the limit', () => {
      expect(clientNameProblems('Shop')).toEqual([]);
      expect(clientNameProblems('x'.repeat(MAX_CLIENT_NAME_LENGTH))).toEqual([]);
      expect(clientNameProblems('Shop', { chosenByClient: true, measure: 'code points' })).toEqual([]);
    });

    it('refuses an empty name', () => {
      expect(clientNameProblems('')).toEqual([{ field: 'client_name', rule: 'empty', message: 'is missing or empty' }]);
    });

    it('refuses a name longer than the limit, counted in code units unless told code points', () => {
      const tooLong = [{ field: 'client_name', rule: 'too_long', message: 'is longer than 200 characters' }];
      expect(clientNameProblems('x'.repeat(MAX_CLIENT_NAME_LENGTH + 1))).toEqual(tooLong);
      // 150 emoji: 300 UTF-16 code units, 150 code points.
      const emoji = '\u{1F600}'.repeat(150);
      expect(clientNameProblems(emoji)).toEqual(tooLong);
      expect(clientNameProblems(emoji, { measure: 'code points' })).toEqual([]);
      expect(clientNameProblems('\u{1F600}'.repeat(201), { measure: 'code points' })).toEqual(tooLong);
    });

    it('refuses undisplayable characters only in a name the client chose', () => {
      const undisplayable = {
        field: 'client_name',
        rule: 'undisplayable',
        message: 'contains control, text-direction or unpaired surrogate characters',
      };
      for (const name of ['Bell\u0007', 'Example \u202eppA', 'Lone \ud800', 'Mark\u200f']) {
        expect(clientNameProblems(name, { chosenByClient: true }), name).toEqual([undisplayable]);
        expect(clientNameProblems(name), name).toEqual([]);
      }
    });

    it('lists every problem, the length first', () => {
      expect(
        clientNameProblems(`${'x'.repeat(MAX_CLIENT_NAME_LENGTH)}\u0007`, { chosenByClient: true }).map((p) => p.rule),
      ).toEqual(['too_long', 'undisplayable']);
    });
  });

  describe('redirectUriProblem', () => {
    it('accepts https anywhere and http on loopback', () => {
      for (const uri of [
        'https://app.example/cb',
        'https://app.example/cb?x=1',
        'http://localhost/cb',
        'http://127.0.0.1:8080/cb',
        'http://[::1]/cb',
      ])
        expect(redirectUriProblem(uri), uri).toBeNull();
    });

    it.each([
      ['https://app.example/'.padEnd(MAX_REDIRECT_URI_LENGTH + 1, 'x'), 'is longer than 2000 characters'],
      ['/cb', 'is not an absolute URL'],
      ['https://app.example/ café', 'must consist of visible ASCII characters (percent-encode the rest)'],
      ['https://app.example/a\\b', 'must not contain a backslash'],
      ['https://app.example/cb#x', 'must not contain a fragment'],
      ['https://user:pw@app.example/cb', 'must not contain user information'],
      [
        'https://app.example/cb?state=1&code=2',
        'must not already carry code, state in its query (the server adds them to the redirect)',
      ],
      ['http://app.example/cb', 'must use https (http is allowed only for localhost, 127.0.0.1 and [::1])'],
      ['javascript:alert(1)', 'must use https (http is allowed only for localhost, 127.0.0.1 and [::1])'],
    ])('%s %s', (uri, message) => {
      expect(redirectUriProblem(uri)).toBe(message);
    });
  });

  describe('redirectUrisProblems', () => {
    it('accepts one to the limit of valid URIs', () => {
      expect(redirectUrisProblems(['https://app.example/cb'])).toEqual([]);
      const most = Array.from({ length: MAX_REDIRECT_URIS }, (_, i) => `https://app.example/cb${i}`);
      expect(redirectUrisProblems(most)).toEqual([]);
    });

    it('refuses none, unless not required', () => {
      expect(redirectUrisProblems([])).toEqual([
        { field: 'redirect_uris', rule: 'none', message: 'must name at least one redirect URI' },
      ]);
      expect(redirectUrisProblems([], { required: true })).toHaveLength(1);
      expect(redirectUrisProblems([], { required: false })).toEqual([]);
    });

    it('refuses more than the limit, without reading them', () => {
      const many = Array.from({ length: MAX_REDIRECT_URIS + 1 }, () => 'not a URL');
      expect(redirectUrisProblems(many)).toEqual([
        { field: 'redirect_uris', rule: 'too_many', message: 'may name at most 10 redirect URIs' },
      ]);
    });

    it('names each invalid URI by its index', () => {
      expect(
        redirectUrisProblems(['https://app.example/cb', 'http://evil.example/cb', 'https://app.example/#x']),
      ).toEqual([
        {
          field: 'redirect_uris',
          rule: 'invalid',
          index: 1,
          message: 'must use https (http is allowed only for localhost, 127.0.0.1 and [::1])',
        },
        { field: 'redirect_uris', rule: 'invalid', index: 2, message: 'must not contain a fragment' },
      ]);
    });
  });

  describe('resourceProblem and resourcesProblems', () => {
    it('accepts absolute URIs without a fragment', () => {
      expect(resourceProblem('https://mcp.example.com/mcp')).toBeNull();
      expect(resourceProblem('urn:example:resource')).toBeNull();
      expect(resourcesProblems(['https://mcp.example.com/mcp'])).toEqual([]);
      expect(resourcesProblems([], { public: true })).toEqual([]);
    });

    it.each([
      ['https://mcp.example.com/'.padEnd(MAX_RESOURCE_LENGTH + 1, 'x'), 'must be at most 1000 characters'],
      ['https://mcp.example.com/ mcp', 'must consist of visible ASCII characters'],
      ['/mcp', 'must be an absolute URI'],
      ['https://mcp.example.com/mcp#x', 'must not contain a fragment'],
    ])('%s %s', (resource, message) => {
      expect(resourceProblem(resource)).toBe(message);
      expect(resourcesProblems(['https://ok.example', resource])).toEqual([
        { field: 'resource', rule: 'invalid', index: 1, message },
      ]);
    });

    it('refuses a public client that serves a resource', () => {
      expect(resourcesProblems(['https://mcp.example.com/mcp'], { public: true })).toEqual([
        {
          field: 'token_endpoint_auth_method',
          rule: 'public_resource_server',
          message: 'cannot be none for a resource server: it authenticates to introspect tokens',
        },
      ]);
    });
  });

  describe('grantTypesProblems and responseTypesProblems', () => {
    it('accepts what is served', () => {
      expect(grantTypesProblems(['authorization_code'])).toEqual([]);
      expect(grantTypesProblems([...GRANT_TYPES])).toEqual([]);
      expect(responseTypesProblems(['code'])).toEqual([]);
    });

    it('refuses a grant not served, and a list without authorization_code', () => {
      expect(grantTypesProblems(['authorization_code', 'client_credentials'])).toEqual([
        { field: 'grant_types', rule: 'not_served', message: 'may contain only authorization_code and refresh_token' },
      ]);
      expect(grantTypesProblems(['refresh_token'])).toEqual([
        {
          field: 'grant_types',
          rule: 'no_authorization_code',
          message: 'must include authorization_code, the only grant that starts a sign-in',
        },
      ]);
      expect(grantTypesProblems([]).map((p) => p.rule)).toEqual(['no_authorization_code']);
      expect(grantTypesProblems(['password']).map((p) => p.rule)).toEqual(['not_served', 'no_authorization_code']);
    });

    it('refuses a response type but code, and none at all', () => {
      expect(responseTypesProblems(['token'])).toEqual([
        { field: 'response_types', rule: 'not_code', message: 'may contain only code' },
      ]);
      expect(responseTypesProblems([])).toEqual([
        { field: 'response_types', rule: 'none', message: 'must include code' },
      ]);
    });

    it('the grant type names', () => {
      expect(GRANT_TYPES).toEqual(['authorization_code', 'refresh_token']);
      expect(isGrantType('refresh_token')).toBe(true);
      expect(isGrantType('password')).toBe(false);
      expect(isGrantType('toString')).toBe(false);
    });
  });

  it('couldBeClientId: visible ASCII within the limit', () => {
    expect(couldBeClientId('cl_8f3a')).toBe(true);
    expect(couldBeClientId('x'.repeat(MAX_CLIENT_ID_LENGTH))).toBe(true);
    expect(couldBeClientId('x'.repeat(MAX_CLIENT_ID_LENGTH + 1))).toBe(false);
    expect(couldBeClientId('cl 8f3a')).toBe(false);
    expect(couldBeClientId('')).toBe(false);
  });
});

describe('agent rules', () => {
  it('agentNameProblems: 1 to 200 characters', () => {
    expect(agentNameProblems('Research assistant')).toEqual([]);
    expect(agentNameProblems('x'.repeat(MAX_AGENT_NAME_LENGTH))).toEqual([]);
    expect(agentNameProblems('')).toEqual([{ field: 'name', rule: 'empty', message: 'must not be empty' }]);
    expect(agentNameProblems('x'.repeat(MAX_AGENT_NAME_LENGTH + 1))).toEqual([
      { field: 'name', rule: 'too_long', message: 'is longer than 200 characters' },
    ]);
  });

  it('ownerEmailProblems: something@something, no spaces', () => {
    for (const email of ['ada@example.com', 'a@b']) expect(ownerEmailProblems(email), email).toEqual([]);
    for (const email of ['not-an-email', 'a b@example.com', '@example.com', 'ada@', 'a@b@c', `${'a'.repeat(65)}@b`]) {
      expect(ownerEmailProblems(email), email).toEqual([
        { field: 'owner_email', rule: 'not_an_email', message: 'is not an email address' },
      ]);
      expect(EMAIL.test(email)).toBe(false);
    }
  });
});
