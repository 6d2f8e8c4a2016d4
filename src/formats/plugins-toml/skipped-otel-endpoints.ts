/**
 * The OpenTelemetry endpoints of a document taken out before a backend sees
 * it, when the memory relay's reading skipped them
 * (`observability.otel_endpoint_skipped`: a `header_env` variable unset or
 * blank, a batch size of 0, an endpoint that could never send, a trace
 * endpoint on plain `http://` off this machine). Native
 * rejects the whole document for most of these, so an operator who copied
 * the Collector example and had not set `OTLP_AUTH` lost the ATOF file and
 * the trajectories too; the stream sinks and uploads were already left out
 * this way (`withoutDestinations` in `sinks.ts`).
 *
 * @module
 */

import type { Json, JsonObject } from '../../shared/json.ts';
import { isJsonObject } from '../../shared/json.ts';
import type { ConfigDiagnostic } from './diagnostic.ts';
import { sendsOnlyLogs } from './opentelemetry.ts';

export const OTEL_ENDPOINT_SKIPPED = 'observability.otel_endpoint_skipped';

/**
 * `document` without the endpoints `skipped` names (fields `endpoints[i]...`
 * and `logs.endpoints[i]...` of the enabled observability component). A logs
 * (or metrics) table left with no endpoint (its own, or the trace endpoints
 * it derives from) is turned off, and the OpenTelemetry section when no
 * endpoint is left, as both backends refuse an enabled one with none. Returns the document itself when there is nothing to take out.
 */
export function withoutOtelEndpoints(document: JsonObject, skipped: readonly ConfigDiagnostic[]): JsonObject {
  const components = Array.isArray(document.components) ? document.components : [];
  const index = components.findIndex((c) => isJsonObject(c) && c.kind === 'observability' && c.enabled !== false);
  const component = components[index];
  if (!isJsonObject(component) || !isJsonObject(component.config) || !isJsonObject(component.config.opentelemetry)) return document;
  const drop = { traces: new Set<number>(), logs: new Set<number>() };
  const otelIn = component.config.opentelemetry;
  const traceEndpoints = Array.isArray(otelIn.endpoints) ? otelIn.endpoints : [];
  for (const diagnostic of skipped) {
    if (diagnostic.code !== OTEL_ENDPOINT_SKIPPED) continue;
    const match = /^(logs\.)?endpoints\[(\d+)\]/.exec(diagnostic.field ?? '');
    if (match === null) continue;
    const at = Number(match[2]);
    // Skipped for its plain http:// alone, a trace endpoint logs derive from stays: native sends those logs.
    const traceEndpoint = traceEndpoints[at];
    if (diagnostic.field === `endpoints[${at}].endpoint` && isJsonObject(traceEndpoint) && sendsOnlyLogs(otelIn, component.config.version, traceEndpoint)) continue;
    drop[match[1] === undefined ? 'traces' : 'logs'].add(at);
  }
  if (drop.traces.size === 0 && drop.logs.size === 0) return document;
  const otel: JsonObject = { ...component.config.opentelemetry };
  const traces = Array.isArray(otel.endpoints) ? otel.endpoints.filter((_, i) => !drop.traces.has(i)) : undefined;
  if (traces !== undefined) otel.endpoints = traces;
  if (isJsonObject(otel.logs) && Array.isArray(otel.logs.endpoints)) {
    const logEndpoints = otel.logs.endpoints.filter((_, i) => !drop.logs.has(i));
    otel.logs = { ...otel.logs, endpoints: logEndpoints, ...(logEndpoints.length === 0 ? { enabled: false } : {}) };
  }
  const tracesLeft = (traces?.length ?? 0) > 0;
  // Logs and metrics without endpoints of their own go to the trace endpoints: with none left, they are off too (else refused).
  for (const signal of ['logs', 'metrics'] as const) {
    const table = otel[signal];
    if (!tracesLeft && isJsonObject(table) && !(Array.isArray(table.endpoints) && table.endpoints.length > 0)) otel[signal] = { ...table, enabled: false };
  }
  const signalOn = (table: Json | undefined) => isJsonObject(table) && table.enabled === true;
  if (!tracesLeft && !signalOn(otel.logs) && !signalOn(otel.metrics)) otel.enabled = false;
  const copy = [...components];
  copy[index] = { ...component, config: { ...component.config, opentelemetry: otel } };
  return { ...document, components: copy };
}
