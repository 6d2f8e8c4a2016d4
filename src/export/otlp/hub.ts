/**
 * The OTLP side of one relay: the destinations it sends to, kept for the
 * relay's lifetime rather than per `plugins.toml` activation. The plugin
 * re-activates its configuration for every session; a destination's queue,
 * retries and counters outlive that, so a slow collector never holds up a
 * session's close, nothing queued is thrown away between sessions, and
 * `status()` keeps reporting what was sent, failed and dropped.
 *
 * @module
 */

import type { AtofEvent } from '../../formats/atof/types.ts';
import type { OpenTelemetrySettings } from '../../formats/plugins-toml/opentelemetry.ts';
import type { OutputHealth } from '../../relay/contract.ts';
import type { Logger } from '../../shared/logger.ts';
import { atExit, atLoopEnd } from '../../shared/exit-hook.ts';
import { SpanAssembler, type TreeRoot } from './assembler.ts';
import type { CostOf } from './mappings/types.ts';
import { logRecordOf } from './logs.ts';
import { OtlpPipeline, type PipelineOptions } from './pipeline.ts';
import { resourceOf, scopeOf } from './resource.ts';

/** What an activation feeds: every relay event, with its tree's root. */
export interface OtlpActivation {
  accept(event: AtofEvent, top: TreeRoot | null): void;
  /** Stops feeding; queued items keep going out in the background. */
  close(): void;
}

/** One destination's settings: what its pipeline is built with, but for what the hub supplies. */
type Destination = Omit<PipelineOptions, 'logger' | 'retry' | 'createExporter'>;

export class OtlpHub {
  private readonly pipelines = new Map<string, OtlpPipeline>();
  private readonly timeouts = new Map<string, number>();
  /** Removes the process hooks: a host that ends without `shutdown()` (see `watchProcessEnd`). */
  private unwatchProcessEnd: (() => void) | null = null;

  constructor(
    private readonly logger: Logger,
    private readonly createExporter?: PipelineOptions['createExporter'],
  ) {}

  /** Starts feeding the configured destinations. Synchronous; exporters load in the background. */
  activate(settings: OpenTelemetrySettings, options: { costOf?: CostOf } = {}): OtlpActivation | null {
    if (settings.traces.length === 0 && settings.logs.length === 0) return null;
    const feeds: ((event: AtofEvent, top: TreeRoot | null) => void)[] = [];
    for (const endpoint of settings.traces) {
      const pipeline = this.pipeline({ signal: 'traces', ...endpoint });
      const assembler = new SpanAssembler(endpoint, resourceOf(endpoint), scopeOf(endpoint), (span) => pipeline.push(span), options.costOf);
      feeds.push((event, top) => assembler.accept(event, top));
    }
    for (const logs of settings.logs) {
      const pipeline = this.pipeline({ signal: 'logs', ...logs });
      const resource = resourceOf(logs);
      const scope = scopeOf(logs);
      feeds.push((event, top) => {
        const record = logRecordOf(event, top, resource, scope, logs.minimumSeverity);
        if (record !== null) pipeline.push(record);
      });
    }
    let active = true;
    return {
      accept(event, top) {
        if (!active) return;
        for (const feed of feeds) feed(event, top);
      },
      close() {
        active = false;
      },
    };
  }

  outputs(): OutputHealth[] {
    return [...this.pipelines.values()].map((p) => p.health());
  }

  /** Sends what is queued now (retrying while the destination's `timeout_millis` allows); keeps the destinations open. */
  async flush(): Promise<void> {
    await Promise.all([...this.pipelines.entries()].map(([key, pipeline]) => pipeline.flush(Date.now() + (this.timeouts.get(key) ?? 10_000))));
  }

  /**
   * Sends what is queued, each destination within its `timeout_millis` (and
   * the caller's `budgetMs`), then stops them: what is left is counted as
   * dropped before this returns.
   */
  async shutdown(budgetMs = Number.POSITIVE_INFINITY): Promise<void> {
    const pipelines = [...this.pipelines.entries()];
    const budget = Math.max(0, budgetMs);
    await Promise.all(pipelines.map(([key, pipeline]) => pipeline.shutdown(Math.min(this.timeouts.get(key) ?? 10_000, budget))));
    this.unwatchProcessEnd?.();
    this.unwatchProcessEnd = null;
  }

  /**
   * A host that ends without `shutdown()`: when its event loop runs dry, the
   * destinations send what they hold (native's exporter threads often
   * get theirs out then too); at its exit, what could not go out is counted as
   * dropped and said, as the stream sinks and uploads say theirs.
   */
  private watchProcessEnd(): void {
    if (this.unwatchProcessEnd !== null) return;
    const pipelines = () => [...this.pipelines.values()];
    const removeLoopEnd = atLoopEnd(() => {
      const drains = pipelines()
        .map((pipeline) => pipeline.drainAtLoopEnd())
        .filter((drain) => drain !== undefined);
      return drains.length === 0 ? undefined : Promise.all(drains);
    });
    const removeExit = atExit(() => {
      for (const pipeline of pipelines()) pipeline.abandon('the process exited');
    });
    this.unwatchProcessEnd = () => {
      removeLoopEnd();
      removeExit();
    };
  }

  private pipeline(destination: Destination): OtlpPipeline {
    const key = JSON.stringify([destination.signal, destination.transport, destination.url, destination.headers]);
    let pipeline = this.pipelines.get(key);
    if (pipeline === undefined) {
      pipeline = new OtlpPipeline({
        signal: destination.signal,
        transport: destination.transport,
        url: destination.url,
        headers: destination.headers,
        timeoutMillis: destination.timeoutMillis,
        maxQueueSize: destination.maxQueueSize,
        maxExportBatchSize: destination.maxExportBatchSize,
        scheduledDelayMillis: destination.scheduledDelayMillis,
        logger: this.logger,
        ...(this.createExporter ? { createExporter: this.createExporter } : {}),
      });
      this.pipelines.set(key, pipeline);
      this.timeouts.set(key, destination.timeoutMillis);
      this.watchProcessEnd();
    }
    return pipeline;
  }
}

const hubs = new WeakMap<object, OtlpHub>();

/** The hub of a relay (one per relay object, created on first use). */
export function otlpHubOf(owner: object, logger: Logger): OtlpHub {
  let hub = hubs.get(owner);
  if (hub === undefined) {
    hub = new OtlpHub(logger);
    hubs.set(owner, hub);
  }
  return hub;
}

/** The hub of a relay if it ever had one, without creating it. */
export function existingOtlpHub(owner: object): OtlpHub | undefined {
  return hubs.get(owner);
}
