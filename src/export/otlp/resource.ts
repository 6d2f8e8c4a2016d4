/**
 * The resource and instrumentation scope of one destination, as native
 * builds them: `service.*` and every `resource_attributes` entry, plus the
 * `telemetry.sdk.*` triple (ours says which SDK sent it).
 *
 * @module
 */

import type { OtlpResource, OtlpScope } from './model.ts';

export interface ResourceSettings {
  serviceName: string;
  serviceNamespace: string | undefined;
  serviceVersion: string | undefined;
  resourceAttributes: Record<string, string>;
  instrumentationScope: string;
}

/** The `telemetry.sdk.version` sent: the OpenTelemetry JS exporter line used. */
const SDK_VERSION = '0.223';

export function resourceOf(settings: ResourceSettings): OtlpResource {
  const attributes: Record<string, string> = {
    'service.name': settings.serviceName,
    'telemetry.sdk.name': 'opentelemetry',
    'telemetry.sdk.language': 'nodejs',
    'telemetry.sdk.version': SDK_VERSION,
  };
  if (settings.serviceNamespace !== undefined) attributes['service.namespace'] = settings.serviceNamespace;
  if (settings.serviceVersion !== undefined) attributes['service.version'] = settings.serviceVersion;
  Object.assign(attributes, settings.resourceAttributes);
  return { attributes };
}

export function scopeOf(settings: ResourceSettings): OtlpScope {
  return { name: settings.instrumentationScope };
}
