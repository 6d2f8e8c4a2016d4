/**
 * OpenAI Agents SDK (`@openai/agents`) adapter: `instrumentOpenAIAgents(hooks)`
 * adds a tracing processor that turns every run's trace into the observer
 * hooks; pass your `Runner`s in `options.runner` and their model provider is
 * wrapped too, so each provider attempt (retries included) is seen whatever
 * the model is. See `processor.ts` for the mapping.
 *
 * @module
 */

import { addTraceProcessor, getCurrentSpan, type Model, type ModelProvider, type Runner, type TracingProcessor } from '@openai/agents';
import type { HookRegistry } from '../../hooks/registry.ts';
import { AdapterCore } from '../core/run.ts';
import type { AdapterOptions } from '../core/options.ts';
import { AgentsProcessor, type SpanLike } from './processor.ts';

export type { AdapterOptions, RunInfo, SessionScope } from '../core/options.ts';

/** Options of `instrumentOpenAIAgents`: the shared adapter options plus the runners whose model providers are wrapped. */
export interface OpenAIAgentsAdapterOptions extends AdapterOptions {
  /**
   * Runners whose model provider is wrapped, so every `getResponse` /
   * `getStreamedResponse` attempt is recorded (custom providers and models
   * that open no `generation`/`response` span included). Uninstalling
   * restores their providers.
   */
  runner?: Runner | readonly Runner[];
}

type Loose = Record<string, unknown>;

function wrapModel(processor: AgentsProcessor, model: Model, name: string | undefined): Model {
  return new Proxy(model, {
    get(target, key, receiver) {
      if (key === 'getResponse') {
        return (request: Loose) => processor.attempt(getCurrentSpan() as SpanLike | null, name, request, () => target.getResponse(request as never) as unknown as Promise<Loose>);
      }
      if (key === 'getStreamedResponse') {
        return (request: Loose) => processor.attemptStream(getCurrentSpan() as SpanLike | null, name, request, () => target.getStreamedResponse(request as never) as AsyncIterable<Loose>);
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function wrapProvider(processor: AgentsProcessor, provider: ModelProvider): ModelProvider {
  const models = new WeakMap<object, Model>();
  return {
    async getModel(name?: string): Promise<Model> {
      const model = await provider.getModel(name);
      let wrapped = models.get(model);
      if (wrapped === undefined) {
        wrapped = wrapModel(processor, model, name);
        models.set(model, wrapped);
      }
      return wrapped;
    },
  };
}

/**
 * Adds the processor with `addTraceProcessor` (next to the SDK's own
 * exporter, which it does not replace) and wraps the given runners' model
 * providers. Returns the uninstall function: the SDK cannot remove a
 * processor, so ours goes inert, and the runners get their providers back.
 */
export function instrumentOpenAIAgents(hooks: HookRegistry, options: OpenAIAgentsAdapterOptions = {}): () => void {
  const processor = new AgentsProcessor(new AdapterCore(hooks, options, options.platform ?? 'openai-agents'));
  addTraceProcessor(processor as unknown as TracingProcessor);
  const runners: readonly Runner[] = options.runner === undefined ? [] : Array.isArray(options.runner) ? options.runner : [options.runner as Runner];
  const restore: Array<() => void> = [];
  for (const runner of runners) {
    const config = runner.config as { modelProvider: ModelProvider };
    const original = config.modelProvider;
    config.modelProvider = wrapProvider(processor, original);
    restore.push(() => {
      config.modelProvider = original;
    });
  }
  let installed = true;
  return () => {
    if (!installed) return;
    installed = false;
    processor.dispose();
    for (const undo of restore) undo();
  };
}
