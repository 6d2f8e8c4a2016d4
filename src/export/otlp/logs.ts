/**
 * OTLP logs (config version 4): one log record per mark, as native sends
 * them: INFO (or the mark's `nemo_relay.log.severity`), the mark data as the
 * body, the mark's identity and metadata as attributes, and the trace and
 * parent span it belongs to.
 *
 * @module
 */

import type { AtofEvent } from '../../formats/atof/types.ts';
import { objectOf } from './attributes.ts';
import { hrNow, hrTimeOf, spanIdOf, traceIdOf } from './ids.ts';
import type { OtlpLogRecord, OtlpResource, OtlpScope } from './model.ts';
import type { TreeRoot } from './assembler.ts';

const SEVERITY: Record<string, [number, string]> = {
  trace: [1, 'TRACE'],
  debug: [5, 'DEBUG'],
  info: [9, 'INFO'],
  warn: [13, 'WARN'],
  warning: [13, 'WARN'],
  error: [17, 'ERROR'],
};

/** The log record for a mark, or null for any other event (or a mark below `minimumSeverity`). */
export function logRecordOf(
  event: AtofEvent,
  top: TreeRoot | null,
  resource: OtlpResource,
  scope: OtlpScope,
  minimumSeverity: number,
): OtlpLogRecord | null {
  if (event.kind !== 'mark') return null;
  const time = hrTimeOf(event.timestamp);
  if (time === null) return null;
  const metadata = objectOf(event.metadata);
  const level = typeof metadata?.['nemo_relay.log.severity'] === 'string' ? metadata['nemo_relay.log.severity'].toLowerCase() : 'info';
  const [severityNumber, severityText] = SEVERITY[level] ?? SEVERITY.info!;
  if (severityNumber < minimumSeverity) return null;
  const root = event.propagation_root_uuid ?? top?.uuid;
  const attributes: Record<string, unknown> = {
    'nemo_relay.atof.version': event.atof_version,
    'nemo_relay.mark.name': event.name,
    'nemo_relay.mark.uuid': event.uuid,
  };
  if (root !== undefined) attributes['nemo_relay.session.instance_id'] = root;
  if (event.parent_uuid !== null) attributes['nemo_relay.mark.parent_uuid'] = event.parent_uuid;
  if (event.metadata !== null) attributes['nemo_relay.mark.metadata'] = withNullsAsText(event.metadata);
  return {
    hrTime: time,
    hrTimeObserved: hrNow(),
    severityNumber,
    severityText,
    body: withNullsAsText(event.data),
    attributes,
    droppedAttributesCount: 0,
    spanContext:
      root !== undefined && event.parent_uuid !== null
        ? { traceId: traceIdOf(root), spanId: spanIdOf(event.parent_uuid), traceFlags: 1 }
        : undefined,
    resource,
    instrumentationScope: scope,
  };
}

/** Native sends a null inside a log body as the string "null". */
function withNullsAsText(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.map(withNullsAsText);
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) out[key] = withNullsAsText(inner);
    return out;
  }
  return value;
}
