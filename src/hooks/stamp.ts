/**
 * Schema-version stamping.
 *
 * Payloads pass by reference, so stamping writes the marker onto the host's
 * object instead of copying it: one property store instead of a copy of a
 * payload that may hold a whole conversation. The host built the object for
 * this emit, so the mutation is invisible in practice. A marker the host set
 * itself is kept. A frozen or otherwise non-writable payload gets a shallow
 * copy instead, because stamping must never throw into the host.
 *
 * @module
 */

import { MIDDLEWARE_SCHEMA_VERSION, TELEMETRY_SCHEMA_VERSION } from './names.ts';

type Stampable = { telemetry_schema_version?: unknown; middleware_schema_version?: unknown };

/**
 * Ensures `telemetry_schema_version`; returns the same object unless it
 * could not be written. A payload that cannot even be read (a Proxy whose
 * traps throw, a revoked Proxy, a frozen object with a throwing getter) is
 * returned as it is, unstamped: subscribers are guarded one by one, and
 * stamping must never throw into the host.
 */
export function stampObserver<P extends object>(payload: P): P & { telemetry_schema_version: string } {
  type Stamped = P & { telemetry_schema_version: string };
  const target = payload as P & Stampable;
  try {
    if (target.telemetry_schema_version === undefined) target.telemetry_schema_version = TELEMETRY_SCHEMA_VERSION;
    return target as Stamped;
  } catch {
    try {
      return { ...payload, telemetry_schema_version: TELEMETRY_SCHEMA_VERSION };
    } catch {
      return payload as Stamped;
    }
  }
}

/** Ensures both `telemetry_schema_version` and `middleware_schema_version`, on the same terms as `stampObserver`. */
export function stampMiddleware<P extends object>(
  payload: P,
): P & { telemetry_schema_version: string; middleware_schema_version: string } {
  type Stamped = P & { telemetry_schema_version: string; middleware_schema_version: string };
  const target = payload as P & Stampable;
  try {
    if (target.telemetry_schema_version === undefined) target.telemetry_schema_version = TELEMETRY_SCHEMA_VERSION;
    if (target.middleware_schema_version === undefined) target.middleware_schema_version = MIDDLEWARE_SCHEMA_VERSION;
    return target as Stamped;
  } catch {
    try {
      return {
        telemetry_schema_version: TELEMETRY_SCHEMA_VERSION,
        middleware_schema_version: MIDDLEWARE_SCHEMA_VERSION,
        ...withoutUndefinedMarkers(payload),
      } as Stamped;
    } catch {
      return payload as Stamped;
    }
  }
}

function withoutUndefinedMarkers<P extends object>(payload: P): P {
  const copy = { ...payload } as P & Stampable;
  if (copy.telemetry_schema_version === undefined) delete copy.telemetry_schema_version;
  if (copy.middleware_schema_version === undefined) delete copy.middleware_schema_version;
  return copy;
}
