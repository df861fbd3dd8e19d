/**
 * How deep and how large a document becomes once its `$ref`s are followed, judged before anything
 * recursive follows them: swagger-parser for an OpenAPI document, ajv for a JSON Schema.
 *
 * For an OpenAPI document: swagger-parser's dereferencer recurses once per level of the resolved
 * document. Its dereferencer recurses once per level of the resolved
 * document, and a chain of a thousand small schemas, each referring to the next, overflows the
 * stack; its validator then walks the resolved document as a tree, so twenty schemas each
 * referring twice to the next become a million copies (a 3 KB document that took a minute and
 * grows without bound). Both are judged here without recursion over the document:
 *
 * - depth: every object or array of the document, and every `#/…` reference from a `$ref` object
 *   to its target, is an edge; the dereferencer's recursion follows a path that never repeats an
 *   object, so the longest such path bounds it. Within a group of objects that reach each other
 *   (a recursive schema) a path visits each at most once, so the group counts as its size.
 * - size: the dereferencer leaves a `$ref` in place when what it points to leads into a cycle
 *   (`circular: "ignore"`, which swagger-parser's validation uses) and substitutes the target
 *   everywhere else, so the validated tree is the document with those substitutions, counted with
 *   repetition (saturating at the limit).
 *
 * Only `#` and `#/…` references are followed (swagger-parser resolves nothing external here); a
 * pointer is read as json-schema-ref-parser reads it (`~1`, `~0`, percent-encoding, `$ref`s met
 * on the way).
 */
import { ownField } from '../common/narrow';

export interface ResolvedLimits {
  /** levels of the resolved document (objects, arrays, and one per `$ref` followed) */
  maxDepth: number;
  /** values of the validated document, counted with repetition */
  maxValues: number;
}

export type ResolvedProblem = 'depth' | 'size';

type Container = Record<string, unknown> | unknown[];

function isContainer(value: unknown): value is Container {
  return value !== null && typeof value === 'object';
}

function refOf(value: Container): string | undefined {
  if (Array.isArray(value)) return undefined;
  const ref = value.$ref;
  return typeof ref === 'string' && (ref === '#' || ref.startsWith('#/')) ? ref : undefined;
}

function decodeToken(token: string): string {
  const unescaped = token.replace(/~1/g, '/').replace(/~0/g, '~');
  try {
    return decodeURIComponent(unescaped);
  } catch {
    return unescaped;
  }
}

class TooDeep extends Error {}

/** `#/a/b` against the document, following `$ref`s met on the way; undefined when it points nowhere. */
function resolver(root: unknown, maxHops: number): (ref: string) => unknown {
  const cache = new Map<string, unknown>();
  const resolving = new Set<string>();
  // recursive only through refs met inside a pointer, and at most maxHops deep
  const resolve = (ref: string, hops: number): unknown => {
    if (cache.has(ref)) return cache.get(ref);
    if (hops > maxHops) throw new TooDeep();
    if (resolving.has(ref)) return undefined; // a pointer through itself points nowhere
    resolving.add(ref);
    const tokens = ref === '#' ? [] : ref.slice(2).split('/').map(decodeToken);
    let value: unknown = root;
    for (let i = 0; i < tokens.length; i++) {
      // a $ref met on the way is followed unless it has the token itself (a JSON Schema's root
      // `$ref` next to its `$defs`, or an "extended" $ref)
      for (let followed = 0; isContainer(value) && refOf(value) !== undefined && !Object.prototype.hasOwnProperty.call(value, tokens[i]!); followed++) {
        if (followed > maxHops) throw new TooDeep(); // $refs pointing at each other in a ring
        value = resolve(refOf(value)!, hops + 1);
      }
      if (!isContainer(value)) {
        value = undefined;
        break;
      }
      const record = value;
      let next = ownField(record, tokens[i]!);
      if (next === undefined) {
        // json-schema-ref-parser also tries the remaining tokens joined by slashes, longest first
        for (let j = tokens.length - 1; j > i; j--) {
          const joined = tokens.slice(i, j + 1).join('/');
          if (Object.prototype.hasOwnProperty.call(record, joined)) {
            next = ownField(record, joined);
            i = j;
            break;
          }
        }
      }
      value = next;
      if (value === undefined) break;
    }
    resolving.delete(ref);
    cache.set(ref, value);
    return value;
  };
  return (ref) => resolve(ref, 0);
}

/** The first limit the resolved document exceeds, or undefined. */
export function resolvedProblem(document: unknown, limits: ResolvedLimits): ResolvedProblem | undefined {
  if (!isContainer(document)) return undefined;
  const resolve = resolver(document, limits.maxDepth);
  // the graph: containers, each with its edges (children, and a $ref's target)
  const index = new Map<Container, number>();
  const nodes: Container[] = [];
  const edges: number[][] = [];
  const refTarget: (number | undefined)[] = [];
  const scalars: number[] = [];
  const add = (container: Container): number => {
    let id = index.get(container);
    if (id === undefined) {
      id = nodes.length;
      index.set(container, id);
      nodes.push(container);
    }
    return id;
  };
  try {
    add(document);
    for (let id = 0; id < nodes.length; id++) {
      const container = nodes[id]!;
      const out: number[] = [];
      let scalarCount = 0;
      for (const child of Array.isArray(container) ? container : Object.values(container)) {
        if (isContainer(child)) out.push(add(child));
        else scalarCount++;
      }
      const ref = refOf(container);
      const target = ref === undefined ? undefined : resolve(ref);
      refTarget[id] = isContainer(target) ? add(target) : undefined;
      if (refTarget[id] !== undefined) out.push(refTarget[id]!);
      edges[id] = out;
      scalars[id] = scalarCount;
    }
  } catch (error) {
    if (error instanceof TooDeep) return 'depth';
    throw error;
  }

  // Tarjan's strongly connected components, without recursion; components come out sinks first
  const count = nodes.length;
  const order = new Int32Array(count).fill(-1);
  const low = new Int32Array(count);
  const onStack = new Uint8Array(count);
  const component = new Int32Array(count).fill(-1);
  const componentSize: number[] = [];
  const sccStack: number[] = [];
  let counter = 0;
  for (let start = 0; start < count; start++) {
    if (order[start] !== -1) continue;
    const work: [number, number][] = [[start, 0]];
    order[start] = low[start] = counter++;
    sccStack.push(start);
    onStack[start] = 1;
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const [node, next] = frame;
      const out = edges[node]!;
      if (next < out.length) {
        frame[1]++;
        const child = out[next]!;
        if (order[child] === -1) {
          order[child] = low[child] = counter++;
          sccStack.push(child);
          onStack[child] = 1;
          work.push([child, 0]);
        } else if (onStack[child]) {
          low[node] = Math.min(low[node]!, order[child]!);
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]![0];
        low[parent] = Math.min(low[parent]!, low[node]!);
      }
      if (low[node] === order[node]) {
        const id = componentSize.length;
        let size = 0;
        let member: number;
        do {
          member = sccStack.pop()!;
          onStack[member] = 0;
          component[member] = id;
          size++;
        } while (member !== node);
        componentSize.push(size);
      }
    }
  }

  // components in order sinks first, so each one's successors are already judged
  const members: number[][] = componentSize.map(() => []);
  for (let node = 0; node < count; node++) members[component[node]!]!.push(node);
  const cyclic = componentSize.map((size, id) => size > 1 || members[id]!.some((node) => edges[node]!.includes(node)));
  const longest = new Array<number>(componentSize.length).fill(0);
  const reachesCycle = [...cyclic];
  for (let id = 0; id < componentSize.length; id++) {
    let below = 0;
    for (const node of members[id]!) {
      for (const child of edges[node]!) {
        const other = component[child]!;
        if (other === id) continue;
        below = Math.max(below, longest[other]!);
        if (reachesCycle[other]) reachesCycle[id] = true;
      }
    }
    longest[id] = componentSize[id]! + below;
  }
  if (longest[component[0]!]! > limits.maxDepth) return 'depth';

  // the validated tree: a $ref whose target leads into a cycle stays a $ref, any other is replaced
  const size = new Array<number>(count).fill(-1);
  const cap = limits.maxValues + 1;
  const sizeStack: [number, boolean][] = [[0, false]];
  while (sizeStack.length > 0) {
    const [node, expanded] = sizeStack.pop()!;
    if (size[node] !== -1) continue;
    const target = refTarget[node];
    const replaced = target !== undefined && !reachesCycle[component[target]!]!;
    // a replaced $ref becomes its target plus its own other keys (an "extended" $ref); one left in
    // place is an object like any other
    const parts = replaced ? edges[node]! : edges[node]!.filter((child) => child !== target);
    if (!expanded) {
      sizeStack.push([node, true]);
      for (const part of parts) if (size[part] === -1) sizeStack.push([part, false]);
      continue;
    }
    let total = replaced ? scalars[node]! - 1 : 1 + scalars[node]!;
    for (const part of parts) total = Math.min(cap, total + size[part]!);
    size[node] = total;
  }
  return size[0]! > limits.maxValues ? 'size' : undefined;
}

/**
 * How deep a schema ajv compiles may go, counting a level per object, array and `$ref` followed:
 * its compiler overflowed the stack at 300 to 400 levels, so this keeps a wide margin.
 */
export const MAX_COMPILED_SCHEMA_DEPTH = 128;

/** Keywords that make a JSON Schema's references resolve otherwise than as pointers from its root. */
const OPAQUE_KEYWORDS = ['$id', '$anchor', '$dynamicAnchor', '$recursiveAnchor', '$dynamicRef', '$recursiveRef'];

/**
 * Whether ajv's compiler, which recurses once per level of a schema and once more per `$ref` it
 * follows (a chain of 300 definitions overflowed it), could go deeper than `maxDepth` over
 * `schema`. References by pointer from the root are followed as above; a schema that resolves
 * references otherwise (`$id` below the root, anchors, dynamic or relative references) is judged
 * by its number of objects and arrays, which bounds any path through it.
 */
export function schemaDepthExceeds(schema: unknown, maxDepth: number): boolean {
  let containers = 0;
  let opaque = false;
  const stack: [unknown, boolean][] = [[schema, true]];
  while (stack.length > 0) {
    const [value, atRoot] = stack.pop()!;
    if (!isContainer(value)) continue;
    containers++;
    if (!Array.isArray(value)) {
      const record = value;
      if (OPAQUE_KEYWORDS.some((keyword) => keyword in record && !(atRoot && keyword === '$id'))) opaque = true;
      if (typeof record.$ref === 'string' && !(record.$ref === '#' || record.$ref.startsWith('#/'))) opaque = true;
    }
    for (const child of Array.isArray(value) ? value : Object.values(value)) stack.push([child, false]);
  }
  if (opaque) return containers > maxDepth;
  return resolvedProblem(schema, { maxDepth, maxValues: Number.MAX_SAFE_INTEGER }) === 'depth';
}
