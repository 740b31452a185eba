/**
 * What the delivery log says when a receiver was not reached (docs/reference/webhooks.md,
 * "When a delivery fails"): the real failure in plain words, with what fixes it. The dispatcher
 * records these words with each attempt, so the console, the CLI and the API show the same
 * ones. Only an admin reads them, and an admin chose the URL: unlike a metadata document's
 * fetch, telling a refused port from a silent one tells them nothing they may not know. They
 * name the host, the port, an address and a certificate's names: never the URL's path (often a
 * capability), a secret or the peer's own text.
 */
import type { Unreached } from '../../outbound/request.ts';

/** The setting that lets webhooks reach a network of special-use addresses. */
export const ALLOW_SETTING = 'WEBHOOK_ALLOWED_ADDRESSES';

/** How a private CA (or one certificate) is trusted: Node's own setting, read when the server starts. */
const EXTRA_CA = 'start agentauth with NODE_EXTRA_CA_CERTS=/path/to/ca.pem';

/** A deadline as people read it: '10 s', '500 ms'. */
const limit = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/**
 * The network to list in WEBHOOK_ALLOWED_ADDRESSES for one address: itself, as a CIDR.
 *
 * @example
 * singleAddressNetwork('127.0.0.1'); // '127.0.0.1/32'
 * singleAddressNetwork('::1');       // '::1/128'
 */
export const singleAddressNetwork = (address: string): string =>
  address.includes(':') ? `${address}/128` : `${address}/32`;

/**
 * Why an address is refused, and the setting that allows it, as a save and a delivery say it.
 *
 * @example
 * specialUseWords('localhost', '127.0.0.1');
 * // 'localhost is at 127.0.0.1, which is a loopback, private or other special-use address, which webhooks are not sent to; to allow it, list its network in WEBHOOK_ALLOWED_ADDRESSES (e.g. 127.0.0.1/32)'
 */
export function specialUseWords(host: string, address: string): string {
  const which = host === address ? address : `${host} is at ${address}, which`;
  return `${which} is a loopback, private or other special-use address, which webhooks are not sent to; to allow it, list its network in ${ALLOW_SETTING} (e.g. ${singleAddressNetwork(address)})`;
}

/**
 * The delivery log's words for a receiver `host` not reached.
 *
 * @example
 * deliveryFailureWords('hooks.internal', { kind: 'refused', code: 'ECONNREFUSED', port: 8443 });
 * // 'the connection to hooks.internal:8443 was refused (ECONNREFUSED): nothing accepts connections there; is the receiver running, on this port?'
 */
export function deliveryFailureWords(host: string, unreached: Unreached): string {
  const { code, port } = unreached;
  const hostname = host.replace(/:\d+$/, '');
  const at = `${hostname}:${port}`;
  const why = code ? ` (${code})` : '';
  const within = limit(unreached.timeoutMs ?? 10_000);
  switch (unreached.kind) {
    case 'name_not_resolved':
      return code === 'EAI_AGAIN'
        ? `the name ${hostname} could not be resolved just now${why}: the name server did not answer; it is tried again`
        : `the name ${hostname} could not be resolved${why}: no DNS record; check the URL's host name`;
    case 'special_use':
      return specialUseWords(hostname, unreached.address ?? 'unknown');
    case 'refused':
      return `the connection to ${at} was refused${why}: nothing accepts connections there; is the receiver running, on this port?`;
    case 'timed_out':
      return unreached.stage === 'answer'
        ? `the receiver at ${at} took the request but did not answer within ${within}: answer first, then do slow work`
        : unreached.stage === 'tls'
          ? `the TLS handshake with ${at} did not finish within ${within}: something there accepts connections but does not speak TLS`
          : `no connection to ${at} within ${within}: the host is down, or a firewall drops the connection`;
    case 'reset':
      return `the receiver at ${at} closed the connection before answering${why}`;
    case 'no_route':
      return `there is no route to ${at}${why}: the network or the host is unreachable from this server`;
    case 'self_signed_certificate':
      return `the receiver's certificate is self-signed${why}, so this server does not trust it: ${EXTRA_CA} (that certificate, or the CA that signed it, in PEM), or give the receiver a certificate from a public CA`;
    case 'untrusted_certificate':
      return `the receiver's certificate is not signed by a CA this server trusts${why}: for a private CA, ${EXTRA_CA} (that CA's certificate in PEM); for a public CA, the receiver must send its intermediate certificates too`;
    case 'name_mismatch':
      return `the receiver's certificate is not valid for ${hostname}${why}${unreached.certificateNames ? `: it names ${unreached.certificateNames}` : ''}; use a URL with a name the certificate holds, or give the receiver a certificate for ${hostname}`;
    case 'expired_certificate':
      return `the receiver's certificate has expired${why}: the receiver must renew it`;
    case 'not_yet_valid_certificate':
      return `the receiver's certificate is not valid yet${why}: check the receiver's certificate and both clocks`;
    case 'not_tls':
      return `${at} does not answer in TLS${why}: is the receiver plain http? Webhooks are sent over https only`;
    case 'tls':
      return `the TLS handshake with ${at} failed${why}`;
    default:
      return `${at} could not be reached over HTTPS${why}`;
  }
}
