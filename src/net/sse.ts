/**
 * The one reader of server-sent events (the codeagent stream, a remote MCP server's Streamable
 * HTTP answers, the CLI's run status stream), parsed by eventsource-parser (the WHATWG "event
 * stream interpretation": CRLF, LF or CR line ends, comments, multi-line data, ids with NUL
 * ignored, no event for a block without data). This adapter gives the readers what they need
 * on top: events answered per chunk rather than through a callback, whether an event's own block
 * carried an `id` (a reader that resumes must know which events the server can resume after), the
 * sticky last event id, and two details of decoded text the library leaves to its caller: a BOM
 * already decoded to U+FEFF, and a CR that ends a chunk (the library waits for the next chunk to
 * see whether an LF follows; here it ends the line at once, so a final event is not held back).
 */
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';

export interface SseEvent {
  /** the id set by this event's own block, if any */
  id?: string;
  /** the last event id in force when the event was dispatched (sticky across events, as EventSource keeps it) */
  lastEventId: string;
  event: string;
  data: string;
}

export class SseParser {
  private readonly parser: EventSourceParser;
  private started = false;
  private lastEventId = '';
  /** a CR ended the previous chunk and was fed as CRLF: an LF starting this one belongs to it */
  private pendingCr = false;
  private completed: SseEvent[] = [];
  /** the server's `retry` advice in ms, when it gave one */
  retryMs: number | undefined;

  constructor() {
    this.parser = createParser({
      onEvent: (message) => this.completed.push(this.event(message)),
      onRetry: (ms) => {
        this.retryMs = ms;
      },
    });
  }

  /** Feeds decoded text; answers the events completed by it. */
  push(text: string): SseEvent[] {
    let chunk = text;
    if (!this.started && chunk.length > 0) {
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    if (this.pendingCr && chunk.startsWith('\n')) chunk = chunk.slice(1);
    if (chunk.length > 0) {
      this.pendingCr = chunk.endsWith('\r');
      this.parser.feed(this.pendingCr ? `${chunk}\n` : chunk);
    }
    const events = this.completed;
    this.completed = [];
    return events;
  }

  /**
   * The end of a stream from a peer that may close it right after its last data line (a remote
   * MCP server): an event whose blank line never came is answered all the same. Then as end().
   */
  finish(): SseEvent[] {
    const events = this.push('\n\n');
    this.end();
    return events;
  }

  /**
   * The end of the stream: an event whose blank line never came is dropped, as the spec says; a
   * cut connection therefore never yields half an event.
   */
  end(): void {
    this.parser.reset();
    this.pendingCr = false;
    this.completed = [];
  }

  private event(message: EventSourceMessage): SseEvent {
    if (message.id !== undefined) this.lastEventId = message.id;
    return {
      ...(message.id === undefined ? {} : { id: message.id }),
      lastEventId: this.lastEventId, event: message.event ?? 'message', data: message.data,
    };
  }
}
