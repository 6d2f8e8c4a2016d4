// A provider's answer that takes time, as a real API's does, for the tests
// that check WHEN a trajectory says things happened: a JSON body held before
// it is sent; a server-sent-event stream whose first event waits for the
// model's time to first token and whose others are spread until the last.
// Served by loopbackApi (doc-snippets.ts), which writes each chunk as the
// body yields it and says when each request came and its last byte went.
// Every time is read on the clock the plugin stamps its events with
// (`wallMs`), so the two compare directly.
import { wallMs } from './doc-snippets.ts';

const sleepUntil = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - wallMs())));

/** When an answer's bytes go, counted from the request's arrival (ms). */
export interface Pace {
  /** A stream's first event (default: at once). */
  firstByteMs?: number;
  /** The last byte; a JSON body goes whole then. */
  lastByteMs: number;
}

/** `reply`, paced as described above, from `fromMs` (the request's arrival: by default, now). */
export async function paced(reply: Response, pace: Pace, fromMs = wallMs()): Promise<Response> {
  const first = pace.firstByteMs ?? 0;
  const text = await reply.text();
  const init = { status: reply.status, headers: reply.headers };
  if (!(reply.headers.get('content-type') ?? '').includes('text/event-stream')) {
    await sleepUntil(fromMs + pace.lastByteMs);
    return new Response(text, init);
  }
  // One chunk per event (an event ends with a blank line), each due at its share of the hold.
  const events = text.split(/(?<=\n\n)/).filter((event) => event !== '');
  const encoder = new TextEncoder();
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await sleepUntil(fromMs + first + ((pace.lastByteMs - first) * next) / Math.max(1, events.length - 1));
      controller.enqueue(encoder.encode(events[next]!));
      next += 1;
      if (next === events.length) controller.close();
    },
  });
  return new Response(body, init);
}
