/** What every rule of the server works with; built once at start-up (see app.ts). */
import type { Config } from './config.ts';
import { SecretBox, secretKeyId } from './crypto.ts';
import type { AuthThrottle } from './domain/throttle.ts';
import type { Store } from './store/types.ts';

/** Current time in epoch seconds; injectable so tests can move time forward. */
export type Clock = () => number;
export const systemClock: Clock = () => Math.floor(Date.now() / 1000);

export interface ServerSecrets {
  /** kid of the current JWT_SECRET. */
  kid: string;
  signingKey: Uint8Array;
  /** Current and previous secrets by kid, for verifying access tokens during a rotation. */
  verificationKeys: Map<string, Uint8Array>;
  box: SecretBox;
}

export function serverSecrets(current: string, previous: string[] = []): ServerSecrets {
  const encoder = new TextEncoder();
  const verificationKeys = new Map<string, Uint8Array>();
  for (const secret of [current, ...previous]) verificationKeys.set(secretKeyId(secret), encoder.encode(secret));
  return {
    kid: secretKeyId(current),
    // DESIGN.md §3: the HS256 key is the UTF-8 bytes of JWT_SECRET exactly as configured.
    signingKey: encoder.encode(current),
    verificationKeys,
    box: new SecretBox(current, previous),
  };
}

export interface Context {
  config: Config;
  store: Store;
  clock: Clock;
  secrets: ServerSecrets;
  throttle: AuthThrottle;
}
