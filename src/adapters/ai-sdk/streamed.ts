/**
 * What a streamed model call's attempt has delivered so far, read from the
 * provider package's stream parts as they pass to the SDK: the text and
 * reasoning the program has been shown, the response's id and model, and an
 * `error` part the provider sent mid-answer. The SDK tells telemetry neither
 * (a stopped stream's abort event carries the finished steps only, and an
 * `error` part reaches the program's `onError`, not telemetry), so a call
 * cut short would be recorded without the answer the user saw, and a call a
 * provider's error event ended without its error. Both of the adapter's
 * paths read a stream with it: `instrumentAiSdk`'s integration (the stream
 * the provider package returns to the SDK) and `aiSdkMiddleware` (the one
 * the wrapped model returns), so a cut or failed stream is recorded alike.
 *
 * @module
 */

import type { ResponseParts } from '../core/run.ts';
import { deliveredAnswer } from '../core/delivered.ts';
import { isRecord } from '../../shared/record.ts';
import { nonEmptyString } from '../../shared/text.ts';

export class StreamedSoFar {
  #text = '';
  #reasoning = '';
  #id: string | undefined;
  #model: string | undefined;
  #error: { readonly value: unknown } | undefined;

  /** One part of the provider's stream (LanguageModelV3/V4 stream parts: `text-delta`'s `delta`, `response-metadata`, `error`). */
  note(part: unknown): void {
    if (!isRecord(part)) return;
    switch (part.type) {
      case 'text-delta':
        if (typeof part.delta === 'string') this.#text += part.delta;
        break;
      case 'reasoning-delta':
        if (typeof part.delta === 'string') this.#reasoning += part.delta;
        break;
      case 'response-metadata':
        this.#id = nonEmptyString(part.id) ?? this.#id;
        this.#model = nonEmptyString(part.modelId) ?? this.#model;
        break;
      case 'error':
        // The first one: a package that sends a second says the same failure again.
        this.#error ??= { value: streamErrorOf(part.error) };
        break;
    }
  }

  /** The error the provider sent down the stream, as the SDK hands it to the program; `undefined` when none came. */
  get error(): unknown {
    return this.#error?.value;
  }

  /** The error of an attempt the SDK gave up to retry (`streamRetries`): a retryable one, whatever the provider said. */
  get retriedError(): unknown {
    const error = this.#error?.value;
    return error instanceof ProviderStreamError && error.isRetryable === undefined ? new ProviderStreamError(error.message, { statusCode: error.statusCode, isRetryable: true }) : error;
  }

  get failed(): boolean {
    return this.#error !== undefined;
  }

  /** The text the stream has delivered so far. */
  get text(): string {
    return this.#text;
  }

  /** The reasoning the stream has delivered so far. */
  get reasoning(): string {
    return this.#reasoning;
  }

  /** The answer the stream delivered before it stopped (`deliveredAnswer`); `undefined` when no text or reasoning came. */
  delivered(): ResponseParts | undefined {
    return deliveredAnswer({ text: this.#text, reasoning: this.#reasoning, model: this.#model, id: this.#id });
  }
}

/**
 * A provider's error event as the program's `onError` gets it: the SDK hands on an Error as it is, and makes a
 * provider's raw error record (a 3.x provider package, or Gemini's, sends the event's JSON: OpenAI's `{type: 'error',
 * code, message}`, Anthropic's `{type: 'overloaded_error', message}`, Gemini's `{error: {code: 503, message}}`) an
 * `AI_StreamProviderError` with its message, and the HTTP status and retryability the record gives.
 */
export function streamErrorOf(error: unknown): unknown {
  if (error instanceof Error || !isRecord(error)) return error;
  const details = isRecord(error.error) ? error.error : isRecord(error.response) && isRecord(error.response.error) ? error.response.error : error;
  const message = nonEmptyString(details.message) ?? nonEmptyString(error.message);
  if (message === undefined) return error;
  const statusCode = [details.statusCode, details.status, details.code, error.statusCode, error.status, error.code].find(isHttpStatus) as number | undefined;
  const isRetryable = [details.isRetryable, error.isRetryable].find((value) => typeof value === 'boolean') as boolean | undefined;
  return new ProviderStreamError(message, { statusCode, isRetryable });
}

const isHttpStatus = (value: unknown): boolean => typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599;

/** An error event a provider sent mid-stream, under the name the SDK gives it (`StreamProviderError`). */
class ProviderStreamError extends Error {
  override name = 'AI_StreamProviderError';
  readonly statusCode: number | undefined;
  readonly isRetryable: boolean | undefined;
  constructor(message: string, options: { statusCode: number | undefined; isRetryable: boolean | undefined }) {
    super(message);
    this.statusCode = options.statusCode;
    this.isRetryable = options.isRetryable;
  }
}
