/**
 * Plain copies of hook payloads, for when a payload cannot be handled where
 * it is:
 *
 * - a hook queued while the backend or plugins.toml starts is replayed
 *   later, and the host may have changed its object by then;
 * - a payload whose getter or Proxy trap throws when a handler reads it
 *   would otherwise cost the whole event.
 *
 * Top-level fields are read the way the handlers read them: own enumerable
 * fields, plus the getters of a class-shaped payload (its prototype chain,
 * short of `Object.prototype`), and not through a top-level `toJSON`, which
 * may hide the ids. A getter's field is copied as a field the handlers read
 * by name but not as data (non-enumerable): the relay's copy of the live
 * payload keeps its own fields only, so a hook queued while the backend
 * starts records the data it would have recorded live. A recorder that
 * writes the copy out asks for them as data (`derivedAsData`). Each value
 * goes through `toJson` (media bytes left out); a field that throws becomes
 * `"[Unserializable: <message>]"`. Never throws.
 *
 * @module
 */

import { defineKey, MEDIA_LEFT_OUT, toJson } from './json.ts';
import { errorMessage } from './error-text.ts';
import { withoutSensitiveHeaders } from './credential-headers.ts';
/** A hook payload as the plugin reads it: any object, fields looked up by name. */
export type LoosePayload = Record<string, unknown>;

const snapshots = new WeakSet<object>();

/** Whether `payload` is already a copy made by `snapshotPayload` (a retry from it would read the same). */
export function isSnapshot(payload: unknown): boolean {
  return typeof payload === 'object' && payload !== null && snapshots.has(payload);
}

/** Options of `snapshotPayload`. */
export interface SnapshotOptions {
  /** Copy the fields the payload's prototype getters derive as data (enumerable), not only for reading by name. */
  derivedAsData?: boolean;
  /** Drop credential headers (`shared/credential-headers.ts`), for a copy written out as it is. */
  withoutCredentialHeaders?: boolean;
}

const MEDIA_AND_CREDENTIALS_LEFT_OUT = Object.freeze({ ...MEDIA_LEFT_OUT, withoutCredentialHeaders: true } as const);

/** A plain JSON copy of `payload`'s top-level fields (an empty one for anything that is not an object). */
export function snapshotPayload(payload: unknown, options: SnapshotOptions = {}): LoosePayload {
  const copy: LoosePayload = {};
  snapshots.add(copy);
  if ((typeof payload !== 'object' && typeof payload !== 'function') || payload === null) return copy;
  const { own, derived } = fieldNames(payload);
  const credentials = options.withoutCredentialHeaders === true;
  for (const key of [...own, ...derived]) {
    let value: unknown;
    try {
      value = (payload as Record<string, unknown>)[key];
    } catch (error) {
      copyField(copy, key, `[Unserializable: ${errorMessage(error)}]`, own.has(key) || options.derivedAsData === true);
      continue;
    }
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    // A field pointing back at the payload is a cycle through the root, which each toJson call cannot see.
    // Media left out now, as the relay's copy will: made plain JSON, a Buffer is numbers the relay cannot tell from data.
    // A top-level `headers` field is cleaned here: the copy of each field sees only what is under it.
    if (credentials && key.toLowerCase() === 'headers') value = withoutSensitiveHeaders({ headers: value }).headers;
    const copied = value === payload ? '[Circular]' : toJson(value, credentials ? MEDIA_AND_CREDENTIALS_LEFT_OUT : MEDIA_LEFT_OUT);
    copyField(copy, key, copied, own.has(key) || options.derivedAsData === true);
  }
  return copy;
}

function copyField(copy: LoosePayload, key: string, value: unknown, asData: boolean): void {
  if (asData) defineKey(copy, key, value);
  else Object.defineProperty(copy, key, { value, writable: true, configurable: true, enumerable: false });
}

/** The payload's own enumerable field names, and the names its prototype getters derive that are not own. */
function fieldNames(payload: object): { own: Set<string>; derived: Set<string> } {
  const own = new Set<string>();
  const derived = new Set<string>();
  try {
    for (const key of Object.keys(payload)) own.add(key);
  } catch {
    return { own, derived };
  }
  try {
    for (let proto = Object.getPrototypeOf(payload); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      for (const key of Object.getOwnPropertyNames(proto)) {
        if (key === 'constructor' || key === '__proto__' || own.has(key)) continue;
        if (typeof Object.getOwnPropertyDescriptor(proto, key)?.get === 'function') derived.add(key);
      }
    }
  } catch {
    // A hostile prototype chain: the own fields are what there is.
  }
  return { own, derived };
}
