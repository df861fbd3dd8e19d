/**
 * How many bytes of large request bodies (tool-gateway bodies over the default 4 MiB: a codeagent
 * call with five 15 MB images is about 100 MB) one process holds at once. Each such request takes
 * its share before its body is read and gives it back once it has been answered: its parsed
 * arguments live that long. Without a bound, a handful of concurrent calls could exhaust the heap.
 */
export class LargeBodyBudget {
  private held = 0;

  constructor(readonly bytes: number) {}

  take(bytes: number): boolean {
    if (this.held + bytes > this.bytes) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}
