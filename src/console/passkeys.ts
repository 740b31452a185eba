/**
 * Passkeys (WebAuthn) for console accounts, with @simplewebauthn/server: registration, sign-in
 * with discoverable credentials, rename and removal. Each ceremony's challenge is a database row
 * taken once, so it works across nodes and cannot be answered twice.
 */
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { createHash, randomBytes } from 'node:crypto';
import { PREFIX, randomId } from '../crypto.ts';
import type { Context } from '../context.ts';
import type { AccountRecord, PasskeyRecord } from '../store/accounts.ts';
import { possibleId } from '../management/reach.ts';
import { accountEvent } from '../domain/webhooks/events.ts';
import { InvalidField, NotFound, InvalidCredentials } from '../errors.ts';

type Deps = Pick<Context, 'store' | 'clock' | 'config'>;

/**
 * @simplewebauthn/server, loaded with the first ceremony: it costs about 25 MB resident, which
 * nodes that serve only the protocol need not pay.
 */
let webauthn: Promise<typeof import('@simplewebauthn/server')> | undefined;
const loadWebauthn = () => (webauthn ??= import('@simplewebauthn/server'));

/** Seconds a person has to answer their authenticator. */
const CEREMONY_TTL = 300;
const MAX_PASSKEY_NAME = 100;

/** The relying party: the issuer's host name and origin. */
function relyingParty(deps: Pick<Context, 'config'>): { rpID: string; origin: string } {
  const url = new URL(deps.config.baseUrl);
  return { rpID: url.hostname, origin: url.origin };
}

async function saveChallenge(deps: Deps, challenge: string, accountId: string | null): Promise<string> {
  const id = randomId(PREFIX.challenge, 16);
  await deps.store.challenges.insert({
    id,
    challenge,
    account_id: accountId,
    expires_at: deps.clock() + CEREMONY_TTL,
  });
  return id;
}

function passkeyName(raw: string | undefined): string {
  const name = (raw ?? '').trim() || 'Passkey';
  if (name.length > MAX_PASSKEY_NAME)
    throw new InvalidField('name', `A passkey's name can be at most ${MAX_PASSKEY_NAME} characters long.`);
  return name;
}

/**
 * Options for navigator.credentials.create(): a discoverable credential (so sign-in needs no
 * email), none of the account's existing ones again.
 *
 * @example
 * const { challengeId, options } = await registrationOptions(ctx, account);
 * // browser: SimpleWebAuthnBrowser.startRegistration({ optionsJSON: options })
 */
export async function registrationOptions(
  deps: Deps,
  account: AccountRecord,
): Promise<{ challengeId: string; options: PublicKeyCredentialCreationOptionsJSON }> {
  const existing = await deps.store.passkeys.list(account.id);
  const { generateRegistrationOptions } = await loadWebauthn();
  const options = await generateRegistrationOptions({
    rpName: 'agentauth',
    rpID: relyingParty(deps).rpID,
    userName: account.email,
    userDisplayName: account.name ?? account.email,
    userID: new TextEncoder().encode(account.id),
    attestationType: 'none',
    timeout: CEREMONY_TTL * 1000,
    excludeCredentials: existing.map((passkey) => ({
      id: passkey.id,
      transports: passkey.transports ? (JSON.parse(passkey.transports) as AuthenticatorTransport[]) : undefined,
    })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  return { challengeId: await saveChallenge(deps, options.challenge, account.id), options };
}

const CEREMONY_FAILED = 'The passkey could not be verified. Try again.';

/** Verifies the authenticator's answer to registrationOptions and stores the passkey. */
export async function registerPasskey(
  deps: Deps,
  account: AccountRecord,
  challengeId: string,
  response: RegistrationResponseJSON,
  name?: string,
): Promise<PasskeyRecord> {
  const label = passkeyName(name);
  const challenge = await deps.store.challenges.take(challengeId, deps.clock());
  if (!challenge || challenge.account_id !== account.id)
    throw new InvalidField('passkey', 'This passkey request has expired; start again.');
  const { rpID, origin } = relyingParty(deps);
  const { verifyRegistrationResponse } = await loadWebauthn();
  let verification;
  try {
    verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: true,
    });
  } catch {
    throw new InvalidField('passkey', CEREMONY_FAILED);
  }
  if (!verification.verified) throw new InvalidField('passkey', CEREMONY_FAILED);
  const { credential } = verification.registrationInfo;
  if (await deps.store.passkeys.find(credential.id))
    throw new InvalidField('passkey', 'This passkey is already registered.');
  const passkey: PasskeyRecord = {
    id: credential.id,
    account_id: account.id,
    public_key: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: credential.transports ? JSON.stringify(credential.transports) : null,
    name: label,
    created_at: deps.clock(),
    last_used_at: null,
  };
  await deps.store.passkeys.insert(passkey, [
    accountEvent('account.sign_in_method_changed', account, { change: 'passkey_added', passkey: { name: label } }),
  ]);
  return passkey;
}

/**
 * Options for navigator.credentials.get(), for any of this server's passkeys (no email asked).
 * User verification is required (docs/design.md §11): a passkey is the only factor here, so a
 * found security key without its PIN or the device's unlock must not sign anyone in.
 */
export async function authenticationOptions(
  deps: Deps,
): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const { generateAuthenticationOptions } = await loadWebauthn();
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(deps).rpID,
    userVerification: 'required',
    timeout: CEREMONY_TTL * 1000,
  });
  return { challengeId: await saveChallenge(deps, options.challenge, null), options };
}

const purposeDigest = (purpose: string) => createHash('sha256').update(purpose).digest();

/**
 * A challenge made for one purpose (an approval's decision, docs/design.md §16): 16 random bytes,
 * then the SHA-256 of the purpose. The server keeps the challenge, so an answer to it proves that
 * purpose and no other: an answer made to confirm something else cannot decide an approval.
 */
const purposeChallenge = (purpose: string) => new Uint8Array(Buffer.concat([randomBytes(16), purposeDigest(purpose)]));

/** Whether a stored challenge (base64url) was made for `purpose` by {@link purposeChallenge}. */
function servesPurpose(challenge: string, purpose: string): boolean {
  const bytes = Buffer.from(challenge, 'base64url');
  return bytes.length === 48 && bytes.subarray(16).equals(purposeDigest(purpose));
}

/**
 * Options for confirming who is at the keyboard with one of the signed-in account's own
 * passkeys (a re-authentication), with user verification required; with `purpose`, the
 * challenge is made for that purpose alone (see {@link confirmWithPasskey}).
 *
 * @example
 * const { challengeId, options } = await reauthenticationOptions(ctx, account);
 * const forDecision = await reauthenticationOptions(ctx, account, 'approval apr_… once');
 */
export async function reauthenticationOptions(
  deps: Deps,
  account: AccountRecord,
  purpose?: string,
): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const passkeys = await deps.store.passkeys.list(account.id);
  if (passkeys.length === 0)
    throw new InvalidField('passkey', 'Your account has no passkey; confirm with your password.');
  const { generateAuthenticationOptions } = await loadWebauthn();
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(deps).rpID,
    userVerification: 'required',
    timeout: CEREMONY_TTL * 1000,
    ...(purpose === undefined ? {} : { challenge: purposeChallenge(purpose) }),
    allowCredentials: passkeys.map((passkey) => ({
      id: passkey.id,
      transports: passkey.transports ? (JSON.parse(passkey.transports) as AuthenticatorTransport[]) : undefined,
    })),
  });
  return { challengeId: await saveChallenge(deps, options.challenge, account.id), options };
}

/**
 * Verifies an authenticator's answer to a challenge with user verification, and records the
 * passkey's use. The passkey, or undefined: unknown passkey, bad signature, replayed or expired
 * challenge, a challenge of another account, a counter gone backwards and no user verification
 * all answer alike.
 */
async function verifiedPasskey(
  deps: Deps,
  challengeId: string,
  response: AuthenticationResponseJSON,
  accountId: string | null,
  purpose?: string,
): Promise<PasskeyRecord | undefined> {
  const challenge = await deps.store.challenges.take(challengeId, deps.clock());
  const passkey = typeof response?.id === 'string' ? await deps.store.passkeys.find(response.id) : undefined;
  if (
    !challenge ||
    challenge.account_id !== accountId ||
    (purpose !== undefined && !servesPurpose(challenge.challenge, purpose)) ||
    !passkey ||
    (accountId !== null && passkey.account_id !== accountId)
  )
    return undefined;
  const { rpID, origin } = relyingParty(deps);
  const { verifyAuthenticationResponse } = await loadWebauthn();
  let verification;
  try {
    verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: true,
      credential: {
        id: passkey.id,
        publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
        counter: passkey.counter,
        transports: passkey.transports ? (JSON.parse(passkey.transports) as AuthenticatorTransport[]) : undefined,
      },
    });
  } catch {
    return undefined;
  }
  if (!verification.verified) return undefined;
  if (!(await deps.store.passkeys.recordUse(passkey.id, verification.authenticationInfo.newCounter, deps.clock())))
    return undefined;
  return passkey;
}

/**
 * The active account whose passkey answered the sign-in challenge. Every failure answers alike.
 */
export async function signInWithPasskey(
  deps: Deps,
  challengeId: string,
  response: AuthenticationResponseJSON,
): Promise<AccountRecord> {
  const failed = new InvalidCredentials('That passkey could not sign you in.');
  const passkey = await verifiedPasskey(deps, challengeId, response, null);
  const account = passkey && (await deps.store.accounts.find(passkey.account_id));
  if (account?.status !== 'active') throw failed;
  return account;
}

/**
 * Whether one of `account`'s own passkeys, with user verification, answered the challenge of
 * {@link reauthenticationOptions}; with `purpose`, only a challenge made for that purpose counts.
 *
 * @example
 * if (!(await confirmWithPasskey(ctx, account, challengeId, response))) throw new InvalidField('passkey', 'Try again.');
 */
export async function confirmWithPasskey(
  deps: Deps,
  account: AccountRecord,
  challengeId: string,
  response: AuthenticationResponseJSON,
  purpose?: string,
): Promise<boolean> {
  return (await verifiedPasskey(deps, challengeId, response, account.id, purpose)) !== undefined;
}

export async function renamePasskey(deps: Deps, account: AccountRecord, id: string, name: string): Promise<void> {
  if (!possibleId(id) || !(await deps.store.passkeys.rename(id, account.id, passkeyName(name))))
    throw new NotFound('No such passkey.');
}

/** Removes a passkey, unless it is the account's only way to sign in; resolves with the passkey removed. */
export async function removePasskey(deps: Deps, account: AccountRecord, id: string): Promise<PasskeyRecord> {
  const passkeys = await deps.store.passkeys.list(account.id);
  const removed = possibleId(id) ? passkeys.find((passkey) => passkey.id === id) : undefined;
  if (!removed) throw new NotFound('No such passkey.');
  if (passkeys.length === 1 && account.password_hash === null) {
    throw new InvalidField('passkey', 'This is your only way to sign in: set a password or add another passkey first.');
  }
  await deps.store.passkeys.delete(id, account.id, [
    accountEvent('account.sign_in_method_changed', account, {
      change: 'passkey_removed',
      passkey: { name: removed.name },
    }),
  ]);
  return removed;
}

/**
 * The challenge id and the authenticator's answer that console.js posts after a WebAuthn
 * ceremony, or InvalidField('passkey') when either is missing: what adding a passkey and every
 * confirmation with one (the account page's, an approval's decision) read first.
 *
 * @example
 * const { challengeId, response } = passkeyAnswerOf<AuthenticationResponseJSON>(request.body);
 */
export function passkeyAnswerOf<R>(body: { challengeId?: unknown; response?: unknown } | undefined): {
  challengeId: string;
  response: R;
} {
  const { challengeId, response } = body ?? {};
  if (typeof challengeId !== 'string' || typeof response !== 'object' || response === null)
    throw new InvalidField('passkey', 'The passkey request is incomplete; try again.');
  return { challengeId, response: response as R };
}

/**
 * The account's passkeys, as its pages list them.
 *
 * @example
 * const passkeys = await listPasskeys(ctx, account);
 */
export function listPasskeys(deps: Pick<Context, 'store'>, account: AccountRecord): Promise<PasskeyRecord[]> {
  return deps.store.passkeys.list(account.id);
}
