/** An agent's private key as a JWK: Ed25519 (`kty` OKP) or P-256 (`kty` EC, for ES256). */
export interface AgentPrivateKey {
    kty: 'OKP' | 'EC';
    crv: 'Ed25519' | 'P-256';
    x: string;
    y?: string;
    d: string;
}
/** The public half of an agent's key: what its owner registers (`agentauth agent create --public-key`). */
export type AgentPublicKey = Omit<AgentPrivateKey, 'd'>;
/**
 * The private key in `raw` (a JWK object, or its JSON text as `agentauth-agent keygen` writes
 * it), with only the members that make the key; ConfigurationError otherwise, saying why.
 *
 * @example
 * const key = readPrivateKey(process.env.AGENTAUTH_AGENT_KEY);
 */
export declare function readPrivateKey(raw: unknown): AgentPrivateKey;
/**
 * The public half of a private key, as its owner registers it.
 *
 * @example
 * const publicJwk = publicKeyOf(key); // { kty: 'OKP', crv: 'Ed25519', x: '…' }
 */
export declare function publicKeyOf(key: AgentPrivateKey): AgentPublicKey;
/**
 * The RFC 7638 SHA-256 thumbprint of the public key (base64url), as the server and the console
 * show it: the required members in lexicographic order (EC: crv, kty, x, y; OKP: crv, kty, x).
 *
 * @example
 * console.log(`registered key: ${await keyThumbprint(publicKeyOf(key))}`);
 */
export declare function keyThumbprint(key: AgentPublicKey): Promise<string>;
/**
 * A new key pair: the private key as a JWK (keep it where the agent runs, readable only by it)
 * and its public half (for the owner to register).
 *
 * @example
 * const { privateKey, publicKey } = await generateAgentKey('Ed25519');
 */
export declare function generateAgentKey(alg?: 'Ed25519' | 'ES256'): Promise<{
    privateKey: AgentPrivateKey;
    publicKey: AgentPublicKey;
}>;
/**
 * A fresh assertion (a JWT signed with the agent's key) for one authentication: `iss` = `sub` =
 * the agent, `aud` = the issuer, the request's id, a unique `jti`, and an expiry a minute after
 * `iat`. It is worthless at any other issuer and for any other request, and works once.
 *
 * @example
 * const agent_assertion = await signAssertion(key, { agentId, issuer, requestId });
 */
export declare function signAssertion(key: AgentPrivateKey, claims: {
    agentId: string;
    issuer: string;
    requestId: string;
}, nowMs?: number): Promise<string>;
