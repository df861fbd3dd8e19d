/**
 * One description per route (docs/architecture.md): a route module lists its operations
 * (method, path, the OpenAPI entry with its zod schemas, the permission a member's role needs, the
 * audit action of a change) and registers each route from its entry with `mount`. The OpenAPI
 * document, the audit action table and the permission table are built from the same lists
 * (operations.ts), and the management guard (auth.ts) and the audit middleware read the entry the
 * matched route was mounted with: a path, a permission or an action cannot drift apart.
 */
import type { Layer, RouterMiddleware } from '@koa/router';
import type { ZodOpenApiOperationObject } from 'zod-openapi';
import type { ActionSpec } from '../audit/actions';
import type { Permission } from '../people/roles';
import type { GatewayRouter, GatewayState } from './state';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * A route: how the router matches it, what the document says of it, what the guard and the audit
 * trail need. A route module keeps its entries in one object (`… satisfies Operations`) whose keys
 * are the operationIds.
 */
export interface Operation extends Omit<ZodOpenApiOperationObject, 'operationId'> {
  method: HttpMethod;
  /** the whole path as @koa/router writes it, prefix included (`/api/v1/workflows/:id`) */
  path: string;
  /**
   * The management API (requireAdmin): the permission the caller's role needs (src/people/roles.ts).
   * Absent on such a route: a read needs `read`, a change `org.manage` (a route left out is closed).
   * The document adds the 403 a role can be refused with.
   */
  permission?: Permission;
  /** A management change: its audit record (docs/audit.md); the middleware records it whatever the outcome. */
  audit?: ActionSpec;
}

/** An audit record of a change to the thing a path parameter names (`answerFields`: see ActionSpec). */
export const on = (action: string, type: string, param: string, answerFields?: string[]): ActionSpec => ({ action, target: { type, id: { param } }, ...(answerFields ? { answerFields } : {}) });
/** An audit record of a creation: the target is the `id` of the thing in the answer. */
export const creates = (action: string, type: string, answerFields: string[]): ActionSpec => ({ action, target: { type, id: { answer: 'id' } }, answerFields });

/** A route module's operations by operationId. */
export type Operations = Readonly<Record<string, Operation>>;

type Handler = RouterMiddleware<GatewayState>;

/** The entry each route layer was mounted with (the layers are the router's own objects, kept as long as it is). */
const MOUNTED = new WeakMap<object, Operation>();

/**
 * Registers `op` on `router` (as router.get/post/… would: GET answers HEAD too) with its handlers.
 * The router's prefix is the start of op.path; any other path is a programming error.
 */
export function mount(router: GatewayRouter, op: Operation, ...handlers: Handler[]): void {
  const prefix = router.opts.prefix ?? '';
  if (!op.path.startsWith(prefix)) throw new Error(`${op.method.toUpperCase()} ${op.path} is not under the router's prefix ${prefix}`);
  // one path: register answers the new layer
  MOUNTED.set(router.register(op.path.slice(prefix.length) || '/', [op.method], handlers, { pathAsRegExp: false }), op);
}

/** A router's layer, as ctx.matched lists them (@koa/router exports the class only as a type). */
function isLayer(value: unknown): value is Layer<GatewayState> {
  return typeof value === 'object' && value !== null && Array.isArray(Reflect.get(value, 'methods')) && 'path' in value;
}

/** The route layer a request matched: the last one for its method (HEAD as GET), as @koa/router's _matchedRoute names it. */
export function matchedLayer(ctx: object): Layer<GatewayState> | undefined {
  const method = Reflect.get(ctx, 'method') === 'HEAD' ? 'GET' : String(Reflect.get(ctx, 'method'));
  const matched: unknown = Reflect.get(ctx, 'matched');
  if (!Array.isArray(matched)) return undefined;
  const layers = matched.filter(isLayer);
  return layers.reverse().find((layer) => layer.methods.includes(method) && typeof layer.path === 'string');
}

/** The entry the request's route was mounted with; undefined for a route registered without one. */
export function operationOf(ctx: object): Operation | undefined {
  const layer = matchedLayer(ctx);
  return layer ? MOUNTED.get(layer) : undefined;
}

/** The permission a management request needs: its entry's, else `read` for a read and `org.manage` for a change. */
export function permissionOf(op: Pick<Operation, 'permission'> | undefined, method: string): Permission {
  return op?.permission ?? (method === 'GET' || method === 'HEAD' ? 'read' : 'org.manage');
}
