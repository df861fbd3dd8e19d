/**
 * Header passthrough (contract 4.7): a header of the invoking request named `X-Pf-Forward-<name>`
 * reaches remote tool servers as `<name>`, lowercased. Nothing else is forwarded. A forwarded name
 * that would carry a credential, a cookie or a hop-by-hop/transport meaning is dropped, so a caller
 * can neither override the connection's stored `Authorization` nor smuggle framing headers, nor
 * pose as an MCP protocol header (`mcp-method`, `mcp-name`, the `mcp-param-*` headers a 2026 call
 * mirrors its arguments into: those follow from the call's body alone).
 */
export const FORWARD_PREFIX = 'x-pf-forward-';

/** Names a caller may not set on the far side, even through the prefix. */
const NEVER_FORWARDED = new Set([
  'authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'host', 'content-length', 'content-type', 'transfer-encoding',
  'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'accept', 'accept-encoding', 'mcp-session-id', 'mcp-protocol-version',
  'mcp-method', 'mcp-name', 'last-event-id', 'x-api-key', 'forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip',
]);

const MCP_PARAM_PREFIX = 'mcp-param-';
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const MAX_HEADERS = 32;
const MAX_VALUE_BYTES = 4096;

/**
 * The forwardable headers of a request (Node's lowercased header map, or any record). A header
 * repeated by the caller is joined with ", " as HTTP allows. Values with control characters are dropped.
 */
export function forwardableHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> {
  const forwarded: Record<string, string> = {};
  let count = 0;
  for (const [rawName, rawValue] of Object.entries(headers)) {
    const name = rawName.toLowerCase();
    if (!name.startsWith(FORWARD_PREFIX) || rawValue === undefined) continue;
    const target = name.slice(FORWARD_PREFIX.length);
    if (target === '' || !TOKEN.test(target) || NEVER_FORWARDED.has(target) || target.startsWith(FORWARD_PREFIX) || target.startsWith('x-pf-')
      || target.startsWith(MCP_PARAM_PREFIX)) continue;
    const value = Array.isArray(rawValue) ? rawValue.join(', ') : rawValue;
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value) || Buffer.byteLength(value) > MAX_VALUE_BYTES) continue;
    if (++count > MAX_HEADERS) break;
    forwarded[target] = value;
  }
  return forwarded;
}
