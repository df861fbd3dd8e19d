/**
 * The catalog: which server answers a path for an organization. Built-in servers are visible to
 * every organization; each source adds an organization's own (custom servers, …), which are
 * invisible to every other organization, exactly like a missing path. A built-in name always wins
 * over an organization's server of the same name.
 */
import type { ServerSource, ToolServer } from './server';
import { ToolCallError } from './server';

export class ToolCatalog {
  private readonly builtInsByName: Map<string, ToolServer>;

  constructor(private readonly builtIns: readonly ToolServer[], private readonly sources: readonly ServerSource[] = []) {
    this.builtInsByName = new Map(builtIns.map((s) => [s.name, s]));
    if (this.builtInsByName.size !== builtIns.length) throw new Error('two built-in tool servers share a name');
  }

  /** Every server the organization may use: the built-ins, then its own. */
  async servers(orgId: string): Promise<ToolServer[]> {
    const own = (await Promise.all(this.sources.map((source) => source.servers(orgId)))).flat();
    return [...this.builtIns, ...own.filter((s) => !this.builtInsByName.has(s.name))];
  }

  /**
   * The server at `serverPath` for the organization; UNKNOWN_SERVER when it has none there. A
   * built-in comes back as a plain value (no promise made: every tools/call resolves its server).
   */
  server(orgId: string, serverPath: string): ToolServer | Promise<ToolServer> {
    const name = serverPath.replace(/^\/+/, '');
    return this.builtInsByName.get(name) ?? this.ownServer(orgId, name);
  }

  /**
   * Whether any organization may have a server at `serverPath` (asked without a caller: the OAuth
   * protected-resource metadata): a built-in, or a name a source may serve.
   */
  async mayServe(serverPath: string): Promise<boolean> {
    const name = serverPath.replace(/^\/+/, '');
    if (this.builtInsByName.has(name)) return true;
    for (const source of this.sources) {
      if (!source.mayServe || await source.mayServe(name)) return true;
    }
    return false;
  }

  /** The sources in order, as servers() lists them: the first that has the name answers. */
  private async ownServer(orgId: string, name: string): Promise<ToolServer> {
    for (const source of this.sources) {
      let found: ToolServer | undefined;
      if (source.server) {
        const answer = source.server(orgId, name);
        found = answer instanceof Promise ? await answer : answer;
      } else {
        found = (await source.servers(orgId)).find((s) => s.name === name);
      }
      if (found) return found;
    }
    throw new ToolCallError('UNKNOWN_SERVER', `no tool server at /${name}`);
  }
}
