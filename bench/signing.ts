/**
 * npm run bench:signing — what one token costs to sign and to verify in each TOKEN_SIGNING_ALG,
 * in this process: CPU time per operation, best of five rounds. No servers and no HTTP, so the
 * figure holds on a busy machine where the servers' figures (npm run bench
 * --agentauth-env=TOKEN_SIGNING_ALG=…) are noisy. The signers and verifiers are made as
 * src/domain/jwt.ts (HS256) and src/domain/signing-keys.ts (key pairs) make theirs, with fast-jwt.
 *
 * A sign-in and a refresh sign two tokens in a key mode (access and ID token) and one with HS256
 * (an ID token only for confidential clients asking openid); introspection and userinfo verify one.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';

const ROUNDS = 5;
const PER_ROUND = 5000;
const now = Math.floor(Date.now() / 1000);
/** An RFC 9068 access token's claims, as /token writes them. */
const claims = {
  iss: 'https://auth.example',
  sub: 'agt_0123456789abcdef0123',
  aud: 'https://app.example',
  client_id: 'cli_0123456789abcdef',
  scope: 'openid email profile',
  jti: randomBytes(16).toString('base64url'),
  iat: now,
  exp: now + 3600,
};

const pem = (pair: ReturnType<typeof generateKeyPairSync>) => [
  pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
];
const KEYS: Record<string, () => string[]> = {
  HS256: () => Array(2).fill(randomBytes(32).toString('base64url')),
  ES256: () => pem(generateKeyPairSync('ec', { namedCurve: 'P-256' })),
  EdDSA: () => pem(generateKeyPairSync('ed25519')),
  RS256: () => pem(generateKeyPairSync('rsa', { modulusLength: 2048 })),
};

/** CPU milliseconds per call of `work`, the best of ROUNDS rounds of PER_ROUND calls. */
function cpuPerCall(work: () => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < PER_ROUND; i++) work();
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / 1000 / PER_ROUND);
  }
  return best;
}

const rows = Object.entries(KEYS).map(([alg, keys]) => {
  const [signingKey, verifyingKey] = keys();
  const sign = createSigner({ key: signingKey, algorithm: alg as 'HS256', header: { alg, typ: 'at+jwt', kid: 'k' } });
  const verify = createVerifier({
    key: verifyingKey,
    algorithms: [alg as 'HS256'],
    cache: false,
    ignoreExpiration: true,
  });
  const token = sign(claims);
  verify(token); // a token that does not verify fails the run here
  return { alg, sign: cpuPerCall(() => sign(claims)), verify: cpuPerCall(() => verify(token)) };
});
const hs = rows[0]!;
console.log(`CPU per operation in this process (Node ${process.version}), best of ${ROUNDS} × ${PER_ROUND}`);
const extra = (value: number) => `+${value.toFixed(3)} ms`;
console.log('alg     sign ms   verify ms   2 signs (sign-in, refresh) vs HS256   1 verification vs HS256');
for (const row of rows) {
  const moreSigning = row === hs ? '—' : extra(2 * row.sign - hs.sign);
  const moreVerifying = row === hs ? '—' : extra(row.verify - hs.verify);
  console.log(
    `${row.alg.padEnd(8)}${row.sign.toFixed(4).padEnd(10)}${row.verify.toFixed(4).padEnd(12)}${moreSigning.padEnd(38)}${moreVerifying}`,
  );
}
