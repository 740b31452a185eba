/** What every rule of the server works with; built once at start-up (see app.ts). */
import type { Config } from './config.ts';
import type { Mailer } from './mail.ts';
import { BrowserBindings, SecretBox, SuccessorSeal } from './crypto.ts';
import { AccessTokenKeys } from './domain/jwt.ts';
import type { ClientKeySets } from './domain/client-keys/index.ts';
import type { SigningKeys } from './domain/signing-keys.ts';
import type { ClientMetadataDocuments } from './domain/client-metadata/index.ts';
import type { StatusEvents } from './domain/status-events.ts';
import type { WebhookDispatcher } from './domain/webhooks/dispatcher.ts';
import type { AddressLimit } from './throttle/address.ts';
import type { AuthThrottle } from './throttle/agent-authentication.ts';
import type { SignInThrottle } from './throttle/console-sign-in.ts';
import type { Store } from './store/types.ts';

/** Current time in epoch seconds; injectable so tests can move time forward. */
export type Clock = () => number;
export const systemClock: Clock = () => Math.floor(Date.now() / 1000);

export interface ServerSecrets {
  /** Signs access tokens with the current JWT_SECRET; verifies with it and the previous ones. */
  accessTokens: AccessTokenKeys;
  /** Encrypts client secrets at rest. */
  box: SecretBox;
  /** Issues and recognises the browser binding cookie's values. */
  bindings: BrowserBindings;
  /** Seals the way back to a website from an error page, so its state is never in the page. */
  returns: SecretBox;
  /** Seals a rotated refresh token's successor pair for the reuse window, under that token too. */
  successors: SuccessorSeal;
  /** Seals the private halves of the signing keys (docs/design.md §19). */
  signingKeys: SecretBox;
}

export function serverSecrets(current: string, previous: string[], issuer: string): ServerSecrets {
  return {
    accessTokens: new AccessTokenKeys(current, previous, issuer),
    box: new SecretBox(current, previous),
    bindings: new BrowserBindings(current, previous),
    returns: new SecretBox(current, previous, 'error-return'),
    successors: new SuccessorSeal(current, previous),
    signingKeys: new SecretBox(current, previous, 'signing-key'),
  };
}

export interface Context {
  config: Config;
  store: Store;
  clock: Clock;
  secrets: ServerSecrets;
  /**
   * The key pairs that sign tokens with TOKEN_SIGNING_ALG ES256, EdDSA or RS256; with HS256 only
   * those a key mode left behind, which still verify until their tokens expire (docs/design.md §19).
   */
  signingKeys: SigningKeys;
  throttle: AuthThrottle;
  authorizeLimit: AddressLimit;
  /** Dynamic client registrations per client address (POST /register). */
  registrationLimit: AddressLimit;
  /** Push: connections waiting for a request's status hear of its changes (docs/design.md §12). */
  statusEvents: StatusEvents;
  /** Fetches and caches Client ID Metadata Documents; null unless CLIENT_ID_METADATA_DOCUMENTS is on. */
  clientMetadata: ClientMetadataDocuments | null;
  /** Clients' key sets (jwks_uri fetched and cached) and their assertions' check; null unless PRIVATE_KEY_JWT is on. */
  clientKeySets: ClientKeySets | null;
  /** Sends the outbox's webhook deliveries; started by the server on every node (docs/design.md §15). */
  webhooks: WebhookDispatcher;
  /**
   * Mail through SMTP_URL, or null when it is not set. A foundation, not the console's: the
   * domain mails owners too (approvals, a disabled webhook).
   */
  mailer: Mailer | null;
  /** What only the console uses: its sign-in throttle. */
  console: { throttle: SignInThrottle };
}
