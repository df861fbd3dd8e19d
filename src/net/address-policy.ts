/**
 * Which destinations outbound connections may reach (ARCHITECTURE.md: outbound HTTP refuses
 * loopback, private and link-local addresses unless the configuration allows them). Addresses are
 * parsed and matched by ipaddr.js; this module only lists the ranges and says which IPv6 forms
 * carry an IPv4 address inside them, so that a private IPv4 cannot hide behind an IPv6 spelling.
 *
 * The guard judges the address a socket connects to, not the name in the URL: `guardedLookup`
 * refuses private DNS answers before any connection, and the HTTP client checks every socket's
 * remote address again on connect, so a DNS answer that changes between check and connection
 * (rebinding) cannot reach a private address.
 */
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export class OutboundRefusedError extends Error {
  override readonly name = 'OutboundRefusedError';
  constructor(message: string, readonly address?: string) {
    super(message);
  }
}

function v4Cidr(text: string): [ipaddr.IPv4, number] {
  return ipaddr.IPv4.parseCIDR(text);
}

function v6Cidr(text: string): [ipaddr.IPv6, number] {
  return ipaddr.IPv6.parseCIDR(text);
}

const BLOCKED_V4: ReadonlyArray<[ipaddr.IPv4, number]> = [
  '0.0.0.0/8', // "this network", includes the unspecified address
  '10.0.0.0/8', // RFC 1918
  '100.64.0.0/10', // CGNAT, RFC 6598
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, includes cloud metadata 169.254.169.254
  '172.16.0.0/12', // RFC 1918
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // TEST-NET-1
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16', // RFC 1918
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // TEST-NET-2
  '203.0.113.0/24', // TEST-NET-3
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, includes broadcast
].map(v4Cidr);

const BLOCKED_V6: ReadonlyArray<[ipaddr.IPv6, number]> = [
  '64:ff9b:1::/48', // local-use NAT64 (RFC 8215)
  '2001::/32', // Teredo: tunnels to an IPv4 address hidden in the address
  '2001:2::/48', // benchmarking
  '2001:10::/28', // ORCHID
  '2001:20::/28', // ORCHIDv2
  '2001:db8::/32', // documentation
  '100::/64', // discard-only
  'fc00::/7', // unique local
  'fe80::/10', // link-local
  'fec0::/10', // deprecated site-local
  'ff00::/8', // multicast
].map(v6Cidr);

function v4From(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * IPv6 prefixes whose addresses stand for an IPv4 address, and where it sits. Such an address is
 * judged by its IPv4 address. `::/96` (IPv4-compatible) also covers `::` and `::1`: their embedded
 * address falls in 0.0.0.0/8.
 */
const EMBEDDING_V6: ReadonlyArray<{ range: [ipaddr.IPv6, number]; embedded(parts: number[]): ipaddr.IPv4 }> = [
  { range: v6Cidr('::/96'), embedded: (p) => v4From(p[6] ?? 0, p[7] ?? 0) }, // IPv4-compatible (deprecated)
  { range: v6Cidr('::ffff:0:0/96'), embedded: (p) => v4From(p[6] ?? 0, p[7] ?? 0) }, // IPv4-mapped
  { range: v6Cidr('::ffff:0:0:0/96'), embedded: (p) => v4From(p[6] ?? 0, p[7] ?? 0) }, // IPv4-translated
  { range: v6Cidr('64:ff9b::/96'), embedded: (p) => v4From(p[6] ?? 0, p[7] ?? 0) }, // NAT64
  { range: v6Cidr('2002::/16'), embedded: (p) => v4From(p[1] ?? 0, p[2] ?? 0) }, // 6to4 embeds it in the prefix
];

// match() throws across families, so each family is only matched against its own ranges.
function isBlockedV4(address: ipaddr.IPv4): boolean {
  return BLOCKED_V4.some((range) => address.match(range));
}

function isBlockedV6(address: ipaddr.IPv6): boolean {
  for (const { range, embedded } of EMBEDDING_V6) {
    if (address.match(range)) return isBlockedV4(embedded(address.parts));
  }
  return BLOCKED_V6.some((range) => address.match(range));
}

/**
 * Whether an IP address is anything but a public unicast address: loopback, RFC 1918, CGNAT,
 * link-local, unique-local, multicast, unspecified, reserved, or an IPv6 form embedding one of
 * those. Text that is not an IP address counts as private, so a caller's mistake fails closed.
 */
export function isPrivateAddress(ip: string): boolean {
  let text = ip.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone); // a zone id only exists on link-local addresses anyway
  // net.isIP first: ipaddr.js also accepts the loose IPv4 forms (1.2.3, 0x7f000001) that sockets
  // never report, and text that is not a plain address must fail closed.
  const family = net.isIP(text);
  try {
    if (family === 4) return isBlockedV4(ipaddr.IPv4.parse(text));
    if (family === 6) return isBlockedV6(ipaddr.IPv6.parse(text));
  } catch {
    return true;
  }
  return true;
}

export interface AddressPolicy {
  allowPrivateNetwork: boolean;
  /**
   * Which addresses to refuse when private networks are not allowed; default isPrivateAddress.
   * Lets a caller be stricter, and lets tests exercise the guard against servers on loopback.
   */
  isBlockedAddress?: (ip: string) => boolean;
}

/** Throws OutboundRefusedError when the policy forbids connecting to `ip`. */
export function assertAddressAllowed(ip: string, policy: AddressPolicy, hostname = ip): void {
  if (policy.allowPrivateNetwork) return;
  const blocked = policy.isBlockedAddress ?? isPrivateAddress;
  if (blocked(ip)) {
    const shown = hostname === ip ? ip : `${hostname} (${ip})`;
    throw new OutboundRefusedError(`refused to connect to ${shown}: private, loopback or link-local address`, ip);
  }
}

/**
 * Checks one hop before it is sent: the scheme, and the host when it is an IP literal (sockets do
 * not call `lookup` for those). Names are checked by `guardedLookup` when they are resolved.
 */
export function assertUrlAllowed(url: URL, policy: AddressPolicy): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundRefusedError(`refused the scheme ${url.protocol} (only http: and https:)`);
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (net.isIP(host) !== 0) assertAddressAllowed(host, policy);
}

/** A `lookup` for sockets that refuses names resolving to a forbidden address. */
export function guardedLookup(policy: AddressPolicy): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) {
        callback(err, []);
        return;
      }
      try {
        if (addresses.length === 0) throw new OutboundRefusedError(`${hostname} did not resolve to any address`);
        // Every answer is judged, not only the first: the socket may try any of them.
        for (const a of addresses) assertAddressAllowed(a.address, policy, hostname);
      } catch (refusal) {
        callback(refusal instanceof Error ? refusal : new Error(String(refusal)), []);
        return;
      }
      const first = addresses[0];
      if (options.all === true || first === undefined) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}
