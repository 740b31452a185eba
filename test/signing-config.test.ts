/** TOKEN_SIGNING_ALG and SIGNING_KEY_ROTATION (docs/design.md §19): defaults, and one clear line for a bad value. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('signing settings', () => {
  it('default to HS256, the contract, and a rotation every 90 days', () => {
    expect(loadConfig({})).toMatchObject({ tokenSigningAlg: 'HS256', signingKeyRotation: 7776000 });
  });

  it('take the algorithms in any case, written as JOSE writes them', () => {
    expect(loadConfig({ TOKEN_SIGNING_ALG: 'es256' }).tokenSigningAlg).toBe('ES256');
    expect(loadConfig({ TOKEN_SIGNING_ALG: 'EDDSA' }).tokenSigningAlg).toBe('EdDSA');
    expect(loadConfig({ TOKEN_SIGNING_ALG: 'RS256' }).tokenSigningAlg).toBe('RS256');
  });

  it.each(['none', 'HS512', 'PS256', 'ES384'])(
    'refuses TOKEN_SIGNING_ALG=%s with one line listing the values',
    (value) => {
      expect(() => loadConfig({ TOKEN_SIGNING_ALG: value })).toThrow(ConfigError);
      expect(() => loadConfig({ TOKEN_SIGNING_ALG: value })).toThrow(
        `TOKEN_SIGNING_ALG must be HS256, ES256, EdDSA or RS256 (got "${value}")`,
      );
    },
  );

  it('SIGNING_KEY_ROTATION: 0 (on demand only), or at least one JWKS cache period and a reload', () => {
    expect(loadConfig({ SIGNING_KEY_ROTATION: '0' }).signingKeyRotation).toBe(0);
    expect(loadConfig({ SIGNING_KEY_ROTATION: '3630' }).signingKeyRotation).toBe(3630);
    for (const value of ['1', '3629', '-1', '90d'])
      expect(() => loadConfig({ SIGNING_KEY_ROTATION: value }), value).toThrow(/^SIGNING_KEY_ROTATION must be/);
  });
});
