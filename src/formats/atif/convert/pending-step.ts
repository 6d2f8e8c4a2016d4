/**
 * The agent step being built: its `extra` parts are gathered while its tool
 * calls run and written when the next LLM call (or the end) closes it.
 *
 * @module
 */

import type { Json } from '../../../shared/json.ts';
import type { AtifAncestry, AtifInvocation, AtifStep } from '../types.ts';
import { stepExtra } from './step-builders.ts';

export interface ToolMetadata {
  ancestry: AtifAncestry;
  invocation: AtifInvocation;
}

export class PendingAgentStep {
  stepIndex: number | undefined;
  ancestry: AtifAncestry | undefined;
  invocation: AtifInvocation | undefined;
  llmRequest: Json | undefined;
  llmResponse: Json | undefined;
  tools: ToolMetadata[] = [];
  toolCallOrder: string[] = [];

  /** Writes the step's `extra` into `steps`; `plain` as `sortPayload` takes it. */
  finalizeInto(steps: AtifStep[], plain: Set<object>): void {
    const stepIndex = this.stepIndex;
    const ancestry = this.ancestry;
    this.stepIndex = undefined;
    this.ancestry = undefined;
    if (stepIndex === undefined || ancestry === undefined) return;
    const step = steps[stepIndex];
    if (step === undefined) return;
    this.sortTools();
    const tools = this.tools;
    this.tools = [];
    step.extra = stepExtra({
      ancestry,
      invocation: this.invocation,
      llmRequest: this.llmRequest,
      llmResponse: this.llmResponse,
      toolAncestry: tools.map((tool) => tool.ancestry),
      toolInvocations: tools.map((tool) => tool.invocation),
    }, plain);
    this.invocation = undefined;
    this.llmRequest = undefined;
    this.llmResponse = undefined;
  }

  setCurrent(stepIndex: number, ancestry: AtifAncestry, invocation: AtifInvocation, order: string[], response: Json): void {
    this.stepIndex = stepIndex;
    this.ancestry = ancestry;
    this.invocation = invocation;
    this.llmResponse = response;
    this.tools = [];
    this.toolCallOrder = order;
  }

  pushToolCallId(id: string): void {
    if (!this.toolCallOrder.includes(id)) this.toolCallOrder.push(id);
  }

  hasActiveStep(): boolean {
    return this.stepIndex !== undefined;
  }

  hasToolCallId(id: string): boolean {
    return this.toolCallOrder.includes(id);
  }

  private sortTools(): void {
    if (this.toolCallOrder.length === 0 || this.tools.length === 0) return;
    const rank = (tool: ToolMetadata): number => {
      const id = tool.invocation.invocation_id;
      const position = id === undefined ? -1 : this.toolCallOrder.indexOf(id);
      return position === -1 ? Number.MAX_SAFE_INTEGER : position;
    };
    this.tools = this.tools
      .map((tool, index) => ({ tool, index, rank: rank(tool) }))
      .sort((a, b) => a.rank - b.rank || a.index - b.index)
      .map((entry) => entry.tool);
  }
}
