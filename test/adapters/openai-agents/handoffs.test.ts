// Handoffs as the Agents SDK docs write them (`Agent` with `handoffs: [...]`,
// `run()`), on the real OpenAIResponsesModel and OpenAIChatCompletionsModel
// over the real `openai` client and a fake fetch: the agent a handoff goes to
// is a sub-agent of the run, linked to the transfer call, as the LangChain
// adapter records the agents of a LangGraph graph. A chain of handoffs nests
// (each one a sub-agent of the agent that handed off), a handoff back to the
// agent the run started with ends the sub-agent, a second turn started with
// `result.lastAgent` is that agent's own, and an approval asked inside a
// handed-to agent is asked and answered in that agent's trajectories. Tokens
// over the trajectories equal the SDK's `result.state.usage`; the memory relay
// writes what native writes from the same hooks.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, handoff, OpenAIChatCompletionsModel, OpenAIResponsesModel, run, RunState, tool, type RunResult, type StreamedRunResult } from '@openai/agents';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../support.ts';
import { sameOnNative } from '../same-on-native.ts';
import { agentSteps, expectRunsClosed, hooks, observation, onlyTrajectory, sdkTotals, stepsOf, toolCallIds, tokenTotals, TRACING, useTracing } from './support.ts';
import { dated, FakeOpenAI } from './wire.ts';

const api = new FakeOpenAI();
type Api = 'responses' | 'chat';
const modelOn = (kind: Api, name: string) => (kind === 'responses' ? new OpenAIResponsesModel(api.client(), name) : new OpenAIChatCompletionsModel(api.client(), name));

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

const lookupInvoice = tool({
  name: 'lookup_invoice',
  description: 'Look an invoice up',
  parameters: z.object({ invoice: z.string() }),
  execute: async ({ invoice }) => `${invoice}: $40, paid twice`,
});
const issueRefund = tool({
  name: 'issue_refund',
  description: 'Refund an invoice',
  parameters: z.object({ invoice: z.string() }),
  execute: async ({ invoice }) => `Refunded $40 on ${invoice}`,
});
const approvedRefund = tool({
  name: 'issue_refund',
  description: 'Refund an invoice',
  parameters: z.object({ invoice: z.string() }),
  needsApproval: true,
  execute: async ({ invoice }) => `Refunded $40 on ${invoice}`,
});

/** The embedded sub-agent trajectories, `count` of them, each valid. */
function subagents(doc: AtifDoc, count: number): AtifDoc[] {
  const children = (doc.subagent_trajectories ?? []) as AtifDoc[];
  expect(children).toHaveLength(count);
  for (const child of children) expect(validateAtif(child)).toEqual([]);
  return children;
}

/** The trajectory the observation of a call refers to. */
const refOf = (doc: AtifDoc, callId: string): unknown => observation(doc, callId)?.subagent_trajectory_ref?.[0]?.trajectory_id;
const modelsOf = (doc: AtifDoc): unknown[] => agentSteps(doc).map((step) => step.model_name);

async function go(agent: Agent<any, any>, input: Parameters<typeof run>[1], stream: boolean): Promise<RunResult<any, any> | StreamedRunResult<any, any>> {
  if (!stream) return run(agent, input);
  const streamed = await run(agent, input, { stream: true });
  for await (const _event of streamed) {
    // drained, as an app rendering the stream would
  }
  await streamed.completed;
  return streamed;
}

describe('OpenAI Agents SDK handoffs: the agent handed to is a sub-agent', () => {
  for (const kind of ['responses', 'chat'] as const) {
    for (const stream of [false, true]) {
      for (const tracing of TRACING) {
        it(`a chain triage -> billing -> refunds: each agent its own trajectory, nested under the transfer call that reached it (${kind}, ${stream ? 'streamed' : 'not streamed'}, ${tracing})`, async () => {
          useTracing(tracing);
          api.load({
            'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
            'gpt-4.1': [
              { calls: [{ id: 'call_invoice', name: 'lookup_invoice', args: { invoice: 'INV-7' } }], usage: { input: 80, output: 12, cached: 32 } },
              { text: 'Passing you to refunds.', calls: [{ id: 'call_to_refunds', name: 'transfer_to_refunds', args: {} }], usage: { input: 110, output: 9 } },
            ],
            'gpt-4o': [
              { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 140, output: 14 } },
              { text: 'Refund of $40 issued for INV-7.', usage: { input: 170, output: 11, cached: 64 } },
            ],
          });
          const recorded = recordedPlugin('agents-handoff-chain');
          uninstall = instrumentOpenAIAgents(recorded.hooks);
          const refunds = new Agent({ name: 'refunds', instructions: 'You issue refunds.', model: modelOn(kind, 'gpt-4o'), tools: [issueRefund], handoffDescription: 'Refunds' });
          const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', model: modelOn(kind, 'gpt-4.1'), tools: [lookupInvoice], handoffs: [refunds], handoffDescription: 'Billing' });
          const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: modelOn(kind, 'gpt-4.1-mini'), handoffs: [billing] });

          const result = await go(triage, 'I was charged twice for INV-7.', stream);
          expect(result.finalOutput).toBe('Refund of $40 issued for INV-7.');
          expect(result.lastAgent?.name).toBe('refunds');
          expect(api.requests.map((request) => request.api)).toEqual(Array(5).fill(kind));

          const { atif, counters } = await recorded.finish();
          expectNothingLost(counters);
          expectRunsClosed(recorded);
          const doc = onlyTrajectory(atif);
          expect(doc.agent.name).toBe('triage');
          // The run's own agent: its one request, the handoff, whose observation refers to billing's trajectory.
          expect(modelsOf(doc)).toEqual([dated('gpt-4.1-mini')]);
          expect(toolCallIds(doc)).toEqual(['call_to_billing']);
          expect(observation(doc, 'call_to_billing')?.content).toBe('{"assistant":"billing"}');
          const [billingDoc] = subagents(doc, 1);
          expect(refOf(doc, 'call_to_billing')).toBe(billingDoc!.trajectory_id);
          expect(billingDoc!.session_id).toBe(`${doc.session_id}:sub:call_to_billing`);
          expect(modelsOf(billingDoc!)).toEqual([dated('gpt-4.1'), dated('gpt-4.1')]);
          expect(toolCallIds(billingDoc!)).toEqual(['call_invoice', 'call_to_refunds']);
          expect(observation(billingDoc!, 'call_invoice')?.content).toBe('INV-7: $40, paid twice');
          const [refundsDoc] = subagents(billingDoc!, 1);
          expect(refOf(billingDoc!, 'call_to_refunds')).toBe(refundsDoc!.trajectory_id);
          expect(modelsOf(refundsDoc!)).toEqual([dated('gpt-4o'), dated('gpt-4o')]);
          expect(toolCallIds(refundsDoc!)).toEqual(['call_refund']);
          expect(agentSteps(refundsDoc!).at(-1)!.message).toBe('Refund of $40 issued for INV-7.');
          // Each agent's tokens in its own trajectory; together, the SDK's count.
          expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
          expect(agentSteps(doc).map((step) => step.metrics.prompt_tokens)).toEqual([50]);
          expect(agentSteps(billingDoc!).map((step) => step.metrics.prompt_tokens)).toEqual([80, 110]);

          // The links, the names, and how each ended: the run's answer is the last agent's, and each agent that led to it ends with it.
          expect(hooks(recorded, 'subagent_start').map((p) => [p.child_role, p.tool_call_id, p.parent_session_id, p.child_session_id, p.child_goal])).toEqual([
            ['billing', 'call_to_billing', doc.session_id, billingDoc!.session_id, 'I was charged twice for INV-7.'],
            ['refunds', 'call_to_refunds', billingDoc!.session_id, refundsDoc!.session_id, 'I was charged twice for INV-7.'],
          ]);
          expect(hooks(recorded, 'subagent_stop').map((p) => [p.child_role, p.child_status, p.child_summary])).toEqual([
            ['refunds', 'completed', 'Refund of $40 issued for INV-7.'],
            ['billing', 'completed', 'Refund of $40 issued for INV-7.'],
          ]);
          expect(hooks(recorded, 'post_llm_call').map((p) => [p.session_id, p.assistant_response])).toEqual([
            [refundsDoc!.session_id, 'Refund of $40 issued for INV-7.'],
            [billingDoc!.session_id, 'Refund of $40 issued for INV-7.'],
            [doc.session_id, 'Refund of $40 issued for INV-7.'],
          ]);
          // Each request went to the turn of the agent that made it, with that agent's instructions.
          expect(hooks(recorded, 'pre_api_request').map((p) => [p.session_id, p.request.body.messages[0].content])).toEqual([
            [doc.session_id, 'Route the customer.'],
            [billingDoc!.session_id, 'You answer billing questions.'],
            [billingDoc!.session_id, 'You answer billing questions.'],
            [refundsDoc!.session_id, 'You issue refunds.'],
            [refundsDoc!.session_id, 'You issue refunds.'],
          ]);
          await sameOnNative(recorded);
        }, 30_000);
      }
    }
  }

  for (const tracing of TRACING) {
    it(`a handoff back to the agent the run started with: the sub-agent ends, completed, and the first agent answers in its own steps (${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1-mini': [
          { calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } },
          { text: 'Your invoice INV-7 is paid; nothing is due.', usage: { input: 160, output: 12, cached: 64 } },
        ],
        'gpt-4.1': [
          { calls: [{ id: 'call_invoice', name: 'lookup_invoice', args: { invoice: 'INV-7' } }], usage: { input: 80, output: 12 } },
          { text: 'INV-7 is paid.', calls: [{ id: 'call_back', name: 'transfer_to_triage', args: {} }], usage: { input: 120, output: 10 } },
        ],
      });
      const recorded = recordedPlugin('agents-handoff-back');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const triage = new Agent({ name: 'triage', instructions: 'Route the customer, then answer.', model: modelOn('chat', 'gpt-4.1-mini'), handoffDescription: 'Triage' });
      const billing = new Agent({ name: 'billing', instructions: 'You look invoices up.', model: modelOn('chat', 'gpt-4.1'), tools: [lookupInvoice], handoffs: [triage], handoffDescription: 'Billing' });
      triage.handoffs.push(billing);

      const result = await run(triage, 'Is INV-7 paid?');
      expect(result.finalOutput).toBe('Your invoice INV-7 is paid; nothing is due.');
      expect(result.lastAgent?.name).toBe('triage');
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      const doc = onlyTrajectory(atif);
      expect(modelsOf(doc)).toEqual([dated('gpt-4.1-mini'), dated('gpt-4.1-mini')]);
      expect(toolCallIds(doc)).toEqual(['call_to_billing']);
      expect(agentSteps(doc).at(-1)!.message).toBe('Your invoice INV-7 is paid; nothing is due.');
      const [billingDoc] = subagents(doc, 1);
      expect(refOf(doc, 'call_to_billing')).toBe(billingDoc!.trajectory_id);
      expect(toolCallIds(billingDoc!)).toEqual(['call_invoice', 'call_back']);
      expect(observation(billingDoc!, 'call_back')?.content).toBe('{"assistant":"triage"}');
      expect(subagents(billingDoc!, 0)).toEqual([]);
      expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
      // Billing handed back: completed with its own last words, before the run's turn ended.
      expect(hooks(recorded, 'subagent_stop').map((p) => [p.child_role, p.tool_call_id, p.child_status, p.child_summary])).toEqual([['billing', 'call_to_billing', 'completed', 'INV-7 is paid.']]);
      expect(hooks(recorded, 'on_session_end').map((p) => [p.session_id, p.completed])).toEqual([[billingDoc!.session_id, true], [doc.session_id, true]]);
      await sameOnNative(recorded);
    }, 30_000);
  }

  it('a second turn started with result.lastAgent: that agent is the run\'s own, its steps the turn\'s', async () => {
    useTracing('tracing on');
    api.load({
      'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
      'gpt-4.1': [
        { text: 'INV-7 was charged twice.', usage: { input: 90, output: 9 } },
        { calls: [{ id: 'call_invoice', name: 'lookup_invoice', args: { invoice: 'INV-7' } }], usage: { input: 130, output: 12 } },
        { text: 'Both charges were $40.', usage: { input: 170, output: 8, cached: 64 } },
      ],
    });
    const recorded = recordedPlugin('agents-handoff-last-agent');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', model: modelOn('responses', 'gpt-4.1'), tools: [lookupInvoice], handoffDescription: 'Billing' });
    const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: modelOn('responses', 'gpt-4.1-mini'), handoffs: [billing] });

    const first = await run(triage, 'Why was I charged twice?');
    expect(first.lastAgent?.name).toBe('billing');
    const second = await run(first.lastAgent!, [...first.history, { role: 'user', content: 'How much was each charge?' }]);
    expect(second.finalOutput).toBe('Both charges were $40.');

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expectRunsClosed(recorded);
    expect(atif).toHaveLength(2);
    for (const doc of atif) expect(validateAtif(doc)).toEqual([]);
    // Two runs, two trajectories (files in name order): the first run's is the one whose session the sub-agent's hangs from.
    const firstSession = hooks(recorded, 'subagent_start')[0]!.parent_session_id;
    const firstDoc = atif.find((doc) => doc.session_id === firstSession)!;
    const secondDoc = atif.find((doc) => doc !== firstDoc)!;
    expect(firstDoc.agent.name).toBe('triage');
    expect(subagents(firstDoc, 1)[0]!.agent.name).toBe('billing');
    expect(tokenTotals(firstDoc)).toEqual(sdkTotals(first.state.usage));
    // The second run starts with billing: billing's own trajectory, no sub-agent.
    expect(secondDoc.agent.name).toBe('billing');
    expect(subagents(secondDoc, 0)).toEqual([]);
    expect(modelsOf(secondDoc)).toEqual([dated('gpt-4.1'), dated('gpt-4.1')]);
    expect(toolCallIds(secondDoc)).toEqual(['call_invoice']);
    expect(tokenTotals(secondDoc)).toEqual(sdkTotals(second.state.usage));
    expect(hooks(recorded, 'subagent_start')).toHaveLength(1);
    await sameOnNative(recorded);
  }, 30_000);

  for (const tracing of TRACING) {
    it(`an agent used as a tool by the agent handed to: a sub-agent of that agent's call, inside its trajectory (${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
        'gpt-4.1': [
          { calls: [{ id: 'call_ask_ledger', name: 'ask_ledger', args: { input: 'INV-7' } }], usage: { input: 90, output: 10 } },
          { text: 'INV-7 was paid twice.', usage: { input: 130, output: 7 } },
        ],
        'gpt-4o': [{ text: 'INV-7: two payments of $40.', usage: { input: 30, output: 9 } }],
      });
      const recorded = recordedPlugin('agents-handoff-as-tool');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const ledger = new Agent({ name: 'ledger', instructions: 'You read the ledger.', model: modelOn('responses', 'gpt-4o') });
      const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', model: modelOn('responses', 'gpt-4.1'), tools: [ledger.asTool({ toolName: 'ask_ledger', toolDescription: 'Ask the ledger' })], handoffDescription: 'Billing' });
      const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: modelOn('responses', 'gpt-4.1-mini'), handoffs: [billing] });
      const result = await run(triage, 'Was INV-7 paid twice?');
      expect(result.finalOutput).toBe('INV-7 was paid twice.');
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      const doc = onlyTrajectory(atif);
      const [billingDoc] = subagents(doc, 1);
      const [ledgerDoc] = subagents(billingDoc!, 1);
      expect(refOf(billingDoc!, 'call_ask_ledger')).toBe(ledgerDoc!.trajectory_id);
      expect(ledgerDoc!.session_id).toBe(`${billingDoc!.session_id}:sub:call_ask_ledger`);
      expect(agentSteps(ledgerDoc!).map((step) => step.message)).toEqual(['INV-7: two payments of $40.']);
      expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
      await sameOnNative(recorded);
    }, 30_000);

    it(`a handed-to agent whose request fails: its turn and every turn above it end failed with the error, nothing left open (${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
        'gpt-4.1': [{ status: 500, message: 'billing model is down' }],
      });
      const recorded = recordedPlugin('agents-handoff-fails');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', model: modelOn('chat', 'gpt-4.1'), handoffDescription: 'Billing' });
      const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: modelOn('chat', 'gpt-4.1-mini'), handoffs: [billing] });
      await expect(run(triage, 'Is INV-7 paid?')).rejects.toThrow(/billing model is down/);
      const { counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      const root = hooks(recorded, 'on_session_start')[0]!.session_id as string;
      expect(hooks(recorded, 'api_request_error').map((p) => p.session_id)).toEqual([`${root}:sub:call_to_billing`]);
      expect(hooks(recorded, 'on_session_end').map((p) => [p.session_id, p.failed, p.error_message])).toEqual([
        [`${root}:sub:call_to_billing`, true, expect.stringMatching(/billing model is down/)],
        [root, true, expect.stringMatching(/billing model is down/)],
      ]);
      expect(hooks(recorded, 'subagent_stop').map((p) => [p.child_role, p.child_status])).toEqual([['billing', 'failed']]);
      await sameOnNative(recorded);
    }, 30_000);
  }

  for (const stream of [false, true]) {
    for (const tracing of TRACING) {
      it(`an approval (needsApproval) asked inside the agent handed to: asked in its trajectory, answered in its next turn there, one session (${stream ? 'streamed' : 'not streamed'}, ${tracing})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
          'gpt-4.1': [
            { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 90, output: 14 } },
            { text: 'Refunded $40 on INV-7.', usage: { input: 140, output: 9, cached: 64 } },
          ],
        });
        const recorded = recordedPlugin('agents-handoff-approval');
        uninstall = instrumentOpenAIAgents(recorded.hooks);
        const billing = new Agent({ name: 'billing', instructions: 'You issue refunds.', model: modelOn('responses', 'gpt-4.1'), tools: [approvedRefund], handoffDescription: 'Billing' });
        const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: modelOn('responses', 'gpt-4.1-mini'), handoffs: [billing] });

        const paused = await go(triage, 'Refund INV-7, please.', stream);
        expect(paused.interruptions.map((item) => item.name)).toEqual(['issue_refund']);
        const [asked] = hooks(recorded, 'pre_approval_request');
        const root = hooks(recorded, 'on_session_start')[0]!.session_id as string;
        // Asked by billing, in billing's session; the turn (and billing's) ended waiting for it; the session and billing's link stay open.
        const billingSession = `${root}:sub:call_to_billing`;
        expect(asked).toMatchObject({ tool_call_id: 'call_refund', session_id: billingSession });
        expect(hooks(recorded, 'on_session_end').map((p) => [p.session_id, p.interrupted, p.turn_exit_reason, p.pending_approvals])).toEqual([
          [billingSession, true, 'approval_required', ['call_refund']],
          [root, true, 'approval_required', ['call_refund']],
        ]);
        expect(hooks(recorded, 'on_session_finalize')).toEqual([]);
        expect(hooks(recorded, 'subagent_stop')).toEqual([]);

        paused.state.approve(paused.interruptions[0]!);
        const result = await go(triage, paused.state, stream);
        expect(result.finalOutput).toBe('Refunded $40 on INV-7.');
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expectRunsClosed(recorded);
        const doc = onlyTrajectory(atif);
        expect(doc.session_id).toBe(root);
        // Billing goes on in its session (its next turn): the decision and the approved call's result are beside its step.
        expect(hooks(recorded, 'subagent_start').map((p) => [p.child_role, p.parent_session_id, p.child_session_id])).toEqual([['billing', root, billingSession]]);
        expect(hooks(recorded, 'pre_llm_call').filter((p) => p.session_id === billingSession).map((p) => p.is_first_turn)).toEqual([true, false]);
        expect(hooks(recorded, 'post_approval_response').map((p) => [p.session_id, p.tool_call_id, p.choice])).toEqual([[billingSession, 'call_refund', 'once']]);
        expect(hooks(recorded, 'post_tool_call').map((p) => [p.session_id, p.tool_call_id, p.result])).toEqual([
          [root, 'call_to_billing', '{"assistant":"billing"}'],
          [billingSession, 'call_refund', 'Refunded $40 on INV-7'],
        ]);
        const [child] = subagents(doc, 1);
        expect(child!.session_id).toBe(billingSession);
        expect(toolCallIds(child!)).toEqual(['call_refund']);
        expect(observation(child!, 'call_refund')).toMatchObject({ content: 'Refunded $40 on INV-7' });
        expect(stepsOf(child!).filter((step) => step.source === 'system')).toEqual([]);
        expect(agentSteps(child!).at(-1)!.message).toBe('Refunded $40 on INV-7.');
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
        await sameOnNative(recorded);
      }, 30_000);
    }
  }

  // The SDK docs' human-in-the-loop flow inside a handoff: triage hands off to billing, billing's call needs approval,
  // the program approves (or rejects) it on the state and runs again. The resumed call's outcome is the observation of
  // billing's step that asked for it, in the one billing trajectory (the pause keeps billing's link open and the resumed
  // run continues it): no second billing, no system step holding the result without its call id.
  for (const kind of ['responses', 'chat'] as const) {
    for (const decision of ['approve', 'reject'] as const) {
      for (const tracing of TRACING) {
        it(`resumed inside a handoff (${decision}): the outcome is the observation of billing's step that made the call, in billing's one trajectory (${kind}, ${tracing})`, async () => {
          useTracing(tracing);
          api.load({
            'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
            'gpt-4.1': [
              { text: 'Let me refund that.', calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 90, output: 14 } },
              { text: 'Done with INV-7.', usage: { input: 140, output: 9, cached: 64 } },
            ],
          });
          const recorded = recordedPlugin('agents-handoff-resume-observation');
          uninstall = instrumentOpenAIAgents(recorded.hooks);
          const billing = new Agent({ name: 'billing', instructions: 'You issue refunds.', model: modelOn(kind, 'gpt-4.1'), tools: [approvedRefund], handoffDescription: 'Billing' });
          const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: modelOn(kind, 'gpt-4.1-mini'), handoffs: [billing] });

          let result = await run(triage, 'Refund INV-7, please.');
          expect(result.interruptions.map((item) => item.name)).toEqual(['issue_refund']);
          for (const interruption of result.interruptions) {
            if (decision === 'approve') result.state.approve(interruption);
            else result.state.reject(interruption);
          }
          result = await run(triage, result.state);
          expect(result.finalOutput).toBe('Done with INV-7.');
          const { atif, counters } = await recorded.finish();
          expectNothingLost(counters);
          expectRunsClosed(recorded);
          const doc = onlyTrajectory(atif);
          const billingSession = `${doc.session_id}:sub:call_to_billing`;
          // One billing: its link opened once, closed once, at the end, with its answer.
          expect(hooks(recorded, 'subagent_start').map((p) => p.child_session_id)).toEqual([billingSession]);
          expect(hooks(recorded, 'subagent_stop').map((p) => [p.child_session_id, p.child_status, p.child_summary])).toEqual([[billingSession, 'completed', 'Done with INV-7.']]);
          expect(hooks(recorded, 'post_approval_response').map((p) => [p.session_id, p.tool_call_id, p.choice])).toEqual([[billingSession, 'call_refund', decision === 'approve' ? 'once' : 'deny']]);
          const [sub] = subagents(doc, 1);
          expect(sub!.session_id).toBe(billingSession);
          expect(observation(doc, 'call_to_billing')).toMatchObject({ subagent_trajectory_ref: [{ session_id: billingSession }] });
          const steps = sub!.steps as Array<Record<string, any>>;
          expect(steps.filter((step) => step.source === 'system')).toEqual([]);
          const asking = agentSteps(sub!);
          expect(asking.map((step) => step.message)).toEqual(['Let me refund that.', 'Done with INV-7.']);
          expect(asking[0]!.tool_calls.map((call: Record<string, any>) => call.tool_call_id)).toEqual(['call_refund']);
          const outcome = decision === 'approve' ? 'Refunded $40 on INV-7' : 'Tool execution was not approved.';
          expect(asking[0]!.observation.results.map((r: Record<string, any>) => [r.source_call_id, r.content])).toEqual([['call_refund', outcome]]);
          expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
          await sameOnNative(recorded);
        }, 30_000);
      }
    }
  }

  for (const tracing of TRACING) {
    it(`a handoff beside a call that needs approval: the run pauses before it hands off, and the resumed run hands off through the model's own transfer call (${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1-mini': [
          {
            calls: [
              { id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-9' } },
              { id: 'call_to_billing', name: 'transfer_to_billing', args: {} },
            ],
            usage: { input: 60, output: 12 },
          },
        ],
        'gpt-4.1': [{ text: 'Billing here: INV-9 is refunded.', usage: { input: 120, output: 10 } }],
      });
      const recorded = recordedPlugin('agents-handoff-beside-approval');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', model: modelOn('chat', 'gpt-4.1'), handoffDescription: 'Billing' });
      const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: modelOn('chat', 'gpt-4.1-mini'), tools: [approvedRefund], handoffs: [billing] });
      const paused = await run(triage, 'Refund INV-9 and pass me to billing.');
      expect(paused.interruptions.map((item) => item.name)).toEqual(['issue_refund']);
      paused.state.approve(paused.interruptions[0]!);
      const result = await run(triage, paused.state);
      expect(result.lastAgent?.name).toBe('billing');
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      const doc = onlyTrajectory(atif);
      const root = doc.session_id as string;
      // The transfer the model asked for, by its id: no second, made-up transfer call beside it.
      expect(toolCallIds(doc)).toEqual(['call_refund', 'call_to_billing']);
      expect(hooks(recorded, 'post_tool_call').map((p) => [p.tool_call_id, p.result])).toEqual([
        ['call_refund', 'Refunded $40 on INV-9'],
        ['call_to_billing', '{"assistant":"billing"}'],
      ]);
      expect(hooks(recorded, 'subagent_start').map((p) => [p.child_role, p.child_session_id])).toEqual([['billing', `${root}:sub:call_to_billing`]]);
      expect(observation(doc, 'call_to_billing')).toMatchObject({ subagent_trajectory_ref: [{ session_id: `${root}:sub:call_to_billing` }] });
      expect(agentSteps(subagents(doc, 1)[0]!).at(-1)!.message).toBe('Billing here: INV-9 is refunded.');
      expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
      await sameOnNative(recorded);
    }, 30_000);
  }

  // Paused deep in a chain (triage -> billing -> refunds, refunds asks): the pause keeps billing's and refunds' links
  // open, and the resumed turn continues them (the state, or a copy of it that names the same session), so the decision
  // and the approved call are refunds', beside its step that asked, and a handoff back to billing after the resume
  // continues billing's trajectory (as it would have without the pause) rather than nesting a new billing under refunds.
  for (const resume of ['the same state', 'the state from its string'] as const) {
    for (const stream of [false, true]) {
      // A copy of the state names the paused session by its trace: with tracing off the copy's run is a session of its own.
      for (const tracing of resume === 'the same state' ? TRACING : (['tracing on'] as const)) {
        it(`paused in the third agent of a chain and resumed from ${resume}: billing and refunds go on in their trajectories, and refunds hands back to billing (${stream ? 'streamed' : 'not streamed'}, ${tracing})`, async () => {
          useTracing(tracing);
          api.load({
            'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
            'gpt-4.1': [
              { calls: [{ id: 'call_to_refunds', name: 'transfer_to_refunds', args: {} }], usage: { input: 80, output: 9 } },
              { text: 'Refunded; your balance is $0.', usage: { input: 200, output: 10, cached: 64 } },
            ],
            'gpt-4o': [
              { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 110, output: 14 } },
              { text: 'Done; back to billing.', calls: [{ id: 'call_back', name: 'transfer_to_billing', args: {} }], usage: { input: 160, output: 11 } },
            ],
          });
          const recorded = recordedPlugin('agents-handoff-deep-approval');
          uninstall = instrumentOpenAIAgents(recorded.hooks);
          const refunds = new Agent({ name: 'refunds', instructions: 'You issue refunds.', model: modelOn('chat', 'gpt-4o'), tools: [approvedRefund], handoffDescription: 'Refunds' });
          const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', model: modelOn('chat', 'gpt-4.1'), handoffs: [refunds], handoffDescription: 'Billing' });
          refunds.handoffs.push(billing);
          const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: modelOn('chat', 'gpt-4.1-mini'), handoffs: [billing] });

          const paused = await go(triage, 'Refund INV-7, please.', stream);
          expect(paused.interruptions.map((item) => item.name)).toEqual(['issue_refund']);
          const root = hooks(recorded, 'on_session_start')[0]!.session_id as string;
          const billingFirst = `${root}:sub:call_to_billing`;
          const refundsFirst = `${billingFirst}:sub:call_to_refunds`;
          expect(hooks(recorded, 'pre_approval_request').map((p) => [p.session_id, p.tool_call_id])).toEqual([[refundsFirst, 'call_refund']]);

          const state = resume === 'the same state' ? paused.state : await RunState.fromString(triage, paused.state.toString());
          state.approve(state.getInterruptions()[0]!);
          const result = await go(triage, state, stream);
          expect(result.finalOutput).toBe('Refunded; your balance is $0.');
          expect(result.lastAgent?.name).toBe('billing');
          const { atif, counters } = await recorded.finish();
          expectNothingLost(counters);
          expectRunsClosed(recorded);

          // The resumed turn, in the paused run's session (the state, or its copy, named by the trace): billing and refunds
          // go on in their sessions, each link opened once.
          expect(hooks(recorded, 'subagent_start').map((p) => [p.child_role, p.parent_session_id, p.child_session_id])).toEqual([
            ['billing', root, billingFirst],
            ['refunds', billingFirst, refundsFirst],
          ]);
          // The decision, the approved call, and refunds' handoff back: refunds' trajectory; billing's answer: billing's.
          expect(hooks(recorded, 'post_approval_response').map((p) => [p.session_id, p.tool_call_id, p.choice])).toEqual([[refundsFirst, 'call_refund', 'once']]);
          expect(hooks(recorded, 'post_tool_call').map((p) => [p.session_id, p.tool_call_id])).toEqual([
            [root, 'call_to_billing'],
            [billingFirst, 'call_to_refunds'],
            [refundsFirst, 'call_refund'],
            [refundsFirst, 'call_back'],
          ]);
          expect(hooks(recorded, 'pre_api_request').map((p) => p.session_id)).toEqual([root, billingFirst, refundsFirst, refundsFirst, billingFirst]);
          expect(hooks(recorded, 'subagent_stop').map((p) => [p.child_session_id, p.child_status, p.child_summary])).toEqual([
            [refundsFirst, 'completed', 'Done; back to billing.'],
            [billingFirst, 'completed', 'Refunded; your balance is $0.'],
          ]);

          // The file: billing holds refunds, whose step that asked has the approved call's result; billing's answer is its step.
          const doc = onlyTrajectory(atif);
          expect(doc.session_id).toBe(root);
          const [billingDoc] = subagents(doc, 1);
          expect(billingDoc!.agent.name).toBe('billing');
          expect(toolCallIds(billingDoc!)).toEqual(['call_to_refunds']);
          expect(agentSteps(billingDoc!).at(-1)!.message).toBe('Refunded; your balance is $0.');
          const [refundsDoc] = subagents(billingDoc!, 1);
          expect(refundsDoc!.session_id).toBe(refundsFirst);
          expect(toolCallIds(refundsDoc!)).toEqual(['call_refund', 'call_back']);
          expect(observation(refundsDoc!, 'call_refund')).toMatchObject({ content: 'Refunded $40 on INV-7' });
          for (const trajectory of [doc, billingDoc!, refundsDoc!]) expect(stepsOf(trajectory).filter((step) => step.source === 'system')).toEqual([]);
          expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
          await sameOnNative(recorded);
        }, 30_000);
      }
    }
  }

  for (const tracing of TRACING) {
    it(`paused in the third agent of a chain, resumed, and refunds answers: one billing holds one refunds, whose asking step has the result, nothing lost (${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
        'gpt-4.1': [{ calls: [{ id: 'call_to_refunds', name: 'transfer_to_refunds', args: {} }], usage: { input: 80, output: 9 } }],
        'gpt-4o': [
          { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 110, output: 14 } },
          { text: 'Refunded $40 on INV-7.', usage: { input: 160, output: 11, cached: 32 } },
        ],
      });
      const recorded = recordedPlugin('agents-handoff-deep-answer');
      uninstall = instrumentOpenAIAgents(recorded.hooks);
      const refunds = new Agent({ name: 'refunds', instructions: 'You issue refunds.', model: modelOn('responses', 'gpt-4o'), tools: [approvedRefund], handoffDescription: 'Refunds' });
      const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', model: modelOn('responses', 'gpt-4.1'), handoffs: [refunds], handoffDescription: 'Billing' });
      const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: modelOn('responses', 'gpt-4.1-mini'), handoffs: [billing] });
      const paused = await run(triage, 'Refund INV-7, please.');
      paused.state.approve(paused.interruptions[0]!);
      const result = await run(triage, paused.state);
      expect(result.finalOutput).toBe('Refunded $40 on INV-7.');
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      const doc = onlyTrajectory(atif);
      const [billingDoc] = subagents(doc, 1);
      expect(billingDoc!.agent.name).toBe('billing');
      expect(toolCallIds(billingDoc!)).toEqual(['call_to_refunds']);
      const [refundsDoc] = subagents(billingDoc!, 1);
      expect(refundsDoc!.agent.name).toBe('refunds');
      expect(agentSteps(refundsDoc!).map((step) => step.message)).toEqual(['', 'Refunded $40 on INV-7.']);
      expect(observation(refundsDoc!, 'call_refund')).toMatchObject({ content: 'Refunded $40 on INV-7' });
      expect(hooks(recorded, 'post_tool_call').map((p) => [p.session_id, p.tool_call_id])).toEqual([
        [doc.session_id, 'call_to_billing'],
        [billingDoc!.session_id, 'call_to_refunds'],
        [refundsDoc!.session_id, 'call_refund'],
      ]);
      expect(hooks(recorded, 'subagent_stop').map((p) => [p.child_role, p.child_status, p.child_summary])).toEqual([
        ['refunds', 'completed', 'Refunded $40 on INV-7.'],
        ['billing', 'completed', 'Refunded $40 on INV-7.'],
      ]);
      expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
      await sameOnNative(recorded);
    }, 30_000);
  }

  // A state resumed where its pause is not held (here a copy with tracing off, which names no session: as in another
  // process) has no open link to continue: the chain reopens under the resumed turn, and the paused billing's link,
  // still held for the original state, stays as it was.
  it('paused in billing and resumed from a copy that names no held session: billing reopens under the resumed turn, its decision and result there', async () => {
    useTracing('tracing off');
    api.load({
      'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
      'gpt-4.1': [
        { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 90, output: 14 } },
        { text: 'Refunded $40 on INV-7.', usage: { input: 140, output: 9 } },
      ],
    });
    const recorded = recordedPlugin('agents-handoff-copy-unheld');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const billing = new Agent({ name: 'billing', instructions: 'You issue refunds.', model: modelOn('responses', 'gpt-4.1'), tools: [approvedRefund], handoffDescription: 'Billing' });
    const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: modelOn('responses', 'gpt-4.1-mini'), handoffs: [billing] });
    const paused = await run(triage, 'Refund INV-7, please.');
    const copy = await RunState.fromString(triage, paused.state.toString());
    copy.approve(copy.getInterruptions()[0]!);
    const result = await run(triage, copy);
    expect(result.finalOutput).toBe('Refunded $40 on INV-7.');
    const starts = hooks(recorded, 'subagent_start');
    expect(starts).toHaveLength(2);
    const [first, reopened] = [starts[0]!, starts[1]!];
    expect(reopened.parent_session_id).not.toBe(first.parent_session_id);
    expect(reopened.child_session_id).toBe(`${reopened.parent_session_id}:sub:${reopened.tool_call_id}`);
    expect(reopened.tool_call_id).toMatch(/:agent:1$/);
    expect(hooks(recorded, 'post_approval_response').map((p) => [p.session_id, p.tool_call_id])).toEqual([[reopened.child_session_id, 'call_refund']]);
    expect(hooks(recorded, 'post_tool_call').map((p) => [p.session_id, p.tool_call_id])).toEqual([
      [first.parent_session_id, 'call_to_billing'],
      [reopened.child_session_id, 'call_refund'],
    ]);
    // Only the resumed run's link closed: the original state, still reachable, holds the paused one.
    expect(hooks(recorded, 'subagent_stop').map((p) => [p.child_session_id, p.child_status])).toEqual([[reopened.child_session_id, 'completed']]);
    expect(paused.state.getInterruptions()).toHaveLength(1);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    for (const doc of atif) expect(validateAtif(doc)).toEqual([]);
    const tokens = atif.map(tokenTotals).reduce((sum, next) => ({ prompt: sum.prompt + next.prompt, completion: sum.completion + next.completion, cached: sum.cached + next.cached }));
    expect(tokens).toEqual(sdkTotals(result.state.usage));
    await sameOnNative(recorded);
  }, 30_000);

  it('paused in a chain whose handoff items a handoff input filter dropped: the chain the adapter held goes on, refunds under billing', async () => {
    useTracing('tracing on');
    api.load({
      'gpt-4.1-mini': [{ calls: [{ id: 'call_to_billing', name: 'transfer_to_billing', args: {} }], usage: { input: 50, output: 8 } }],
      'gpt-4.1': [{ calls: [{ id: 'call_to_refunds', name: 'transfer_to_refunds', args: {} }], usage: { input: 80, output: 9 } }],
      'gpt-4o': [
        { calls: [{ id: 'call_refund', name: 'issue_refund', args: { invoice: 'INV-7' } }], usage: { input: 110, output: 14 } },
        { text: 'Refunded $40 on INV-7.', usage: { input: 160, output: 11 } },
      ],
    });
    const recorded = recordedPlugin('agents-handoff-filtered');
    uninstall = instrumentOpenAIAgents(recorded.hooks);
    const refunds = new Agent({ name: 'refunds', instructions: 'You issue refunds.', model: modelOn('responses', 'gpt-4o'), tools: [approvedRefund], handoffDescription: 'Refunds' });
    // The refunds agent sees no tool or handoff item of before (what the SDK's removeAllTools filter does, written here).
    const toolItems = new Set(['handoff_call_item', 'handoff_output_item', 'tool_call_item', 'tool_call_output_item']);
    const withoutTools = handoff(refunds, { inputFilter: (data) => ({ ...data, preHandoffItems: data.preHandoffItems.filter((item) => !toolItems.has(item.type)), newItems: data.newItems.filter((item) => !toolItems.has(item.type)) }) });
    const billing = new Agent({ name: 'billing', instructions: 'You answer billing questions.', model: modelOn('responses', 'gpt-4.1'), handoffs: [withoutTools], handoffDescription: 'Billing' });
    const triage = new Agent({ name: 'triage', instructions: 'Route the customer.', model: modelOn('responses', 'gpt-4.1-mini'), handoffs: [billing] });
    const paused = await run(triage, 'Refund INV-7, please.');
    expect(paused.state._generatedItems.filter((item) => item.type === 'handoff_output_item')).toEqual([]);
    paused.state.approve(paused.interruptions[0]!);
    const result = await run(triage, paused.state);
    expect(result.finalOutput).toBe('Refunded $40 on INV-7.');
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expectRunsClosed(recorded);
    const doc = onlyTrajectory(atif);
    expect(hooks(recorded, 'subagent_start').map((p) => [p.child_role, p.parent_session_id])).toEqual([
      ['billing', doc.session_id],
      ['refunds', `${doc.session_id}:sub:call_to_billing`],
    ]);
    const [refundsDoc] = subagents(subagents(doc, 1)[0]!, 1);
    expect(agentSteps(refundsDoc!).map((step) => step.message)).toEqual(['', 'Refunded $40 on INV-7.']);
    expect(observation(refundsDoc!, 'call_refund')).toMatchObject({ content: 'Refunded $40 on INV-7' });
    expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
    await sameOnNative(recorded);
  }, 30_000);
});
