/**
 * Outbound HTTP for steps and tool servers, with an SSRF guard (ARCHITECTURE.md: outbound HTTP
 * refuses loopback, private and link-local addresses unless the configuration allows them).
 *
 * The guard judges the address a socket actually connects to, not the name in the URL: names are
 * resolved by our own `lookup`, which refuses private answers before any connection, and every
 * socket's remote address is checked again on connect. A DNS answer that changes between a check
 * and the connection (rebinding) therefore cannot reach a private address. Redirects are followed
 * by hand so that each hop goes through the same guard.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

export class OutboundRefusedError extends Error {
  override readonly name = 'OutboundRefusedError';
  constructor(message: string, readonly address?: string) {
    super(message);
  }
}

export class OutboundTimeoutError extends Error {
  override readonly name = 'OutboundTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`no complete answer within ${timeoutMs} ms`);
  }
}

export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  constructor(readonly maxResponseBytes: number) {
    super(`the response body is larger than ${maxResponseBytes} bytes`);
  }
}

export class TooManyRedirectsError extends Error {
  override readonly name = 'TooManyRedirectsError';
  constructor(readonly maxRedirects: number) {
    super(`more than ${maxRedirects} redirects`);
  }
}

export interface OutboundRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** for the whole exchange, redirects included */
  timeoutMs: number;
  maxResponseBytes: number;
  allowPrivateNetwork: boolean;
  /** default 5 */
  maxRedirects?: number;
  signal?: AbortSignal;
  /**
   * Which addresses to refuse when private networks are not allowed; default isPrivateAddress.
   * Lets a caller be stricter, and lets tests exercise the guard against servers on loopback.
   */
  isBlockedAddress?: (ip: string) => boolean;
}

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** the URL that answered, after redirects */
  url: string;
}

const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers that carry credentials for one origin and must not follow a redirect to another. */
const ORIGIN_BOUND_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'transfer-encoding']);

// ---------------------------------------------------------------------------------------------
// Address classification

/** [network, prefix length] in IPv4 dotted form. */
const BLOCKED_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network", includes the unspecified address
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // CGNAT, RFC 6598
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, includes cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes broadcast
];

function parseV4(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

function inV4Range(value: number, network: string, prefix: number): boolean {
  const base = parseV4(network);
  if (base === undefined) return false;
  const size = 2 ** (32 - prefix);
  return Math.floor(value / size) === Math.floor(base / size);
}

function isBlockedV4(value: number): boolean {
  return BLOCKED_V4.some(([network, prefix]) => inV4Range(value, network, prefix));
}

/** Eight 16-bit groups, or undefined when the text is not an IPv6 address. */
function parseV6(ip: string): number[] | undefined {
  let text = ip;
  // a trailing dotted quad (::ffff:1.2.3.4) stands for the last two groups
  const lastColon = text.lastIndexOf(':');
  if (lastColon >= 0 && text.includes('.', lastColon)) {
    const v4 = parseV4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    text = `${text.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parseGroups = (s: string): number[] | undefined => {
    if (s === '') return [];
    const groups: number[] = [];
    for (const g of s.split(':')) {
      if (!/^[0-9a-f]{1,4}$/i.test(g)) return undefined;
      groups.push(parseInt(g, 16));
    }
    return groups;
  };
  const head = parseGroups(halves[0] ?? '');
  const rest = halves.length === 2 ? parseGroups(halves[1] ?? '') : [];
  if (head === undefined || rest === undefined) return undefined;
  const known = head.length + rest.length;
  if (halves.length === 2) {
    if (known > 7) return undefined;
    return [...head, ...new Array<number>(8 - known).fill(0), ...rest];
  }
  return known === 8 ? head : undefined;
}

function isBlockedV6(groups: number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const embeddedV4 = g6 * 65536 + g7;
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (upperZero && g5 === 0) {
    // :: (unspecified), ::1 (loopback), and the deprecated IPv4-compatible ::a.b.c.d
    if (g6 === 0) return true;
    return isBlockedV4(embeddedV4);
  }
  if (upperZero && g5 === 0xffff) return isBlockedV4(embeddedV4); // IPv4-mapped ::ffff:a.b.c.d
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) return isBlockedV4(embeddedV4); // IPv4-translated
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return isBlockedV4(embeddedV4); // NAT64
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0x0001) return true; // local-use NAT64 64:ff9b:1::/48 (RFC 8215)
  if (g0 === 0x2002) return isBlockedV4(g1 * 65536 + g2); // 6to4 embeds the IPv4 in the prefix
  if (g0 === 0x2001 && g1 === 0) return true; // Teredo 2001::/32: tunnels to an IPv4 hidden in the address
  if (g0 === 0x2001 && g1 === 0x0002 && g2 === 0) return true; // benchmarking 2001:2::/48
  if (g0 === 0x2001 && (g1 & 0xfff0) === 0x0010) return true; // ORCHID 2001:10::/28
  if (g0 === 0x2001 && (g1 & 0xfff0) === 0x0020) return true; // ORCHIDv2 2001:20::/28
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return true; // discard-only 100::/64
  if ((g0 & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
  if ((g0 & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return true; // deprecated site-local fec0::/10
  if ((g0 & 0xff00) === 0xff00) return true; // multicast ff00::/8
  if (g0 === 0x2001 && g1 === 0x0db8) return true; // documentation
  return false;
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
  const family = net.isIP(text);
  if (family === 4) {
    const v4 = parseV4(text);
    return v4 === undefined || isBlockedV4(v4);
  }
  if (family === 6) {
    const groups = parseV6(text);
    return groups === undefined || isBlockedV6(groups);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The per-hop guard

export interface AddressPolicy {
  allowPrivateNetwork: boolean;
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
 * Checks one hop before it is sent: the scheme, and the host when it is an IP literal (Node does
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
        callback(refusal as NodeJS.ErrnoException, []);
        return;
      }
      const first = addresses[0];
      if (options.all === true || first === undefined) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

// ---------------------------------------------------------------------------------------------
// The request

interface Hop {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export async function outboundRequest(req: OutboundRequest): Promise<OutboundResponse> {
  const maxRedirects = req.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const policy: AddressPolicy = { allowPrivateNetwork: req.allowPrivateNetwork, isBlockedAddress: req.isBlockedAddress };
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, req.timeoutMs);
  const onOuterAbort = (): void => controller.abort();
  if (req.signal?.aborted) controller.abort();
  req.signal?.addEventListener('abort', onOuterAbort, { once: true });

  let url = new URL(req.url);
  let method = req.method.toUpperCase();
  let headers: Record<string, string> = { ...req.headers };
  let body = req.body;
  try {
    for (let redirects = 0; ; redirects++) {
      assertUrlAllowed(url, policy);
      const hop = await sendOnce(url, method, headers, body, req.maxResponseBytes, policy, controller.signal, redirects < maxRedirects);
      const location = hop.headers.location;
      if (!REDIRECT_STATUSES.has(hop.status) || location === undefined) {
        return { status: hop.status, headers: hop.headers, body: hop.body, url: url.toString() };
      }
      if (redirects >= maxRedirects) throw new TooManyRedirectsError(maxRedirects);
      const next = new URL(location, url);
      if (next.origin !== url.origin) headers = withoutHeaders(headers, ORIGIN_BOUND_HEADERS);
      // 303 always, and 301/302 after a POST by long-standing browser practice, turn into a GET
      if ((hop.status === 303 && method !== 'HEAD') || ((hop.status === 301 || hop.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        headers = withoutHeaders(headers, BODY_HEADERS);
      }
      url = next;
    }
  } catch (error) {
    if (timedOut) throw new OutboundTimeoutError(req.timeoutMs);
    throw error;
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', onOuterAbort);
  }
}

function withoutHeaders(headers: Record<string, string>, names: ReadonlySet<string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.has(name.toLowerCase())));
}

function sendOnce(url: URL, method: string, headers: Record<string, string>, body: string | Buffer | undefined,
  maxResponseBytes: number, policy: AddressPolicy, signal: AbortSignal, mayRedirect: boolean): Promise<Hop> {
  return new Promise<Hop>((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method,
      headers,
      signal,
      lookup: guardedLookup(policy),
      // no pooled sockets: every connection is a fresh one that passed the guard
      agent: false,
    });
    let settled = false;
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      request.destroy();
      reject(error);
    };
    request.on('error', fail);
    request.on('socket', (socket) => {
      // Second line of defence: whatever path led here, judge the peer actually connected to.
      socket.once('connect', () => {
        const peer = socket.remoteAddress;
        try {
          if (peer === undefined) throw new OutboundRefusedError('could not determine the connected address');
          assertAddressAllowed(peer, policy, url.hostname);
        } catch (refusal) {
          fail(refusal);
        }
      });
    });
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (mayRedirect && REDIRECT_STATUSES.has(status) && response.headers.location !== undefined) {
        response.resume();
        settled = true;
        resolve({ status, headers: response.headers, body: Buffer.alloc(0) });
        return;
      }
      const declared = Number(response.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxResponseBytes) {
        fail(new ResponseTooLargeError(maxResponseBytes));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxResponseBytes) {
          fail(new ResponseTooLargeError(maxResponseBytes));
          return;
        }
        chunks.push(chunk);
      });
      response.on('error', fail);
      response.on('aborted', () => fail(new Error('the connection closed before the response was complete')));
      response.on('end', () => {
        if (settled) return;
        settled = true;
        resolve({ status, headers: response.headers, body: Buffer.concat(chunks) });
      });
    });
    request.end(body);
  });
}
