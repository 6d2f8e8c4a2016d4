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
  /**
   * The step's tools' ancestry and invocations, side by side: the two lists
   * are the step's `extra.tool_ancestry` and `extra.tool_invocations`
   * themselves once it closes, so a tool end costs no wrapper and no list is
   * copied.
   */
  toolAncestry: AtifAncestry[] = [];
  toolInvocations: AtifInvocation[] = [];
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
    const toolAncestry = this.toolAncestry;
    const toolInvocations = this.toolInvocations;
    // Handed to the step: the next step's tools go into lists of their own (empty ones are not handed over).
    if (toolAncestry.length > 0) {
      this.toolAncestry = [];
      this.toolInvocations = [];
    }
    step.extra = stepExtra({
      ancestry,
      invocation: this.invocation,
      llmRequest: this.llmRequest,
      llmResponse: this.llmResponse,
      toolAncestry,
      toolInvocations,
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
    // Tools gathered for a step that was never closed are dropped (usually there are none: the lists were handed over).
    if (this.toolAncestry.length > 0) {
      this.toolAncestry = [];
      this.toolInvocations = [];
    }
    this.toolCallOrder = order;
  }

  /** Adds one tool's ancestry and invocation to the step. */
  pushTool(ancestry: AtifAncestry, invocation: AtifInvocation): void {
    this.toolAncestry.push(ancestry);
    this.toolInvocations.push(invocation);
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

  /** The tool's place in the step's call order; a tool whose call the step did not request goes last. */
  private rank(index: number): number {
    const id = (this.toolInvocations[index] as AtifInvocation).invocation_id;
    const position = id === undefined ? -1 : this.toolCallOrder.indexOf(id);
    return position === -1 ? Number.MAX_SAFE_INTEGER : position;
  }

  /** Orders the tools by their call's place in the step's call order (stable); tools usually end in that order already. */
  private sortTools(): void {
    const count = this.toolInvocations.length;
    if (this.toolCallOrder.length === 0 || count < 2) return;
    let inOrder = true;
    for (let i = 1, previous = this.rank(0); i < count && inOrder; i++) {
      const rank = this.rank(i);
      inOrder = previous <= rank;
      previous = rank;
    }
    if (inOrder) return;
    const order = Array.from({ length: count }, (_, index) => ({ index, rank: this.rank(index) }));
    order.sort((a, b) => a.rank - b.rank || a.index - b.index);
    const ancestry = this.toolAncestry;
    const invocations = this.toolInvocations;
    this.toolAncestry = order.map((entry) => ancestry[entry.index] as AtifAncestry);
    this.toolInvocations = order.map((entry) => invocations[entry.index] as AtifInvocation);
  }
}
