/**
 * DNS rebinding protection of the MCP endpoints (every server path under the tools base path) and
 * the OAuth endpoints and documents (docs/tool-gateway.md "Origin and Host"), as the MCP transport
 * requires: a request whose `Origin` is present and not allowed, or whose `Host` names none of
 * this gateway's names, is refused 403 before anything else is looked at.
 *
 * - Origin: allowed are the public URL's origin (FLOWGATE_PUBLIC_URL, or the listener's
 *   `http://HOST:PORT`; on a loopback address also under the other loopback names, same scheme
 *   and port) and FLOWGATE_ALLOWED_ORIGINS. No Origin (a non-browser client, a browser's GET
 *   navigation) is allowed; `Origin: null` (a form posted from a no-referrer page, such as the
 *   authorization page) only when the browser says `Sec-Fetch-Site: same-origin`.
 * - Host: allowed are the public URL's host (with its loopback aliases), the hosts of
 *   FLOWGATE_ALLOWED_ORIGINS, FLOWGATE_ALLOWED_HOSTS, and, while the gateway listens on a loopback
 *   address, any loopback name on any port (a local proxy or port forward). FLOWGATE_ALLOWED_HOSTS=*
 *   turns the Host check off; so does a gateway that does not know its name (listening on a
 *   non-loopback address without FLOWGATE_PUBLIC_URL or FLOWGATE_ALLOWED_HOSTS): then the
 *   Origin check alone stands.
 */
import type { Context } from 'koa';
import type { Config } from '../config/config';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'] as const;
/** how much of a refused header the refusal repeats */
const SHOWN_CHARS = 200;

/** Whether a host name (no port; an IPv6 address in brackets or not) is a loopback name. */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return name === 'localhost' || name === '::1' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/** A Host header's name without its port ('[::1]:8080' → '[::1]'). */
function hostnameOf(host: string): string {
  const colon = host.lastIndexOf(':');
  return colon > host.lastIndexOf(']') ? host.slice(0, colon) : host;
}

/** The same host under each loopback name, when it is one (the port kept). */
function withLoopbackAliases(host: string): string[] {
  const hostname = hostnameOf(host);
  if (!isLoopbackName(hostname)) return [host];
  const port = host.slice(hostname.length);
  return [host, ...LOOPBACK_NAMES.map((name) => `${name}${port}`)];
}

/** A refusal: the message of the 403's body. */
export interface OriginRefusal {
  message: string;
}

export class OriginPolicy {
  private readonly origins = new Set<string>();
  private readonly hosts = new Set<string>();
  /** any loopback name, on any port, is a Host of this gateway */
  private readonly loopbackHosts: boolean;
  private readonly checkHost: boolean;

  /**
   * `publicUrl`: the one the listening gateway hands out (FLOWGATE_PUBLIC_URL, or the derived
   * `http://HOST:PORT`); undefined when not known (then only the configured lists count).
   */
  constructor(publicUrl: string | undefined, config: Pick<Config, 'host' | 'publicUrl' | 'allowedOrigins' | 'allowedHosts'>) {
    this.loopbackHosts = isLoopbackName(config.host.replace(/^\[|\]$/g, ''));
    if (publicUrl !== undefined) {
      const url = new URL(publicUrl);
      for (const host of withLoopbackAliases(url.host.toLowerCase())) {
        this.hosts.add(host);
        this.origins.add(`${url.protocol}//${host}`);
      }
    }
    for (const origin of config.allowedOrigins) {
      this.origins.add(origin);
      this.hosts.add(new URL(origin).host);
    }
    for (const host of config.allowedHosts) this.hosts.add(host);
    // a gateway on 0.0.0.0 without a public URL knows no name of its own: its derived URL's host is no Host a client sends
    const knowsItsName = config.publicUrl !== undefined || this.loopbackHosts || config.allowedHosts.length > 0;
    this.checkHost = knowsItsName && !config.allowedHosts.includes('*');
  }

  /** The refusal of a request whose Origin or Host is not allowed; undefined when it may go on. */
  refusal(ctx: Pick<Context, 'get'>): OriginRefusal | undefined {
    const origin = ctx.get('Origin');
    if (origin !== '' && !this.originAllowed(origin, ctx.get('Sec-Fetch-Site'))) {
      return { message: `forbidden: Origin ${origin.slice(0, SHOWN_CHARS)} is not allowed here (the public URL's origin and FLOWGATE_ALLOWED_ORIGINS are)` };
    }
    const host = ctx.get('Host');
    if (this.checkHost && host !== '' && !this.hostAllowed(host.toLowerCase())) {
      return { message: `forbidden: Host ${host.slice(0, SHOWN_CHARS)} is not a name of this gateway (the public URL's host and FLOWGATE_ALLOWED_HOSTS are)` };
    }
    return undefined;
  }

  private originAllowed(origin: string, fetchSite: string): boolean {
    // a page under a no-referrer policy (the authorization page) posts with `Origin: null`: then only the browser's own word counts
    if (origin === 'null') return fetchSite === 'same-origin';
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      return false;
    }
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && this.origins.has(parsed.origin);
  }

  private hostAllowed(host: string): boolean {
    if (this.hosts.has(host)) return true;
    // an explicit default port names the same host
    const defaultPort = /:(80|443)$/.exec(host);
    if (defaultPort && this.hosts.has(host.slice(0, defaultPort.index))) return true;
    return this.loopbackHosts && isLoopbackName(hostnameOf(host));
  }
}

/** Whether a path (as the routers match it: case-insensitively, percent-decoded) is one of the OAuth endpoints or documents. */
export function isOAuthPath(path: string): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path).toLowerCase();
  } catch {
    decoded = path.toLowerCase();
  }
  return decoded === '/oauth' || decoded.startsWith('/oauth/') || decoded.startsWith('/.well-known/oauth-');
}

/** The gateway's policy: the one it was given, or (a gateway built by hand) one from the configuration alone. */
export function originPolicyOf(deps: { origins?: OriginPolicy; config: Pick<Config, 'host' | 'publicUrl' | 'allowedOrigins' | 'allowedHosts'> }): OriginPolicy {
  return deps.origins ?? new OriginPolicy(deps.config.publicUrl, deps.config);
}
