// Human in the loop, as the Agents SDK docs write it: tools with
// `needsApproval`, a run that stops with interruptions, `state.approve` /
// `state.reject`, and the run resumed from its state, streamed or not. The
// pause and the resume are one session and one trajectory: the approval
// requests, the decisions, the approved call's result and the rejected
// call's outcome, by call id.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, RunState, run, tool, type RunResult, type StreamedRunResult } from '@openai/agents';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { agentSteps, hooks, observation, onlyTrajectory, sdkTotals, stepsOf, toolCallIds, tokenTotals, TRACING, useTracing } from './support.ts';
import { FakeOpenAI, useAsDefaultClient } from './wire.ts';

const api = new FakeOpenAI();
useAsDefaultClient(api);

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const cancelOrder = tool({
  name: 'cancel_order',
  description: 'Cancel an order',
  parameters: z.object({ orderId: z.number() }),
  needsApproval: true,
  execute: async ({ orderId }) => `Cancelled order ${orderId}`,
});
const refundOrder = tool({
  name: 'refund_order',
  description: 'Refund an order',
  parameters: z.object({ orderId: z.number() }),
  needsApproval: async () => true,
  execute: async ({ orderId }) => `Refunded order ${orderId}`,
});

describe('OpenAI Agents SDK tool approvals', () => {
  for (const tracing of TRACING) {
    for (const stream of [false, true]) {
      it(`approve one call, reject the other, resume: one session, one trajectory (${stream ? 'streamed' : 'not streamed'}, ${tracing})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-4.1': [
            {
              calls: [
                { id: 'call_cancel', name: 'cancel_order', args: { orderId: 123 } },
                { id: 'call_refund', name: 'refund_order', args: { orderId: 456 } },
              ],
              usage: { input: 80, output: 24 },
            },
            { text: 'Order 123 is cancelled; the refund of 456 was not approved.', usage: { input: 150, output: 16, cached: 64 } },
          ],
        });
        const recorded = recordedPlugin('agents-approvals');
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const agent = new Agent({ name: 'Customer support', instructions: 'Help with orders.', model: 'gpt-4.1', tools: [cancelOrder, refundOrder] });

        const go = async (input: Parameters<typeof run>[1]): Promise<RunResult<any, any> | StreamedRunResult<any, any>> => {
          if (!stream) return run(agent, input);
          const streamed = await run(agent, input, { stream: true });
          for await (const _event of streamed) {
            // drained, as an app rendering the stream would
          }
          await streamed.completed;
          return streamed;
        };
        let result = await go('Cancel order 123 and refund order 456.');
        expect(result.interruptions.map((item) => item.name)).toEqual(['cancel_order', 'refund_order']);
        // Paused: the turn ended, asking; the session stays open for the resume.
        expect(hooks(recorded, 'pre_approval_request').map((payload) => [payload.tool_call_id, payload.command])).toEqual([
          ['call_cancel', '{"orderId":123}'],
          ['call_refund', '{"orderId":456}'],
        ]);
        expect(hooks(recorded, 'on_session_end')).toMatchObject([{ interrupted: true, turn_exit_reason: 'approval_required', pending_approvals: ['call_cancel', 'call_refund'] }]);
        expect(hooks(recorded, 'on_session_finalize')).toEqual([]);

        while (result.interruptions.length > 0) {
          for (const interruption of result.interruptions) {
            if (interruption.name === 'cancel_order') result.state.approve(interruption);
            else result.state.reject(interruption);
          }
          result = await go(result.state);
        }
        expect(result.finalOutput).toBe('Order 123 is cancelled; the refund of 456 was not approved.');

        const sessions = new Set(recorded.log.map((entry) => entry.payload.session_id).filter((id) => id !== undefined));
        expect(sessions.size).toBe(1);
        expect(hooks(recorded, 'post_approval_response').map((payload) => [payload.tool_call_id, payload.choice])).toEqual([
          ['call_cancel', 'once'],
          ['call_refund', 'deny'],
        ]);
        expect(hooks(recorded, 'pre_llm_call').map((payload) => payload.is_first_turn)).toEqual([true, false]);
        const ended = hooks(recorded, 'post_tool_call');
        expect(ended.map((payload) => [payload.tool_call_id, payload.status, payload.result])).toEqual(
          expect.arrayContaining([
            ['call_cancel', 'ok', 'Cancelled order 123'],
            ['call_refund', 'denied', 'Tool execution was not approved.'],
          ]),
        );
        expect(hooks(recorded, 'on_session_finalize')).toHaveLength(1);

        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = onlyTrajectory(atif);
        expect(stepsOf(doc)[0]).toMatchObject({ source: 'user', message: 'Cancel order 123 and refund order 456.' });
        expect(toolCallIds(doc)).toEqual(['call_cancel', 'call_refund']);
        expect(observation(doc, 'call_cancel')).toMatchObject({ content: 'Cancelled order 123', extra: { metadata: { status: 'ok' } } });
        expect(observation(doc, 'call_refund')).toMatchObject({ content: 'Tool execution was not approved.', extra: { metadata: { status: 'denied' } } });
        expect(agentSteps(doc).at(-1)!.message).toBe('Order 123 is cancelled; the refund of 456 was not approved.');
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
      }, 30_000);
    }
  }

  for (const stream of [false, true]) {
    it(`a resume whose decisions are all rejections (no tool runs, the next model call is its first sign): each decision and denial recorded, with the text the model was told (${stream ? 'streamed' : 'not streamed'})`, async () => {
      useTracing('tracing off');
      api.load({
        'gpt-4.1': [
          {
            calls: [
              { id: 'call_cancel', name: 'cancel_order', args: { orderId: 1 } },
              { id: 'call_refund', name: 'refund_order', args: { orderId: 2 } },
            ],
            usage: { input: 30, output: 8 },
          },
          { text: 'Nothing was changed.', usage: { input: 50, output: 5 } },
        ],
      });
      const recorded = recordedPlugin('agents-approvals-rejected');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const agent = new Agent({ name: 'Customer support', instructions: 'Help with orders.', model: 'gpt-4.1', tools: [cancelOrder, refundOrder] });
      const first = await run(agent, 'Cancel order 1, refund order 2.');
      const [cancel, refund] = first.interruptions;
      first.state.reject(cancel!, { message: 'The customer changed their mind.' });
      first.state.reject(refund!);
      let resumed: RunResult<any, any> | StreamedRunResult<any, any>;
      if (stream) {
        const streamed = await run(agent, first.state, { stream: true });
        for await (const _event of streamed) {
          // drained
        }
        await streamed.completed;
        resumed = streamed;
      } else resumed = await run(agent, first.state);
      expect(resumed.finalOutput).toBe('Nothing was changed.');
      expect(hooks(recorded, 'post_approval_response').map((payload) => [payload.tool_call_id, payload.choice])).toEqual([
        ['call_cancel', 'deny'],
        ['call_refund', 'deny'],
      ]);
      expect(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload.status, payload.result])).toEqual([
        ['call_cancel', 'denied', 'The customer changed their mind.'],
        ['call_refund', 'denied', 'Tool execution was not approved.'],
      ]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = onlyTrajectory(atif);
      expect(observation(doc, 'call_cancel')).toMatchObject({ content: 'The customer changed their mind.', extra: { metadata: { status: 'denied' } } });
      expect(observation(doc, 'call_refund')).toMatchObject({ content: 'Tool execution was not approved.', extra: { metadata: { status: 'denied' } } });
      expect(tokenTotals(doc)).toEqual(sdkTotals(resumed.state.usage));
    }, 30_000);
  }

  it('the calls a run paused for are answered in the SDK\'s order, whichever finishes first: a rejection before a slower approved call, two approved calls in their order', async () => {
    useTracing('tracing on');
    let releaseSlow!: () => void;
    const slowStarted = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    const slowCancel = tool({
      name: 'cancel_order',
      description: 'Cancel an order',
      parameters: z.object({ orderId: z.number() }),
      needsApproval: true,
      // Slower than the call after it: it finishes once that one has.
      execute: async ({ orderId }) => {
        await slowStarted;
        return `Cancelled order ${orderId}`;
      },
    });
    const fastRefund = tool({
      name: 'refund_order',
      description: 'Refund an order',
      parameters: z.object({ orderId: z.number() }),
      needsApproval: async () => true,
      execute: async ({ orderId }) => {
        setTimeout(releaseSlow, 5);
        return `Refunded order ${orderId}`;
      },
    });
    api.load({
      'gpt-4.1': [
        {
          calls: [
            { id: 'call_denied', name: 'cancel_order', args: { orderId: 1 } },
            { id: 'call_slow', name: 'cancel_order', args: { orderId: 2 } },
            { id: 'call_fast', name: 'refund_order', args: { orderId: 3 } },
          ],
          usage: { input: 30, output: 8 },
        },
        { text: 'Done.', usage: { input: 50, output: 5 } },
      ],
    });
    const recorded = recordedPlugin('agents-approvals-order');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const agent = new Agent({ name: 'Customer support', instructions: 'Help with orders.', model: 'gpt-4.1', tools: [slowCancel, fastRefund] });
    const first = await run(agent, 'Cancel 1 and 2, refund 3.');
    expect(first.interruptions.map((item) => (item.rawItem as { callId: string }).callId)).toEqual(['call_denied', 'call_slow', 'call_fast']);
    const [denied, slow, fast] = first.interruptions;
    first.state.reject(denied!);
    first.state.approve(slow!);
    first.state.approve(fast!);
    const resumed = await run(agent, first.state);
    expect(resumed.finalOutput).toBe('Done.');
    // The SDK's order, as the next request tells the model.
    const told = (api.requests.at(-1)!.body.input as Array<Record<string, any>>).filter((item) => item.type === 'function_call_output').map((item) => item.call_id);
    expect(told).toEqual(['call_denied', 'call_slow', 'call_fast']);
    expect(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload.status])).toEqual([
      ['call_denied', 'denied'],
      ['call_slow', 'ok'],
      ['call_fast', 'ok'],
    ]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = onlyTrajectory(atif);
    const results = agentSteps(doc)[0]!.observation.results.map((result: Record<string, any>) => result.source_call_id);
    expect(results).toEqual(told);
  }, 30_000);

  it('a tool rejected for the rest of the run (alwaysReject): its later calls, answered without asking, are denied with the text the model was told, in the order the SDK answers them', async () => {
    useTracing('tracing off');
    const lookUp = tool({ name: 'look_up', description: 'Look an order up', parameters: z.object({ orderId: z.number() }), execute: async ({ orderId }) => `Order ${orderId}: shipped` });
    api.load({
      'gpt-4.1': [
        { calls: [{ id: 'call_first', name: 'cancel_order', args: { orderId: 1 } }], usage: { input: 30, output: 8 } },
        {
          calls: [
            { id: 'call_look', name: 'look_up', args: { orderId: 2 } },
            { id: 'call_again', name: 'cancel_order', args: { orderId: 2 } },
          ],
          usage: { input: 60, output: 9 },
        },
        { text: 'I may not cancel orders.', usage: { input: 90, output: 6 } },
      ],
    });
    const recorded = recordedPlugin('agents-approvals-always-reject');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const agent = new Agent({ name: 'Customer support', instructions: 'Help with orders.', model: 'gpt-4.1', tools: [cancelOrder, lookUp] });
    const first = await run(agent, 'Cancel orders 1 and 2.');
    first.state.reject(first.interruptions[0]!, { alwaysReject: true, message: 'Cancelling is not allowed.' });
    const resumed = await run(agent, first.state);
    expect(resumed.interruptions).toEqual([]);
    expect(resumed.finalOutput).toBe('I may not cancel orders.');
    // What the model was told, in the SDK's order.
    const told = (api.requests.at(-1)!.body.input as Array<Record<string, any>>).filter((item) => item.type === 'function_call_output').map((item) => [item.call_id, item.output]);
    expect(told.slice(-2)).toEqual([
      ['call_look', 'Order 2: shipped'],
      ['call_again', 'Cancelling is not allowed.'],
    ]);
    // Asked once (the first call); the second was never asked.
    expect(hooks(recorded, 'pre_approval_request').map((payload) => payload.tool_call_id)).toEqual(['call_first']);
    expect(hooks(recorded, 'post_approval_response').map((payload) => [payload.tool_call_id, payload.choice])).toEqual([['call_first', 'deny']]);
    expect(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload.status, payload.result])).toEqual([
      ['call_first', 'denied', 'Cancelling is not allowed.'],
      ['call_look', 'ok', 'Order 2: shipped'],
      ['call_again', 'denied', 'Cancelling is not allowed.'],
    ]);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = onlyTrajectory(atif);
    expect(agentSteps(doc)[1]!.observation.results.map((result: Record<string, any>) => [result.source_call_id, result.content])).toEqual(told.slice(-2));
    expect(tokenTotals(doc)).toEqual(sdkTotals(resumed.state.usage));
  }, 30_000);

  it('a copy of the paused state (toString, then fromString) resumes the same session while the original lives', async () => {
    useTracing('tracing on');
    api.load({
      'gpt-4.1': [
        { calls: [{ id: 'call_cancel', name: 'cancel_order', args: { orderId: 7 } }], usage: { input: 40, output: 9 } },
        { text: 'Order 7 is cancelled.', usage: { input: 60, output: 6 } },
      ],
    });
    const recorded = recordedPlugin('agents-approvals-serialized');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const agent = new Agent({ name: 'Customer support', instructions: 'Help with orders.', model: 'gpt-4.1', tools: [cancelOrder] });
    const first = await run(agent, 'Cancel order 7.');
    const saved = first.state.toString();
    // Later, elsewhere: the state comes back from storage, is approved, and the run resumes.
    const state = await RunState.fromString(agent, saved);
    for (const interruption of state.getInterruptions()) state.approve(interruption);
    const resumed = await run(agent, state);
    expect(resumed.finalOutput).toBe('Order 7 is cancelled.');
    // One session, closed by the resumed run itself.
    expect(hooks(recorded, 'on_session_start')).toHaveLength(1);
    expect(hooks(recorded, 'on_session_finalize')).toHaveLength(1);
    expect(new Set(recorded.log.map((entry) => entry.payload.session_id).filter((id) => id !== undefined)).size).toBe(1);
    expect(hooks(recorded, 'post_approval_response')).toMatchObject([{ tool_call_id: 'call_cancel', choice: 'once' }]);
    expect(hooks(recorded, 'post_tool_call')).toMatchObject([{ tool_call_id: 'call_cancel', status: 'ok', result: 'Cancelled order 7' }]);
    expect(first.interruptions).toHaveLength(1);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = onlyTrajectory(atif);
    expect(toolCallIds(doc)).toEqual(['call_cancel']);
    expect(agentSteps(doc).at(-1)!.message).toBe('Order 7 is cancelled.');
  }, 30_000);
});
