/**
 * Special-use IP addresses (RFC 6890 and the IANA IPv4/IPv6 Special-Purpose Address
 * registries, plus multicast and limited broadcast): an outbound request never reaches them
 * unless its caller trusts the address, since its URL is chosen by someone else (a client_id
 * URL by whoever starts an authorization request, which the Client ID Metadata Document draft
 * §8.6 forbids fetching from them; a webhook URL by an admin) and must not make this server
 * reach its own network.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net';

const IPV4_RANGES: [string, number][] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private use
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link local (cloud metadata services live here)
  ['172.16.0.0', 12], // private use
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.31.196.0', 24], // AS112-v4
  ['192.52.193.0', 24], // AMT
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private use
  ['192.175.48.0', 24], // AS112 direct delegation
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 limited broadcast with it
];

const IPV6_RANGES: [string, number][] = [
  // ::/128 unspecified and ::1/128 loopback, widened to the deprecated IPv4-compatible
  // block ::/96 (RFC 4291 §2.5.5.1), which nothing legitimate is reached at.
  ['::', 96],
  ['64:ff9b::', 96], // IPv4/IPv6 translation (NAT64 well-known prefix)
  ['64:ff9b:1::', 48], // local-use IPv4/IPv6 translation
  ['100::', 64], // discard only
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: embeds an arbitrary IPv4 address
  ['2620:4f:8000::', 48], // AS112 direct delegation
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing SIDs
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link local
  ['ff00::', 8], // multicast
];

const SPECIAL_USE = new BlockList();
for (const [network, prefix] of IPV4_RANGES) SPECIAL_USE.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of IPV6_RANGES) SPECIAL_USE.addSubnet(network, prefix, 'ipv6');

/** The URL parser prints an IPv4-mapped address canonically as ::ffff:hhhh:hhhh, whatever the input spelling. */
const IPV4_MAPPED = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/;

/**
 * Whether `ip` (a textual IPv4 or IPv6 address, as `socket.remoteAddress` or DNS gives it)
 * is special-use. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is special-use exactly when
 * its IPv4 address is. Anything that is not an IP address, or carries an IPv6 zone
 * (fe80::1%eth0), counts as special-use: the check fails closed.
 *
 * @example
 * isSpecialUseAddress('10.1.2.3'); // true
 * isSpecialUseAddress('::ffff:127.0.0.1'); // true
 * isSpecialUseAddress('8.8.8.8'); // false
 */
export function isSpecialUseAddress(ip: string): boolean {
  if (isIPv4(ip)) return SPECIAL_USE.check(ip, 'ipv4');
  if (!isIPv6(ip) || ip.includes('%')) return true;
  const mapped = IPV4_MAPPED.exec(new URL(`http://[${ip}]/`).hostname.slice(1, -1));
  if (mapped) return SPECIAL_USE.check(embeddedIPv4(mapped[1]!, mapped[2]!), 'ipv4');
  return SPECIAL_USE.check(ip, 'ipv6');
}

function embeddedIPv4(high: string, low: string): string {
  const bits = (parseInt(high, 16) << 16) | parseInt(low, 16);
  return [24, 16, 8, 0].map((shift) => (bits >>> shift) & 0xff).join('.');
}

/**
 * The networks an operator trusts despite their special use (WEBHOOK_ALLOWED_ADDRESSES for
 * webhooks, CLIENT_METADATA_ALLOWED_ADDRESSES for metadata documents and key sets: servers it runs
 * on an internal network), as CIDRs the configuration has checked.
 *
 * @example
 * trustedNetworks(['10.0.0.0/8']).check('10.1.2.3', 'ipv4'); // true
 */
export function trustedNetworks(cidrs: readonly string[]): BlockList {
  const networks = new BlockList();
  for (const cidr of cidrs) {
    const [network, bits] = cidr.split('/') as [string, string];
    networks.addSubnet(network, Number(bits), isIPv4(network) ? 'ipv4' : 'ipv6');
  }
  return networks;
}

/**
 * Whether an address lies in one of `cidrs`: the predicate an outbound request's allowAddress takes.
 *
 * @example
 * trustedAddresses(['127.0.0.1/32'])('127.0.0.1'); // true
 */
export function trustedAddresses(cidrs: readonly string[]): (ip: string) => boolean {
  const networks = trustedNetworks(cidrs);
  return (ip) => {
    try {
      return networks.check(ip, isIPv4(ip) ? 'ipv4' : 'ipv6');
    } catch {
      return false;
    }
  };
}
