/**
 * The per-tool override of a custom server's `durable` (docs/tool-gateway.md, "Durable calls"):
 * `durableTools: {"<tool>": {maxAttempts, …} | false}` on `POST`/`PUT /api/v1/servers`. A policy
 * makes that tool durable with its own retry policy (the server need not be durable); `false`
 * makes it a plain proxied call on a durable server. Every other tool follows the server's
 * `durable`. Pure: the gateway, the dispatcher and the task kind resolve a tool's policy the same way.
 */
import type { DurablePolicy } from './durable-call';

/** The most tools one server may name in `durableTools`. */
export const MAX_DURABLE_TOOL_OVERRIDES = 500;

/** `durableTools`: per tool name of the server, its own policy, or `false` for a plain proxied call (parsed by src/contracts/durable-policy.ts). */
export type DurableTools = Readonly<Record<string, DurablePolicy | false>>;

/** The policy a call of `toolName` runs under: its own override, else the server's; undefined: a plain proxied call. */
export function durablePolicyFor(durable: DurablePolicy | null | undefined, tools: DurableTools | null | undefined, toolName: string): DurablePolicy | undefined {
  if (tools && Object.hasOwn(tools, toolName)) {
    const own = tools[toolName];
    return own === false ? undefined : own;
  }
  return durable ?? undefined;
}

/** Whether any tool of a server with these settings runs durably (its path then serves durable tasks). */
export function anyDurable(durable: DurablePolicy | null | undefined, tools: DurableTools | null | undefined): boolean {
  return (durable !== null && durable !== undefined) || Object.values(tools ?? {}).some((policy) => policy !== false);
}

/**
 * Why `tools` does not fit a server whose tools are `names` (undefined: it fits): every name must
 * be one of the server's tools, and `false` means something only on a durable server.
 */
export function durableToolsProblem(durable: DurablePolicy | null | undefined, tools: DurableTools, names: readonly string[]): string | undefined {
  const known = new Set(names);
  const unknown = Object.keys(tools).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    const listed = names.slice(0, 20).join(', ') + (names.length > 20 ? ', …' : '');
    return `durableTools: the server has no tool ${unknown.slice(0, 5).join(', ')} (its tools: ${listed})`;
  }
  const off = Object.keys(tools).filter((name) => tools[name] === false);
  if (off.length > 0 && (durable === null || durable === undefined)) {
    return `durableTools: ${off.slice(0, 5).join(', ')} set to false, but the server is not durable: false turns a durable server's tool into a plain proxied call`;
  }
  return undefined;
}
