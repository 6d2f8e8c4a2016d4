/**
 * What each ATOF stream transport provides to the sink that queues for it.
 *
 * @module
 */

export interface StreamTransportImpl {
  /** Delivers one serialized event; throws a `DeliveryError` when it did not go out. */
  send(line: string, signal: AbortSignal): Promise<void>;
  /** Ends the connection, if any, within `timeoutMs`. Never throws. */
  close(timeoutMs: number): Promise<void>;
  /** Tears the connection down now, without waiting for anything; `reason` says why (the process exited). Never throws. */
  destroy(reason?: string): void;
}
