/**
 * An AbortController whose AbortSignal is made when something first reads `signal`. Node makes the
 * signal (an EventTarget) on the first read of `AbortController#signal`, which cost 20-40 µs a
 * call in the tool gateway's profile, and most calls end without any code looking at it: a tool
 * that never reads its signal cannot be told to stop anyway. Aborting before the first read is
 * remembered: the signal is then made already aborted, with the same reason.
 */
export class LazyAbortController {
  private controller: AbortController | undefined;
  private abortedWith: { reason: unknown } | undefined;

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  /** The abort reason, undefined while not aborted. */
  get reason(): unknown {
    return this.abortedWith?.reason;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  /** Only the first call counts, as with AbortController. */
  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
  }
}
