/**
 * The outbound HTTPS request under the guards (docs/design.md §13, §15): a request to a URL that
 * someone else chose (a client_id URL, a webhook URL) must not make this server reach its own
 * network, scan ports for its sender, or hang on a slow peer. Each caller words its own failures.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { type Agent, request } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { isSpecialUseAddress } from './special-use.ts';

/**
 * Which address check is asking: 'resolved', the address the host stands for before any socket
 * is opened (the DNS answer, or the host itself when it is an IP literal); or 'connected', the
 * peer of the connected socket.
 *
 * @example
 * const loopbackForTests = (ip: string, stage: AddressStage) => ip === '127.0.0.1';
 */
export type AddressStage = 'resolved' | 'connected';

/**
 * Limits and test seams of {@link guardedRequest}. Production passes the limits, nothing else
 * but a kept-connection agent.
 *
 * @example
 * const options: OutboundOptions = { maxBytes: 65_536, timeoutMs: 10_000 };
 */
export interface OutboundOptions {
  /** Largest body read, in bytes. */
  maxBytes: number;
  /** Deadline for the whole exchange (DNS, connect, TLS, headers, body), in ms. */
  timeoutMs: number;
  /** Test only: a CA trusted in addition to the usual roots (for a self-signed test certificate). */
  ca?: string | Buffer;
  /**
   * Lets a special-use address through: loopback for a test server, or a network the operator
   * trusts (webhooks). `stage` tells the check before connecting (DNS answer or IP literal) from
   * the socket check, so a test can pass one and not the other.
   */
  allowAddress?: (ip: string, stage: AddressStage) => boolean;
  /**
   * Connections to keep and use again (a keep-alive https.Agent), for a caller that talks to the
   * same hosts often (webhooks). Every new connection still goes through both address checks; a
   * kept one was checked when it was made. Default: a fresh connection per request.
   */
  agent?: Agent;
}

/** The request a {@link guardedRequest} sends. */
export interface OutboundRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/** What came back: the status, the headers and the body (at most maxBytes of it). */
export interface OutboundAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** How one use of {@link guardedRequest} words its failures and judges an answer. */
export interface OutboundWording {
  /**
   * The error for `reason`; `host` is null when the URL does not parse. `unreached` says what
   * went wrong before any answer, for a caller whose URL's chooser may be told (a webhook's
   * admin); `reason` then is the one wording that tells nobody anything (UNREACHABLE).
   */
  failure: (host: string | null, reason: string, unreached?: Unreached) => Error;
  /** A reason to refuse the answer once its headers are in, or null to read its body. */
  check?: (res: IncomingMessage) => string | null;
  /** A body over maxBytes: a failure, or cut off there (a webhook receiver's answer is not needed whole). */
  tooLarge: 'fail' | 'truncate';
  /** What the body is called in messages: 'the document', 'the answer'. */
  what: string;
}

/**
 * The one reason given for every failure before an HTTP response: DNS, refused, reset, TLS,
 * silence. Telling them apart would tell whoever chose the URL whether a port is open, closed
 * or filtered, and so let them scan other hosts' ports through this server. A caller whose URL
 * is chosen by someone trusted (a webhook, by an admin) words the Unreached instead.
 */
const UNREACHABLE = 'the server could not be reached over HTTPS';

/**
 * Why a server was not reached, before any answer: the kind, the Node or TLS error code, and
 * what is known besides (the address refused, the names a certificate holds, how far a timed-out
 * exchange got). No text of the peer's is kept.
 *
 * @example
 * const unreached: Unreached = { kind: 'untrusted_certificate', code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', port: 443 };
 */
export interface Unreached {
  kind:
    | 'name_not_resolved'
    | 'special_use'
    | 'refused'
    | 'timed_out'
    | 'reset'
    | 'no_route'
    | 'self_signed_certificate'
    | 'untrusted_certificate'
    | 'name_mismatch'
    | 'expired_certificate'
    | 'not_yet_valid_certificate'
    | 'not_tls'
    | 'tls'
    | 'other';
  /** The error's code (ECONNREFUSED, CERT_HAS_EXPIRED, …), when it had one. */
  code?: string;
  /** The port tried. */
  port: number;
  /** special_use: the address refused. */
  address?: string;
  /** name_mismatch: the names the certificate holds (its subjectAltName). */
  certificateNames?: string;
  /** timed_out: how far it got (connecting, the TLS handshake, waiting for the answer). */
  stage?: 'connecting' | 'tls' | 'answer';
  /** timed_out: the deadline, in ms. */
  timeoutMs?: number;
}

const CODE_KINDS: Record<string, Unreached['kind']> = {
  ENOTFOUND: 'name_not_resolved',
  EAI_AGAIN: 'name_not_resolved',
  EAI_NONAME: 'name_not_resolved',
  EAI_FAIL: 'name_not_resolved',
  ENODATA: 'name_not_resolved',
  ECONNREFUSED: 'refused',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  ETIMEDOUT: 'timed_out',
  EHOSTUNREACH: 'no_route',
  ENETUNREACH: 'no_route',
  EHOSTDOWN: 'no_route',
  EADDRNOTAVAIL: 'no_route',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self_signed_certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self_signed_certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'untrusted_certificate',
  UNABLE_TO_GET_ISSUER_CERT: 'untrusted_certificate',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'untrusted_certificate',
  CERT_UNTRUSTED: 'untrusted_certificate',
  CERT_SIGNATURE_FAILURE: 'untrusted_certificate',
  ERR_TLS_CERT_ALTNAME_INVALID: 'name_mismatch',
  CERT_HAS_EXPIRED: 'expired_certificate',
  CERT_NOT_YET_VALID: 'not_yet_valid_certificate',
  ERR_SSL_WRONG_VERSION_NUMBER: 'not_tls',
  ERR_SSL_PACKET_LENGTH_TOO_LONG: 'not_tls',
  ERR_SSL_HTTP_REQUEST: 'not_tls',
};

/**
 * What a network or TLS error's code says went wrong, for any connection (a webhook's, the
 * database's): one table of Node's and OpenSSL's codes.
 *
 * @example
 * unreachedKindOf('DEPTH_ZERO_SELF_SIGNED_CERT'); // 'self_signed_certificate'
 * unreachedKindOf('EWHATEVER');                   // undefined
 */
export function unreachedKindOf(code: string): Unreached['kind'] | undefined {
  return Object.hasOwn(CODE_KINDS, code) ? CODE_KINDS[code] : undefined;
}

/** The kinds of a certificate the connection did not trust, as unreachedKindOf names them. */
export const CERTIFICATE_NOT_TRUSTED: ReadonlySet<Unreached['kind']> = new Set([
  'self_signed_certificate',
  'untrusted_certificate',
  'expired_certificate',
  'not_yet_valid_certificate',
]);

/** What a failed exchange's error tells, by its code (never its message, which may quote the peer). */
function unreachedOf(error: NodeJS.ErrnoException & { cert?: { subjectaltname?: string } }, port: number): Unreached {
  const code = typeof error.code === 'string' ? error.code : undefined;
  let kind: Unreached['kind'] = (code && unreachedKindOf(code)) || 'other';
  // OpenSSL's own text (not the peer's) tells a plain-HTTP port behind an EPROTO.
  if (code === 'EPROTO' && /wrong version number|http request/i.test(error.message)) kind = 'not_tls';
  else if (kind === 'other' && code && /^(ERR_SSL_|ERR_TLS_|CERT_|EPROTO)/.test(code)) kind = 'tls';
  const unreached: Unreached = { kind, port, ...(code ? { code } : {}) };
  if (kind === 'name_mismatch' && typeof error.cert?.subjectaltname === 'string')
    // The receiver's certificate chose them: printable ASCII only, for a terminal's sake.
    unreached.certificateNames = error.cert.subjectaltname.replace(/[^\x20-\x7e]/g, '?').slice(0, 300);
  if (kind === 'timed_out') unreached.stage = 'connecting';
  return unreached;
}

type Refused = (ip: string, stage: AddressStage) => boolean;

/**
 * One HTTPS exchange under the outbound guards (docs/design.md §13): https only, no redirects
 * followed, no connection to a special-use address (judged before any socket opens, for an IP
 * literal and for every DNS answer, and again on the connected socket), one deadline for DNS,
 * connect, TLS and body, and a size cap. Metadata documents (GET) and webhooks (POST) both go
 * through it. Failures before an answer all read alike (UNREACHABLE), so the server cannot be
 * used to scan ports.
 *
 * @example
 * const answer = await guardedRequest('https://hooks.example.com/a', { method: 'POST', headers, body }, { maxBytes: 65_536, timeoutMs: 10_000 }, wording);
 * answer.status; // 204
 */
export function guardedRequest(
  url: string,
  outbound: OutboundRequest,
  options: OutboundOptions,
  wording: OutboundWording,
): Promise<OutboundAnswer> {
  const { maxBytes, timeoutMs } = options;
  const refused: Refused = (ip, stage) => isSpecialUseAddress(ip) && !options.allowAddress?.(ip, stage);

  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.reject(wording.failure(null, 'its URL is not valid'));
  }
  const failure = (reason: string, unreached?: Unreached) => wording.failure(target.host, reason, unreached);
  if (target.protocol !== 'https:') return Promise.reject(failure('only https URLs are fetched'));
  const port = Number(target.port || 443);
  const specialUse = (address: string) =>
    new SpecialUseRefusal(
      failure('the host is at a special-use IP address, which is never fetched from', {
        kind: 'special_use',
        port,
        address,
      }),
    );
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  // An IP-literal host never goes through the lookup, and the socket check runs only once the
  // connection is made, after a SYN was sent and the port's state learnt: a literal is judged
  // here, before any socket exists. The socket check below stays, for the same address twice.
  if (isIP(host) !== 0 && refused(host, 'resolved')) return Promise.reject(specialUse(host).failure);

  return new Promise<OutboundAnswer>((resolve, reject) => {
    let settled = false;
    let responded = false;
    /** How far the exchange got, for a deadline that passes before any answer. */
    let stage: 'connecting' | 'tls' | 'answer' = 'connecting';
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      req.destroy();
      reject(error);
    };
    const succeed = (value: OutboundAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(value);
    };
    const deadline = setTimeout(
      () =>
        fail(
          responded
            ? failure(`no complete answer within ${timeoutMs} ms`)
            : failure(UNREACHABLE, { kind: 'timed_out', port, stage, timeoutMs }),
        ),
      timeoutMs,
    );
    const brokeOff = `the connection broke off before ${wording.what} was complete`;

    const req = request({
      host,
      port: target.port || 443,
      path: `${target.pathname}${target.search}`,
      method: outbound.method,
      headers: {
        ...outbound.headers,
        ...(outbound.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(outbound.body)) }),
      },
      // Without an agent, a fresh connection per request, closed after it: every request goes
      // through DNS and both address checks.
      agent: options.agent ?? false,
      maxHeaderSize: 8192,
      lookup: checkedLookup(refused, specialUse),
      ...(options.ca ? { secureContext: trusting(options.ca) } : {}),
    });

    // The check that matters: the peer the socket actually reached, whatever DNS said a moment
    // earlier (rebinding); an IP-literal host, refused above already, is checked here again.
    // Prepended so that it runs before TLS starts its handshake on 'connect'.
    req.once('socket', (socket: Socket) => {
      const checkPeer = () => {
        const peer = socket.remoteAddress;
        if (peer === undefined || refused(peer, 'connected')) {
          socket.destroy();
          fail(specialUse(peer ?? 'unknown').failure);
        }
      };
      if (socket.connecting) {
        socket.prependOnceListener('connect', checkPeer);
        socket.once('connect', () => {
          stage = 'tls';
        });
        socket.once('secureConnect', () => {
          stage = 'answer';
        });
      } else {
        // A kept connection: connected and past its handshake already.
        stage = 'answer';
        checkPeer();
      }
    });

    // Whatever went wrong before a response, one reason (UNREACHABLE) and what it was, by code.
    req.on('error', (error: Error) => {
      if (error instanceof SpecialUseRefusal) return fail(error.failure);
      fail(responded ? failure(brokeOff) : failure(UNREACHABLE, unreachedOf(error, port)));
    });

    req.once('response', (res: IncomingMessage) => {
      responded = true;
      const problem = wording.check?.(res) ?? null;
      if (problem) return fail(failure(problem));
      const chunks: Buffer[] = [];
      let size = 0;
      const answer = () => ({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          if (wording.tooLarge === 'fail') return fail(failure(`${wording.what} is larger than ${maxBytes} bytes`));
          chunks.push(chunk.subarray(0, chunk.length - (size - maxBytes)));
          succeed(answer());
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.once('end', () => succeed(answer()));
      res.on('error', () => fail(failure(brokeOff)));
      res.once('close', () => fail(failure(brokeOff)));
    });

    req.end(outbound.body);
  });
}

/**
 * The TLS context trusting `ca` besides the usual roots, made once per CA: building one parses
 * every root certificate, about 20 ms of CPU, which per request capped deliveries at 50 a second.
 */
const contexts = new Map<string | Buffer, SecureContext>();
function trusting(ca: string | Buffer): SecureContext {
  let context = contexts.get(ca);
  if (!context) {
    context = createSecureContext({ ca: [...rootCertificates, ca] });
    contexts.set(ca, context);
  }
  return context;
}

/** A special-use address refused, carrying the caller's error for it through the lookup's callback. */
class SpecialUseRefusal extends Error {
  constructor(readonly failure: Error) {
    super(failure.message);
  }
}

/**
 * Resolves like dns.lookup but refuses a name with any special-use address, so that such a
 * name fails before a connection is even attempted.
 */
function checkedLookup(refused: Refused, specialUse: (address: string) => SpecialUseRefusal) {
  return (
    hostname: string,
    options: LookupOptions,
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '');
      const special = addresses.find(({ address }) => refused(address, 'resolved'));
      if (special) return callback(specialUse(special.address), '');
      if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}
