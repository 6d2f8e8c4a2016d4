/**
 * A pure-JS ATIF v1.7 trajectory builder that produces exactly what the
 * native NeMo Relay runtime produces for the same ATOF events.
 *
 * Both relay backends feed it: the in-memory relay with its own events, the
 * native adapter with native subscriber events (one builder per session,
 * since native's own exporter mixes interleaved sessions). `add()` only
 * stores the event; all conversion happens in `build()`.
 *
 * Two output styles:
 * - `exporter`: what native's manual `AtifExporter.exportJson()` returns
 *   (struct field order, compact JSON, no root `extra`).
 * - `plugin-host`: the file native's observability plugin writes per root
 *   scope (every key sorted, pretty JSON, `extra.nemo_relay` and
 *   `extra.observed_events`, agent `tool_definitions`/`extra` from config).
 *
 * @module
 */

import type { Json, JsonObject } from '../../shared/json.ts';
import type { AtifAgent, AtifTrajectory, LlmCallPricer } from './types.ts';
import { type ConvEvent, convertInSlices, firstReportedModel, readEvents, sortByInstant, startOfEvents } from './convert/index.ts';
import { compareInstants } from '../instant.ts';
import type { AtofEvent } from '../atof/types.ts';
import { sortJson } from '../native-text.ts';
import { ExporterBytesCache, pluginHostTextInSlices, type AtifBuilderStyle } from './serialize.ts';
import { finishSlices, SLICE_UNITS, type Slices } from '../../shared/slices.ts';
import { markToolEnds, readToolEnds, type ToolEndStatus } from './convert/tool-ends.ts';
import { placeTurnEnds, readTurnEnds, type TurnEnd } from './convert/turn-ends.ts';
import { cutOpenCalls, cutShortState, markCutTools, readCutShort } from './convert/cut-short.ts';
import type { Instant } from '../instant.ts';

export type { AtifBuilderStyle } from './serialize.ts';

/** Options of `AtifBuilder`. */
export interface AtifBuilderOptions {
  /**
   * `exporter` style: the document's `session_id` (native's `AtifExporter`
   * argument). `plugin-host` style: the root scope when `rootUuid` is not
   * given (older callers).
   */
  sessionId?: string;
  /**
   * `plugin-host` style: the uuid of the root scope the file is for. The
   * document's `trajectory_id` is this uuid; its `session_id` and
   * `extra.nemo_relay.session_instance_id` become the root start event's
   * `propagation_root_uuid` (the root's own uuid for an Agent root, the
   * scope stack's implicit root for a root-level turn scope), and
   * `extra.nemo_relay` takes the logical ids from its metadata, exactly as
   * native writes them. Default: `trajectoryId`, then `sessionId`.
   */
  rootUuid?: string;
  /** The document's `trajectory_id`. Default: `rootUuid`, then `sessionId`. */
  trajectoryId?: string;
  /** Written as `agent.name`. */
  agentName: string;
  /** Written as `agent.version`. */
  agentVersion: string;
  /** `agent.model_name`; omitted when undefined (see `fallbackModelName`). */
  modelName?: string;
  /**
   * `exporter` style with no `modelName`: each trajectory (the root and
   * every embedded sub-agent without a model of its own) takes the model
   * its first agent step reports, else this name. A framework often learns
   * the model only from the first response; "unknown" beside steps that
   * name it would misstate the run.
   */
  fallbackModelName?: string;
  /** `exporter` style: `own` gives each sub-agent its own `agent` block (see `AtifExporterOptions.subagentAgents`). */
  subagentAgents?: 'own' | 'parent';
  /**
   * `exporter` style: a turn that failed or was interrupted says so, and so does a tool call that failed
   * (`AtifExporterOptions.turnEnds`, `convert/turn-ends.ts`, `convert/tool-ends.ts`).
   */
  turnEnds?: boolean;
  /**
   * `exporter` = native manual `AtifExporter` (struct field order, no root extra);
   * `plugin-host` = native plugin-managed file (keys sorted, `extra.nemo_relay` and
   * `extra.observed_events`, `agent.tool_definitions`/`agent.extra` from config).
   * Default `exporter`.
   */
  style?: AtifBuilderStyle;
  /** `agent.tool_definitions` (plugin-host config passthrough). */
  toolDefinitions?: Json[];
  /** `agent.extra` (plugin-host config passthrough). */
  extra?: JsonObject;
  /**
   * The cost in USD of an LLM call whose response reports none (the
   * plugins.toml `pricing` component): set as the step's `metrics.cost_usd`
   * when it returns a number.
   */
  priceLlmCall?: LlmCallPricer;
}

/** Collects ATOF events and turns them into an ATIF trajectory on demand. */
export class AtifBuilder {
  readonly #options: AtifBuilderOptions;
  #events: AtofEvent[] = [];
  /**
   * The events as the converter reads them, read at the first build after
   * they were recorded and kept: a session's partial writes and its final
   * one read (and parse the timestamp of) each event once.
   */
  #read: ConvEvent[] = [];
  /** How far `#read` has read `#events` (marks are not read, so its length is no measure). */
  #position = startOfEvents();
  /** True while `#read` is in instant order (events usually arrive so): then it is its own sorted list. */
  #inOrder = true;
  /** `sortByInstant(#read)` as of the last build. */
  #sorted: readonly ConvEvent[] = this.#read;
  /** The steps of the last `exporter`-style build and their bytes, for the next one to reuse. */
  #texts: ExporterBytesCache | undefined;
  /** The recorded payloads a build found written exactly by `JSON.stringify` (`sortPayload`): later builds and texts skip their checks. */
  readonly #plain = new Set<object>();
  /** The turns that did not complete (`exporter` style), read from `#events` up to `#endsRead`, and each scope's latest turn start. */
  #turnEnds: TurnEnd[] = [];
  #endsRead = 0;
  #turnStarts = new Map<string, Instant>();
  /** The tool scopes that ended failed or interrupted, read with the turn ends (`convert/tool-ends.ts`). */
  #toolEnds = new Map<string, ToolEndStatus>();
  /** The calls a session's close cut short, read with the turn ends (`convert/cut-short.ts`). */
  #cutShort = cutShortState();
  /** Set once the session will never close (`cutOpenCalls`): calls still open are written as never ended. */
  #openCallsCut = false;

  /** Starts an empty trajectory. */
  constructor(options: AtifBuilderOptions) {
    this.#options = options;
  }

  /** Records one event. O(1): the event is kept by reference and must not be mutated afterwards. */
  add(event: AtofEvent): void {
    this.#events.push(event);
  }

  /**
   * `exporter` style with `turnEnds`: the next builds are of a session that will never close (the process is
   * exiting without closing it; `convert` of a file that has no end for it), so the calls still open in them are
   * said as never ended (`convert/cut-short.ts`), not left without a result.
   */
  cutOpenCalls(): void {
    this.#openCallsCut = true;
  }

  /** Events recorded so far. */
  get size(): number {
    return this.#events.length;
  }

  /** Forgets every recorded event (native's `AtifExporter.clear()`). */
  clear(): void {
    this.#events = [];
    this.#read = [];
    this.#position = startOfEvents();
    this.#inOrder = true;
    this.#sorted = this.#read;
    this.#texts?.clear();
    this.#plain.clear();
    this.#turnEnds = [];
    this.#endsRead = 0;
    this.#turnStarts = new Map();
    this.#toolEnds = new Map();
    this.#cutShort = cutShortState();
  }

  /**
   * The trajectory for everything recorded so far; callable repeatedly and
   * while scopes are still open. Payload objects are shared with the
   * recorded events: treat the result as read-only.
   */
  build(): AtifTrajectory {
    const { trajectory, extra } = finishSlices(this.#converted());
    if (extra === undefined) return trajectory;
    trajectory.extra = { ...extra, observed_events: this.#events as unknown as Json[] };
    return sortJson(trajectory as unknown as Json) as unknown as AtifTrajectory;
  }

  /**
   * The steps and agent block of the trajectory, converted in slices; for
   * the `plugin-host` style, `extra` is the document's root `extra` without
   * its `observed_events` (the recorded events), which the caller adds.
   */
  *#converted(): Slices<{ trajectory: AtifTrajectory; extra?: JsonObject }> {
    const options = this.#options;
    const pluginHost = options.style === 'plugin-host';
    const agent: AtifAgent = { name: options.agentName, version: options.agentVersion };
    if (options.modelName !== undefined) agent.model_name = options.modelName;
    if (pluginHost && options.toolDefinitions !== undefined) agent.tool_definitions = options.toolDefinitions;
    if (pluginHost && options.extra !== undefined) agent.extra = options.extra;
    const rootUuid = options.rootUuid ?? options.trajectoryId ?? options.sessionId ?? '';
    const root = pluginHost ? this.#startOf(rootUuid) : undefined;
    const propagationRoot = root?.propagation_root_uuid;
    const sessionId = typeof propagationRoot === 'string' ? propagationRoot : (options.sessionId ?? rootUuid);
    // The plugin's own files give a sub-agent its own name and model; native's
    // exporter and plugins.toml files keep the parent's block, byte for byte.
    const ownSubagentAgents = !pluginHost && options.subagentAgents === 'own';
    const read = yield* this.#sortedEvents();
    const converted = this.#position.next;
    // The read list grows with the next build's reading: a build whose slices interleave with another's converts what it read.
    const sorted = read === this.#read ? read.slice() : read;
    // The plugins.toml file counts a Gemini answer's tokens as native's does; the plugin's own trajectory what the call is billed for.
    const trajectory = yield* convertInSlices(sessionId, agent, sorted, ownSubagentAgents, options.priceLlmCall, this.#plain, pluginHost ? 'native' : 'billed');
    trajectory.trajectory_id = options.trajectoryId ?? (pluginHost ? rootUuid : (options.sessionId ?? ''));
    if (!pluginHost) {
      if (options.modelName === undefined && options.fallbackModelName !== undefined) reportedModels(trajectory, options.fallbackModelName);
      // Not native (its manual exporter writes no root extra): a session started by another process names its caller.
      const caller = this.#rootCaller();
      if (caller !== undefined) trajectory.extra = { caller };
      // Not native either: a turn that failed or was interrupted says so (`convert/turn-ends.ts`).
      // Up to the events this build converted: an end recorded while it ran may end steps not in it.
      if (options.turnEnds === true && converted > this.#endsRead) {
        readTurnEnds(this.#events, this.#endsRead, converted, this.#turnEnds, this.#turnStarts);
        readToolEnds(this.#events, this.#endsRead, converted, this.#toolEnds);
        readCutShort(this.#events, this.#endsRead, converted, this.#cutShort, this.#turnEnds);
        this.#endsRead = converted;
      }
      if (options.turnEnds === true) {
        let ends = this.#turnEnds;
        let cutTools: ReadonlyMap<string, string> = this.#cutShort.tools;
        if (this.#openCallsCut) {
          ends = [...ends];
          const tools = new Map(cutTools);
          cutOpenCalls(this.#events.slice(0, converted), ends, tools);
          cutTools = tools;
        }
        placeTurnEnds(trajectory, ends);
        markToolEnds(trajectory, this.#toolEnds);
        markCutTools(trajectory, cutTools);
      }
      return { trajectory };
    }
    return { trajectory, extra: { nemo_relay: relayCorrelation(root, sessionId) } };
  }

  /**
   * The `caller` the root scope's start metadata names (the plugin writes it
   * for a session started from another process's tool call), or undefined.
   * The root's start is the first event a session's builder records.
   */
  #rootCaller(): JsonObject | undefined {
    const first = this.#events[0];
    if (first === undefined || first.kind !== 'scope' || first.scope_category !== 'start' || first.category !== 'agent') return undefined;
    const metadata = first.metadata;
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return undefined;
    const caller = (metadata as JsonObject).caller;
    return typeof caller === 'object' && caller !== null && !Array.isArray(caller) ? caller : undefined;
  }

  /**
   * Every recorded event, read, in instant order (equal instants in arrival
   * order), reading only the ones new since the last build, `SLICE_UNITS`
   * per slice.
   */
  *#sortedEvents(): Slices<readonly ConvEvent[]> {
    const read = this.#read;
    const events = this.#events;
    const position = this.#position;
    if (position.next === events.length) return this.#sorted;
    while (position.next < events.length) {
      const known = read.length;
      readEvents(events, read, position, Math.min(events.length, position.next + SLICE_UNITS));
      for (let i = Math.max(known, 1); i < read.length && this.#inOrder; i++) {
        this.#inOrder = compareInstants((read[i - 1] as ConvEvent).instant, (read[i] as ConvEvent).instant) <= 0;
      }
      if (position.next < events.length) yield;
    }
    this.#sorted = this.#inOrder ? read : sortByInstant(read);
    return this.#sorted;
  }

  /** The start event of the scope `uuid`. */
  #startOf(uuid: string): AtofEvent | undefined {
    return this.#events.find((event) => event.kind === 'scope' && event.uuid === uuid && event.scope_category === 'start');
  }

  /** The trajectory as native writes it: compact for `exporter`, pretty with sorted keys for `plugin-host`. */
  toJson(): string {
    return finishSlices(this.toJsonInSlices());
  }

  /**
   * `toJson()` as work done in slices (`shared/slices.ts`): the same text,
   * with the host's event loop free to turn between slices. Events recorded
   * while it runs may or may not be in it (those read before its conversion
   * starts are); the `plugin-host` style's `observed_events` are read as the
   * text is written, so that style's builder must get no more events (a
   * plugins.toml root's builder gets none once the root ended).
   */
  *toJsonInSlices(): Slices<string> {
    const text = yield* this.#textInSlices();
    return typeof text === 'string' ? text : utf8Decoder.decode(text);
  }

  /** `toJson()`'s text as UTF-8 bytes, which the `exporter` style writes directly (what a file takes). */
  toBytes(): Uint8Array {
    return finishSlices(this.toBytesInSlices());
  }

  /** `toBytes()` as work done in slices, as `toJsonInSlices`. */
  *toBytesInSlices(): Slices<Uint8Array> {
    const text = yield* this.#textInSlices();
    return typeof text === 'string' ? utf8Encoder.encode(text) : text;
  }

  /** The `exporter` style's bytes, or the `plugin-host` style's text. */
  *#textInSlices(): Slices<string | Uint8Array> {
    const { trajectory, extra } = yield* this.#converted();
    if (extra === undefined) {
      this.#texts ??= new ExporterBytesCache();
      return this.#texts.write(trajectory, this.#plain);
    }
    return yield* pluginHostTextInSlices(trajectory, extra, this.#events as unknown as Json[], this.#plain);
  }
}

const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();

/** Gives every trajectory in the tree without `agent.model_name` the model its first agent step reports, else `fallback`. */
function reportedModels(trajectory: AtifTrajectory, fallback: string): void {
  if (trajectory.agent.model_name === undefined) {
    const reported = firstReportedModel(trajectory.steps);
    trajectory.agent = { ...trajectory.agent, model_name: reported ?? fallback };
  }
  for (const child of trajectory.subagent_trajectories ?? []) reportedModels(child, fallback);
}

/** `extra.nemo_relay`: the logical session and user ids from the root scope's metadata, and the session instance. */
function relayCorrelation(root: AtofEvent | undefined, sessionInstanceId: string): JsonObject {
  const metadata = root?.metadata;
  const read = (key: string): Json | undefined =>
    typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) ? metadata[key] : undefined;
  const correlation: JsonObject = {};
  const sessionId = read('session_id');
  if (typeof sessionId === 'string') correlation.session_id = sessionId;
  correlation.session_instance_id = sessionInstanceId;
  const userId = read('user_id');
  if (typeof userId === 'string') correlation.user_id = userId;
  return correlation;
}
