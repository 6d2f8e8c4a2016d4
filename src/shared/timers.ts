/**
 * Timers the library sets: never longer than a timer can be, and never
 * keeping a finished host alive unless the caller is awaiting them.
 *
 * `setTimeout` takes a 32-bit signed delay: 2^31 ms or more (a
 * `timeoutMs` or `timeout_millis` of a month, `Infinity` from a
 * computation) fires after 1 ms instead, on Node, Bun and Deno alike. Every
 * configured delay goes through `timerDelay`, so a huge one means "a very
 * long time", as the user meant.
 *
 * @module
 */

/** The longest delay a timer takes (about 24.8 days). */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** `ms` as a timer can take it: at least 0, at most `MAX_TIMER_DELAY_MS`, 0 for NaN. */
export function timerDelay(ms: number): number {
  if (!(ms > 0)) return 0;
  return ms > MAX_TIMER_DELAY_MS ? MAX_TIMER_DELAY_MS : ms;
}

/** Lets the process exit while only this timer is pending (Node and Bun timers are objects; Deno's are numbers). */
export function unrefTimer<H>(handle: H): H {
  if (typeof handle === 'object' && handle !== null) {
    (handle as { unref?: () => void }).unref?.();
  } else if (typeof handle === 'number') {
    const deno = (globalThis as { Deno?: { unrefTimer?: (id: number) => void } }).Deno;
    deno?.unrefTimer?.(handle);
  }
  return handle;
}

/** Runs `task` after `ms` (clamped); an unref'd timer unless `ref` is set (someone awaits it). */
export function after(ms: number, task: () => void, options: { ref?: boolean } = {}): ReturnType<typeof setTimeout> {
  const timer = setTimeout(task, timerDelay(ms));
  return options.ref === true ? timer : unrefTimer(timer);
}

/**
 * Waits `ms` (clamped), or until `signal` fires. Unref'd: a wait alone never
 * keeps the host alive (whoever must wait for it awaits something that is
 * referenced, such as a bounded shutdown).
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted === true || !(ms > 0)) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = after(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
