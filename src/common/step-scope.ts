/**
 * Where a step sits inside lists, as interpolation and a step's activity see it. Its own module,
 * below run-types.ts: interpolation needs these shapes, and run-types reaches the definition, whose
 * validation reaches back to the expressions that interpolate (a circle of imports).
 */

/**
 * A forEach item a step sits in, however deep (branch and parallel lists inside the item see it
 * too), and the item of the forEach around that forEach, if any (`outer`).
 */
export interface ItemScope {
  item: unknown;
  /** the item's position in the array, from 0 */
  index: number;
  outer?: ItemScope;
}

/** Where a step sits inside lists: the innermost list's address prefix, and the innermost forEach item. */
export interface StepScope {
  /** `3.2` for the steps of item 2 of step 3 (`local.1` is then `3.2.1`) */
  prefix: string;
  item?: unknown;
  /** the item's position in the array, from 0 */
  index?: number;
  /** in a forEach nested in a forEach item: the enclosing forEach's item (`outer.item`, `outer.index`, `outer.outer`…) */
  outer?: ItemScope;
}
