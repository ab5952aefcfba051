import type { ServerResponse } from 'node:http';
import type { ExecutionResult, FormattedExecutionResult } from 'graphql';

/**
 * The messages of the graphql-sse protocol in distinct connections mode, as its own handler writes
 * them: a comment first (some browsers open the stream only once a byte of its body has come) and
 * every KEEP_ALIVE_MS, one `next` event per result, then `complete`.
 */
export const COMMENT = ':\n\n';
export const COMPLETE = 'event: complete\ndata:\n\n';
export const KEEP_ALIVE_MS = 12_000;

/** The response headers of an accepted stream. */
export const STREAM_HEADERS = {
  connection: 'keep-alive',
  'cache-control': 'no-cache',
  'content-type': 'text/event-stream; charset=utf-8',
  // Proxies that buffer responses (nginx) would hold the events back.
  'x-accel-buffering': 'no',
} as const;

export function nextMessage(result: FormattedExecutionResult): string {
  return `event: next\ndata: ${JSON.stringify(result)}\n\n`;
}

/**
 * Each result's `next` message, formatted and serialized once however many streams send it. The
 * subscribers of one event that share its result (subscription/deliver: the same document, the
 * same values of the variables it uses, the same role) receive the same object, so they share its
 * message too; a result is never shared beyond them, and neither is its message.
 */
export class SharedMessages {
  private readonly messages = new WeakMap<ExecutionResult, string>();

  constructor(private readonly format: (result: ExecutionResult) => FormattedExecutionResult) {}

  of(result: ExecutionResult): string {
    let message = this.messages.get(result);
    if (message === undefined) this.messages.set(result, (message = nextMessage(this.format(result))));
    return message;
  }
}

/** What one stream's writer is told of its client. */
export interface StreamSink {
  res: ServerResponse;
  /** Before each event: false when the client reads too slowly (it has been cut off). */
  keepsUp(): boolean;
}

/**
 * Writes `source` as one stream's events until either side ends: each result as its shared `next`
 * message, then `complete` and the end of the response once the source is done. A client that
 * goes away ends the source (the stream's scope returns it), and so the loop.
 */
export async function writeEvents(source: AsyncIterable<ExecutionResult>, sink: StreamSink, messages: SharedMessages): Promise<void> {
  const { res } = sink;
  res.write(COMMENT);
  const keepAlive = setInterval(() => res.write(COMMENT), KEEP_ALIVE_MS);
  try {
    for await (const result of source) {
      if (res.writableEnded || res.destroyed || !sink.keepsUp()) return;
      res.write(messages.of(result));
    }
    if (!res.writableEnded && !res.destroyed) res.end(COMPLETE);
  } finally {
    clearInterval(keepAlive);
  }
}
