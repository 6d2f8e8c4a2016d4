/**
 * Native's `pii_redaction` component applied to plain values, through its
 * own API (no plugin, no files): the values ride in mark payloads, native
 * sanitizes them, a subscriber reads them back. Used to compare the
 * memory relay's redaction engine with native's, value by value.
 */

import { createRequire } from 'node:module';
import type { Json, JsonObject } from '../../src/shared/json.ts';

interface Lib {
  initialize(config: unknown, toml?: string | null): Promise<{ close(): Promise<void> }>;
  event(name: string, handle: unknown, data: unknown, metadata: unknown): void;
  registerSubscriber(name: string, callback: (event: { name: string; data: unknown; metadata: unknown }) => void): void;
  deregisterSubscriber(name: string): boolean;
  flushSubscribers(): Promise<void>;
}

function load(): Lib | null {
  try {
    return createRequire(import.meta.url)('nemo-relay-node') as Lib;
  } catch {
    return null;
  }
}

const lib = load();

/** Native sanitizes each value (as a mark's `data.v`) with `config` as the pii_redaction config. Rejects like `initialize`. */
export async function nativeSanitizeMarks(config: Record<string, unknown>, values: readonly Json[]): Promise<Json[]> {
  if (lib === null) throw new Error('nemo-relay-node is not available');
  // A path that does not exist: native then reads no user plugins.toml.
  const activation = await lib.initialize({ version: 1, components: [{ kind: 'pii_redaction', config }] }, '/nonexistent/nemo-relay-hooks/plugins.toml');
  const got: Json[] = [];
  const name = `sanitize-${Math.random().toString(36).slice(2)}`;
  lib.registerSubscriber(name, (event) => {
    if (event.name === 'sanitize.probe') got.push(((event.data ?? {}) as JsonObject).v ?? null);
  });
  try {
    for (const value of values) lib.event('sanitize.probe', null, { v: value }, null);
    await lib.flushSubscribers();
  } finally {
    lib.deregisterSubscriber(name);
    await activation.close();
  }
  return got;
}

export const nativeSanitizeAvailable = lib !== null;
