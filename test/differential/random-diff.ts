/**
 * One seed of the random-stream differential: the stream of `seed`
 * (random-stream.ts) through HookRegistry and the plugin on the memory relay
 * and on native with the same settings (ATOF and ATIF on; the subagent
 * export mode default, and "all" when the stream has subagents; ATOF alone;
 * the files of a plugins.toml observability component), compared
 * as corpus.test.ts compares the recorded streams: event by event, document
 * by document, and character for character after uuids and clocks are
 * labelled. The answer is a list of differences, each naming the seed, the
 * settings and the first differing path, so a failure replays from its
 * message alone.
 */

import { silentLogger } from '../../src/shared/logger.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { attemptsAsMemory, failedLlmEndsAsNative, normalize, normalizeEvents, normalizeText, UuidLabels, type NormalizeOptions } from './normalize.ts';
import { replay, type ReplayOptions, type ReplayResult, type SubagentExportMode } from './replay.ts';
import { randomStream, type RandomStream, type RandomStreamOptions } from './random-stream.ts';

/** The first path where `a` and `b` differ, or null when they are deeply equal. */
export function firstDifference(a: unknown, b: unknown, path = '$', keyOrder = true): string | null {
  if (Object.is(a, b)) return null;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return `${path}: ${show(a)} vs ${show(b)}`;
  if (Array.isArray(a) !== Array.isArray(b)) return `${path}: ${show(a)} vs ${show(b)}`;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    for (let i = 0; i < Math.min(a.length, other.length); i++) {
      const found = firstDifference(a[i], other[i], `${path}[${i}]`, keyOrder);
      if (found !== null) return found;
    }
    return a.length === other.length ? null : `${path}: length ${a.length} vs ${other.length}`;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  const otherKeys = Object.keys(right);
  for (const key of keys) {
    if (!Object.hasOwn(right, key)) return `${path}.${JSON.stringify(key)}: only on memory (${show(left[key])})`;
    const found = firstDifference(left[key], right[key], `${path}.${JSON.stringify(key)}`, keyOrder);
    if (found !== null) return found;
  }
  for (const key of otherKeys) if (!Object.hasOwn(left, key)) return `${path}.${JSON.stringify(key)}: only on native (${show(right[key])})`;
  if (keyOrder && keys.join('\u0000') !== otherKeys.join('\u0000')) return `${path}: key order ${show(keys)} vs ${show(otherKeys)}`;
  return null;
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

/** Where two texts first differ, with a little context on each side. */
function textDifference(a: string, b: string): string | null {
  if (a === b) return null;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 60);
  return `at character ${i}: ${JSON.stringify(a.slice(from, i + 60))} vs ${JSON.stringify(b.slice(from, i + 60))}`;
}

export interface SeedOptions extends RandomStreamOptions {
  /** Keys both sides drop (a documented difference the caller has decided to ignore). */
  drop?: readonly string[];
}

/**
 * Plugin-host files are named after the root scope's uuid, which differs
 * per run: labelled (uuidv7 sorts by time, so both runs list them in the
 * same order) before the files are compared.
 */
export function relabelFiles(result: ReplayResult): ReplayResult {
  const labels = new UuidLabels();
  const rename = <T>(map: Map<string, T>) => new Map([...map].map(([name, value]) => [labels.text(name), value] as const));
  return { ...result, trajectories: rename(result.trajectories), trajectoryTexts: rename(result.trajectoryTexts) };
}

/** What one comparison of memory and native found: nothing when the list is empty. */
export function compareRuns(memory: ReplayResult, native: ReplayResult, options: NormalizeOptions = {}, compareText = true): string[] {
  const found: string[] = [];
  const say = (what: string, difference: string | null) => {
    if (difference !== null) found.push(`${what}: ${difference}`);
  };
  if (memory.problems.length > 0) found.push(`memory warned: ${memory.problems.join(' | ')}`);
  if (native.problems.length > 0) found.push(`native warned: ${native.problems.join(' | ')}`);
  for (const key of ['errors', 'dropped'] as const) {
    if (memory.status.counters[key] !== 0) found.push(`memory counted ${memory.status.counters[key]} ${key}`);
    if (native.status.counters[key] !== 0) found.push(`native counted ${native.status.counters[key]} ${key}`);
  }
  const memoryEvents = normalizeEvents(memory.events, options);
  const nativeEvents = normalizeEvents(native.events, options);
  say('ATOF events', firstDifference(memoryEvents, nativeEvents));
  if (found.length === 0 && !options.drop) {
    const memoryLabels = new UuidLabels();
    const nativeLabels = new UuidLabels();
    memory.atofLines.forEach((line, index) => {
      if (found.length > 0) return;
      say(`ATOF line ${index + 1}`, textDifference(normalizeText(line, memoryLabels), normalizeText(native.atofLines[index] ?? '', nativeLabels)));
    });
  }
  say('ATIF files', firstDifference([...memory.trajectories.keys()], [...native.trajectories.keys()]));
  for (const [name, doc] of memory.trajectories) {
    if (!native.trajectories.has(name)) continue;
    // A document changed structurally (compareText false) has lost its key order: only its content is compared.
    const structural = firstDifference(normalize(doc, undefined, options), normalize(native.trajectories.get(name), undefined, options), '$', compareText);
    say(`ATIF ${name}`, structural);
    if (structural === null && !options.drop && compareText) say(`ATIF ${name} text`, textDifference(normalizeText(memory.trajectoryTexts.get(name)!), normalizeText(native.trajectoryTexts.get(name)!)));
  }
  return found;
}

/** Memory's run with its failed LLM ends as native writes them (a documented difference; see `failedLlmEndsAsNative`). */
export function failedLlmAsNative(memory: ReplayResult): ReplayResult {
  const atofLines = failedLlmEndsAsNative(memory.atofLines);
  return { ...memory, atofLines, events: atofLines.map((line) => JSON.parse(line) as ReplayResult['events'][number]) };
}

/**
 * The same difference in the events a plugin-host trajectory lists
 * (`extra.observed_events`); its text is then no longer memory's, so the
 * caller compares such documents structurally only.
 */
export function observedAsNative(memory: ReplayResult): ReplayResult {
  const trajectories = new Map([...memory.trajectories].map(([name, doc]) => [name, observedEventsAsNative(doc)] as const));
  return { ...memory, trajectories };
}

/** A copy of one of memory's plugin-host documents with its failed LLM ends in `extra.observed_events` as native writes them. */
export function observedEventsAsNative<T>(doc: T): T {
  const copy = structuredClone(doc) as { extra?: { observed_events?: unknown[] } };
  const observed = copy.extra?.observed_events;
  if (Array.isArray(observed)) copy.extra!.observed_events = observed.map((event) => JSON.parse(failedLlmEndsAsNative([JSON.stringify(event)])[0]!) as unknown);
  return copy as T;
}

/** Whether a document (or a subagent's in it) has an LLM step that ended in error: an API error, or a call its session's close abandoned. */
export function hasFailedCall(doc: unknown): boolean {
  const { steps, subagent_trajectories: children } = doc as { steps?: { extra?: { llm_response?: { error?: unknown } } }[]; subagent_trajectories?: unknown[] };
  return (steps ?? []).some((step) => step.extra?.llm_response?.error !== undefined) || (children ?? []).some(hasFailedCall);
}

/** The export modes a stream runs under: the default, and "all" when it has subagents. */
export function modesOf(stream: RandomStream): (SubagentExportMode | undefined)[] {
  return stream.lines.some((line) => line.hook === 'subagent_start') ? [undefined, 'all'] : [undefined];
}

/**
 * Runs `seed` on both backends: the plugin's own files under every export
 * mode, memory's ATOF alone (its byte path), and the files a plugins.toml
 * observability component writes (native's own ATIF exporter is the oracle
 * of memory's plugin host there). Every difference found, each naming the
 * seed and the settings.
 */
export async function compareSeed(seed: number, options: SeedOptions = {}): Promise<string[]> {
  const stream = randomStream(seed, options);
  const found: string[] = [];
  const drop = [...(options.drop ?? []), ...(stream.concurrentSubagents ? ['propagation_root_uuid'] : [])];
  const normalizing = drop.length > 0 ? { drop } : {};
  const report = (settings: string, differences: string[]) => {
    for (const difference of differences) found.push(`seed ${seed}${options.large ? ' (large)' : ''}, ${settings}: ${difference}`);
  };
  const both = async (settings: ReplayOptions) => ({
    memory: failedLlmAsNative(await replay(createMemoryRelay({ logger: silentLogger }), stream.lines, settings)),
    native: await replay(loadNativeRelay({ logger: silentLogger }), stream.lines, settings),
  });

  for (const mode of modesOf(stream)) {
    const { memory, native } = await both(mode === undefined ? {} : { subagentExportMode: mode });
    report(`subagent export mode ${mode ?? 'default'}`, compareRuns(memory, native, normalizing));
  }

  // ATOF alone: memory writes its lines on the byte path (ATIF on takes the object path).
  const alone = await both({ env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '0' } });
  report('ATOF alone', compareRuns(alone.memory, alone.native, normalizing));

  // A failed attempt (an API error, or a call abandoned at its session's
  // close) is a documented difference of native's `atif` component
  // (`attemptsAsMemory`), and a failed LLM end one of its observed events
  // (`observedAsNative`): documents changed for them are compared by content only.
  const toml = await both({ pluginsToml: true });
  const failed = [...toml.native.trajectories.values()].some(hasFailedCall);
  const native = failed ? { ...toml.native, trajectories: new Map([...toml.native.trajectories].map(([name, doc]) => [name, attemptsAsMemory(structuredClone(doc))] as const)) } : toml.native;
  report('plugins.toml', compareRuns(relabelFiles(observedAsNative(toml.memory)), relabelFiles(native), normalizing, !failed));

  if (found.length > 0) found.push(`stream of seed ${seed}: ${stream.lines.length} hooks\n  ${stream.outline.join('\n  ')}`);
  return found;
}
