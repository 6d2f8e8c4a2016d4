// A provider's answer that takes time, as a real API's does, for the tests
// that check WHEN a trajectory says things happened: a JSON body held before
// it is sent; a server-sent-event stream whose first event waits for the
// model's time to first token and whose others are spread until the last. Served by loopbackApi
// (doc-snippets.ts), which writes each chunk as the body yields it. Every
// time is read on the clock the plugin stamps its events with, so the two
// compare directly.
import { nowMicros } from '../../src/shared/clock.ts';

/** Unix milliseconds on the plugin's own clock (src/shared/clock.ts). */
export const wallMs = (): number => nowMicros() / 1000;

/** When the server did what, for one request (Unix ms, `wallMs`). */
export interface Served {
  readonly path: string;
  readonly stream: boolean;
  /** The request's whole body had reached the server. */
  readonly receivedMs: number;
  /** The first and the last chunk of the answer were handed to the socket. */
  firstByteMs?: number;
  lastByteMs?: number;
}

const sleepUntil = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - wallMs())));

/** When an answer's bytes go, counted from the request's arrival (ms). */
export interface Pace {
  /** A stream's first event (default: at once). */
  firstByteMs?: number;
  /** The last byte; a JSON body goes whole then. */
  lastByteMs: number;
}

/** `reply`, paced as described above; `served` gets the times. */
export async function paced(reply: Response, pace: Pace, served: Served): Promise<Response> {
  const start = served.receivedMs;
  const first = pace.firstByteMs ?? 0;
  const text = await reply.text();
  const init = { status: reply.status, headers: reply.headers };
  if (!(reply.headers.get('content-type') ?? '').includes('text/event-stream')) {
    await sleepUntil(start + pace.lastByteMs);
    served.firstByteMs = served.lastByteMs = wallMs();
    return new Response(text, init);
  }
  // One chunk per event (an event ends with a blank line), each due at its share of the hold.
  const events = text.split(/(?<=\n\n)/).filter((event) => event !== '');
  const encoder = new TextEncoder();
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await sleepUntil(start + first + ((pace.lastByteMs - first) * next) / Math.max(1, events.length - 1));
      controller.enqueue(encoder.encode(events[next]!));
      if (next === 0) served.firstByteMs = wallMs();
      next += 1;
      if (next === events.length) {
        served.lastByteMs = wallMs();
        controller.close();
      }
    },
  });
  return new Response(body, init);
}
