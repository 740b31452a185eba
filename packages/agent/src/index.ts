/**
 * @agentauth/agent: sign an AI agent in to an agentauth authorization request.
 *
 * @example
 * import { AgentAuth } from '@agentauth/agent';
 *
 * const agent = new AgentAuth({ issuer: 'https://auth.example.com', agentId: 'agt_…', agentSecret: 'aas_…', model: 'claude-sonnet-4' });
 * await agent.signIn({ requestId: 'req_…', expect: { host: 'notes.acme.example' } });
 * await agent.waitForCompletion('req_…');
 *
 * @packageDocumentation
 */
export {
  AgentAuth,
  VERSION,
  type ActionStatus,
  type ActionWaitOptions,
  type AgentAction,
  type AgentAuthOptions,
  type ApprovalPending,
  type CallOptions,
  type Expectation,
  type RequestStatus,
  type RequestView,
  type SignInOptions,
  type SignInResult,
  type StatusView,
  type WaitOptions,
} from './client.ts';
export {
  AccessDeniedError,
  AgentAuthError,
  AgentMismatchError,
  ConfigurationError,
  errorFromServer,
  InvalidClientError,
  InvalidCredentialsError,
  InvalidInputError,
  InvalidRequestError,
  IssuerMismatchError,
  NetworkError,
  RequestAlreadyUsedError,
  RequestContestedError,
  RequestExpiredError,
  RequestMismatchError,
  RequestNotFoundError,
  ServerError,
  TimeoutError,
  TooManyRequestsError,
  UnavailableError,
  UnexpectedResponseError,
} from './errors.ts';
export {
  type AgentPrivateKey,
  type AgentPublicKey,
  generateAgentKey,
  keyThumbprint,
  publicKeyOf,
  readPrivateKey,
  signAssertion,
} from './keys.ts';
export { issuerFromPageUrl, quoteUntrusted, requestIdFrom } from './page.ts';
