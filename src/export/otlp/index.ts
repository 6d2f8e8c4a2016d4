/**
 * OTLP export from relay events (backend-neutral): the span and log mapping
 * for `full`, `gen_ai` and `openinference`, and the delivery to each
 * destination through the OpenTelemetry JS exporters.
 *
 * @module
 */

export { otlpHubOf, existingOtlpHub } from './hub.ts';
