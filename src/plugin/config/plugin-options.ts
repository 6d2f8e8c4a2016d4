/**
 * `createNemoRelayPlugin`'s own options, checked as a JavaScript host
 * passes them (no compiler to catch a slip): a misspelt name (`setting`,
 * `sessionIdleTTLMs`) was ignored without a word, and a bound that is not
 * a number (`maxQueuedHooks: 'lots'`) turned into `NaN`, which switches the
 * bound off, so the start-up queue or the live sessions grew without limit.
 * Each problem, a number written as text included (as the typed `settings`
 * are checked), is a warning diagnostic (logged with the settings' own, in
 * `status().diagnostics`) and the default applies. Never throws.
 *
 * @module
 */

import type { ConfigDiagnostic } from '../../relay/contract.ts';
import { errorMessage } from '../../shared/error-text.ts';
import { describeValue } from './settings.ts';
import { nearMiss } from '../../shared/near-miss.ts';

/** Every option `createNemoRelayPlugin` reads (`NemoRelayPluginOptions`). */
const OPTION_NAMES = ['backend', 'env', 'logger', 'settings', 'sessionIdleTtlMs', 'maxSessions', 'trajectoryWriteDelayMs', 'maxQueuedHooks', 'redact', 'host', 'clock'] as const;

/** The options that are counts or durations. */
const NUMBER_OPTIONS = ['sessionIdleTtlMs', 'maxSessions', 'trajectoryWriteDelayMs', 'maxQueuedHooks'] as const;
type NumberOption = (typeof NUMBER_OPTIONS)[number];

export interface CheckedPluginOptions {
  /** The numeric options that are numbers (`undefined`: the default applies). */
  numbers: Partial<Record<NumberOption, number>>;
  diagnostics: ConfigDiagnostic[];
}

export function checkPluginOptions(options: unknown): CheckedPluginOptions {
  const numbers: Partial<Record<NumberOption, number>> = {};
  const diagnostics: ConfigDiagnostic[] = [];
  if (options === null || typeof options !== 'object') return { numbers, diagnostics };
  const read = (key: string): unknown => {
    try {
      return (options as Record<string, unknown>)[key];
    } catch (error) {
      diagnostics.push(invalid(key, `options.${key} could not be read (${errorMessage(error)}); using the default`));
      return undefined;
    }
  };
  let keys: string[] = [];
  try {
    keys = Object.keys(options);
  } catch {
    // A proxy that refuses to list its keys: the known ones are still read one by one below.
  }
  for (const key of keys) {
    if ((OPTION_NAMES as readonly string[]).includes(key)) continue;
    const near = nearMiss(key, OPTION_NAMES);
    // The value is never quoted: a misplaced option may hold a credential.
    diagnostics.push(invalid(key, `${JSON.stringify(key)} is not an option of createNemoRelayPlugin${near !== undefined ? ` (did you mean ${near}?)` : ''}; ignoring it (the options: ${OPTION_NAMES.join(', ')})`));
  }
  for (const key of NUMBER_OPTIONS) {
    const value = read(key);
    if (value === undefined) continue;
    if (typeof value === 'number' && !Number.isNaN(value)) numbers[key] = value;
    else diagnostics.push(invalid(key, `options.${key} must be a number, got ${describeValue(value)}; using the default`));
  }
  const redact = read('redact');
  if (redact !== undefined && typeof redact !== 'function') {
    diagnostics.push(invalid('redact', `options.redact must be a function, got ${typeof redact}; nothing is redacted by it`));
  }
  const clock = read('clock');
  if (clock !== undefined && typeof clock !== 'function') {
    diagnostics.push(invalid('clock', `options.clock must be a function, got ${typeof clock}; events carry the library's clock`));
  }
  return { numbers, diagnostics };
}

function invalid(key: string, message: string): ConfigDiagnostic {
  return { level: 'warning', code: 'settings.invalid_value', field: `options.${key}`, message };
}
