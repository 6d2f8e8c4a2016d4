/**
 * A recording `RelayBackend` for tests: ours, and hosts' own.
 *
 * Every call is kept in order as `{ op, args }`, with the arguments exactly
 * as the caller passed them (no conversion), so a test can assert what the
 * plugin asked the relay to do. Handles are small readable objects
 * (`{ type: 'scope', name, id }`) so they can be compared with `toMatchObject`.
 * Nothing is written to disk.
 *
 * @module
 */

import type {
  AtifExporter,
  AtifExporterOptions,
  AtofExporter,
  AtofExporterOptions,
  BackendStats,
  DynamicPluginSpec,
  JsonObject,
  LlmEndOptions,
  LlmHandle,
  LlmStartOptions,
  ManagedLlmCall,
  ManagedLlmOptions,
  ManagedToolCall,
  ManagedToolOptions,
  MarkOptions,
  PluginConfigActivation,
  PluginConfigOptions,
  PluginConfigReport,
  PopScopeOptions,
  PushScopeOptions,
  RelayBackend,
  ScopeHandle,
  ToolEndOptions,
  ToolHandle,
  ToolStartOptions,
} from '../relay/contract.ts';

/** The name of a recorded backend operation. */
export type FakeOperation =
  | 'pushScope'
  | 'popScope'
  | 'mark'
  | 'llmStart'
  | 'llmEnd'
  | 'toolStart'
  | 'toolEnd'
  | 'executeLlm'
  | 'executeTool'
  | 'registerAtofExporter'
  | 'atof.flush'
  | 'atof.close'
  | 'registerAtifExporter'
  | 'atif.exportJson'
  | 'atif.deregister'
  | 'initializePluginConfig'
  | 'activateDynamicPlugins'
  | 'activation.close'
  | 'flush'
  | 'shutdown';

/** One recorded call: the operation and its arguments. */
export interface FakeCall {
  /** Which operation was called. */
  op: FakeOperation;
  /** The options it was called with. */
  args: Record<string, unknown>;
}

/** A handle minted by the fake. */
export interface FakeHandle {
  /** What the handle is for. */
  type: 'scope' | 'llm' | 'tool';
  /** The scope or span name. */
  name: string;
  /** Creation order, from 1. */
  id: number;
}

/** Options of `createFakeRelay`. */
export interface FakeRelayOptions {
  /** Offer `executeLlm`/`executeTool`. Default true. */
  managed?: boolean;
  /** Offer `activateDynamicPlugins`. Default false (like a binding without it). */
  dynamicPlugins?: boolean;
  /** The report every plugin-config activation returns. */
  pluginConfigReport?: PluginConfigReport;
  /** When set, `initializePluginConfig` rejects with it. */
  pluginConfigError?: Error;
}

/** A `RelayBackend` that records every call, for tests. */
export interface FakeRelay extends RelayBackend {
  /** Every call, in order. */
  readonly calls: FakeCall[];
  /** The operation names, in order. */
  ops(): FakeOperation[];
  /** The calls of one operation, in order. */
  callsOf(op: FakeOperation): FakeCall[];
  /** Forgets every recorded call. */
  clear(): void;
}

/** Creates a recording fake relay. */
export function createFakeRelay(options: FakeRelayOptions = {}): FakeRelay {
  const calls: FakeCall[] = [];
  let nextId = 1;
  let events = 0;
  const record = (op: FakeOperation, args: Record<string, unknown>): void => {
    calls.push({ op, args });
  };
  const handle = (type: FakeHandle['type'], name: string): FakeHandle => Object.freeze({ type, name, id: nextId++ });

  const fake: FakeRelay = {
    kind: 'fake',
    version: '0.0.0-fake',
    calls,
    ops: () => calls.map((call) => call.op),
    callsOf: (op) => calls.filter((call) => call.op === op),
    clear: () => {
      calls.length = 0;
    },

    pushScope(pushOptions: PushScopeOptions): ScopeHandle {
      record('pushScope', { ...pushOptions });
      events += 1;
      return handle('scope', pushOptions.name) as unknown as ScopeHandle;
    },
    popScope(scope: ScopeHandle, popOptions: PopScopeOptions = {}): void {
      record('popScope', { handle: scope, ...popOptions });
      events += 1;
    },
    mark(markOptions: MarkOptions): void {
      record('mark', { ...markOptions });
      events += 1;
    },
    llmStart(startOptions: LlmStartOptions): LlmHandle {
      record('llmStart', { ...startOptions });
      events += 1;
      return handle('llm', startOptions.name) as unknown as LlmHandle;
    },
    llmEnd(span: LlmHandle, endOptions: LlmEndOptions): void {
      record('llmEnd', { handle: span, ...endOptions });
      events += 1;
    },
    toolStart(startOptions: ToolStartOptions): ToolHandle {
      record('toolStart', { ...startOptions });
      events += 1;
      return handle('tool', startOptions.name) as unknown as ToolHandle;
    },
    toolEnd(span: ToolHandle, endOptions: ToolEndOptions): void {
      record('toolEnd', { handle: span, ...endOptions });
      events += 1;
    },

    registerAtofExporter(atofOptions: AtofExporterOptions): AtofExporter {
      record('registerAtofExporter', { ...atofOptions });
      const target = `${atofOptions.outputDirectory ?? '.'}/${atofOptions.filename}`;
      return {
        path: target,
        flush: async () => record('atof.flush', { path: target }),
        close: async () => record('atof.close', { path: target }),
      };
    },
    registerAtifExporter(atifOptions: AtifExporterOptions): AtifExporter {
      record('registerAtifExporter', { ...atifOptions });
      return {
        exportJson: async () => {
          record('atif.exportJson', { sessionId: atifOptions.sessionId });
          return JSON.stringify({ session_id: atifOptions.sessionId, agent_name: atifOptions.agentName });
        },
        deregister: () => record('atif.deregister', { sessionId: atifOptions.sessionId }),
      };
    },

    async initializePluginConfig(document: JsonObject, configOptions: PluginConfigOptions = {}) {
      record('initializePluginConfig', { document, ...configOptions });
      if (options.pluginConfigError) throw options.pluginConfigError;
      return activation();
    },

    async flush() {
      record('flush', {});
    },
    async shutdown() {
      record('shutdown', {});
    },
    stats(): BackendStats {
      return { events, errors: 0, dropped: 0 };
    },
    outputs: () => [],
  };

  function activation(): PluginConfigActivation {
    const report = options.pluginConfigReport ?? { diagnostics: [], configPaths: [] };
    let closed = false;
    return {
      report,
      close: async () => {
        if (closed) return;
        closed = true;
        record('activation.close', {});
      },
    };
  }

  if (options.managed !== false) {
    fake.executeLlm = async (llmOptions: ManagedLlmOptions, call: ManagedLlmCall) => {
      record('executeLlm', { ...llmOptions });
      events += 2;
      return await call(llmOptions.request);
    };
    fake.executeTool = async (toolOptions: ManagedToolOptions, call: ManagedToolCall) => {
      record('executeTool', { ...toolOptions });
      events += 2;
      return await call(toolOptions.args);
    };
  }
  if (options.dynamicPlugins === true) {
    fake.activateDynamicPlugins = async (
      document: JsonObject,
      specs: readonly DynamicPluginSpec[],
      configOptions: PluginConfigOptions = {},
    ) => {
      record('activateDynamicPlugins', { document, specs, ...configOptions });
      return activation();
    };
  }
  return fake;
}
