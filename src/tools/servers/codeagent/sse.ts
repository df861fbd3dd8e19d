/**
 * A server-sent events parser after the WHATWG HTML "event stream interpretation": lines end in
 * CRLF, LF or CR (also when a CR and its LF arrive in different chunks); `:` starts a comment; a
 * field without a colon has an empty value; one space after the colon is dropped; `data` lines are
 * joined with LF; an `id` containing NUL is ignored; a blank line dispatches the event, unless it
 * has no data. Each event says whether its own block carried an `id` field, because a reader that
 * resumes must know which events the server can resume after.
 */

export interface SseEvent {
  /** the id set by this event's own block, if any */
  id?: string;
  /** the last event id in force when the event was dispatched (sticky across events, as EventSource keeps it) */
  lastEventId: string;
  event: string;
  data: string;
}

export class SseParser {
  private buffer = '';
  private started = false;
  private data: string[] = [];
  private eventType = '';
  private blockId: string | undefined;
  private lastEventId = '';
  /** a CR ended the previous chunk: an LF starting this one belongs to it */
  private pendingCr = false;
  /** the server's `retry` advice in ms, when it gave one */
  retryMs: number | undefined;

  /** Feeds decoded text; answers the events completed by it. */
  push(text: string): SseEvent[] {
    let chunk = text;
    if (!this.started && chunk.length > 0) {
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    if (this.pendingCr && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.pendingCr = false;
    this.buffer += chunk;
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i);
      if (c !== 0x0a && c !== 0x0d) continue;
      const line = this.buffer.slice(start, i);
      if (c === 0x0d) {
        if (i + 1 < this.buffer.length) {
          if (this.buffer.charCodeAt(i + 1) === 0x0a) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /**
   * The end of the stream: an event whose blank line never came is dropped, as the spec says; a
   * cut connection therefore never yields half an event.
   */
  end(): void {
    this.buffer = '';
    this.data = [];
    this.eventType = '';
    this.blockId = undefined;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) {
          this.lastEventId = value;
          this.blockId = value;
        }
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break;
    }
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const hadData = this.data.length > 0;
    const event: SseEvent = {
      ...(this.blockId === undefined ? {} : { id: this.blockId }),
      lastEventId: this.lastEventId, event: this.eventType || 'message', data: this.data.join('\n'),
    };
    this.data = [];
    this.eventType = '';
    this.blockId = undefined;
    return hadData ? event : undefined;
  }
}
