// The adapter never changes what an Agents SDK program does. Each program is
// written as the SDK docs write it and run twice against the same scripted
// API: once bare, once instrumented (memory and native). What the program
// sees must be the same both times: the input its `needsApproval` function
// gets (after the tool's zod transform), the interruptions, what the tool's
// `execute` gets, what the model is sent in each request, the final output,
// the error a run throws. The SDK pre-parses a function tool's input by its
// own `invoke` (a WeakMap keyed on it): an adapter that replaced `invoke`
// made every tool look unparsed, so a dynamic approval got the raw
// arguments and a call that needed approval ran without it. Tracing on, off,
// and off for the runner alone (`new Runner({ tracingDisabled: true })`).
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, OpenAIProvider, Runner, defineToolInputGuardrail, tool, ToolGuardrailFunctionOutputFactory, type RunResult } from '@openai/agents';
import * as z from 'zod';
import { instrumentOpenAIAgents } from '../../../src/adapters/openai-agents/index.ts';
import { backends, expectNothingLost, recordedPlugin, type Recorded } from '../support.ts';
import { hooks, observation, onlyTrajectory, useTracing } from './support.ts';
import { FakeOpenAI, type Scripted } from './wire.ts';

const api = new FakeOpenAI();
// The runner's own provider, not the SDK's process-wide default: this file shares its process with other files.
const modelProvider = new OpenAIProvider({ openAIClient: api.client() });

let uninstall: (() => void) | undefined;
afterEach(() => {
  uninstall?.();
  uninstall = undefined;
});

type Mode = 'tracing on' | 'tracing off' | 'runner tracingDisabled';
const MODES: readonly Mode[] = ['tracing on', 'tracing off', 'runner tracingDisabled'];

/** What a program saw, to compare bare and instrumented. */
interface Seen {
  approvalInputs: unknown[];
  executed: unknown[];
  interruptions: unknown[];
  requests: unknown[];
  output: unknown;
  error: unknown;
}

interface Program {
  script: Record<string, Scripted[]>;
  /** Runs the program, writing what it sees into `seen`. */
  run(runner: Runner, seen: Seen): Promise<void>;
}

/** A booking tool whose zod schema trims and lower-cases the city, and asks for approval for Paris only (docs: needsApproval as a function). */
function bookingTool(seen: Seen) {
  return tool({
    name: 'book_table',
    description: 'Book a table',
    parameters: z.object({ city: z.string().trim().toLowerCase(), people: z.number() }),
    needsApproval: async (_context, input) => {
      seen.approvalInputs.push(structuredClone(input));
      return (input as { city: string }).city === 'paris';
    },
    execute: async (input) => {
      seen.executed.push(structuredClone(input));
      return `Booked in ${input.city} for ${input.people}`;
    },
  });
}

function counterTool(seen: Seen, extra: Record<string, unknown> = {}) {
  return tool({
    name: 'count_items',
    description: 'Count items',
    parameters: z.object({ count: z.number() }),
    execute: async (input) => {
      seen.executed.push(structuredClone(input));
      return `counted ${input.count}`;
    },
    ...extra,
  });
}

const PROGRAMS: Record<string, Program> = {
  'a dynamic needsApproval reads the transformed input; the approved call runs on resume': {
    script: {
      'gpt-4.1': [
        { calls: [{ id: 'call_book', name: 'book_table', args: { city: '  PARIS ', people: 2 } }], usage: { input: 30, output: 8 } },
        { text: 'Booked.', usage: { input: 60, output: 3 } },
      ],
    },
    async run(runner, seen) {
      const agent = new Agent({ name: 'Concierge', instructions: 'Book tables.', model: 'gpt-4.1', tools: [bookingTool(seen)] });
      let result: RunResult<any, any> = await runner.run(agent, 'Book Paris for two.');
      seen.interruptions = result.interruptions.map((item) => ({ name: item.name, arguments: item.arguments }));
      for (const item of result.interruptions) result.state.approve(item);
      if (result.interruptions.length > 0) result = await runner.run(agent, result.state);
      seen.output = result.finalOutput;
    },
  },
  'arguments that fail the schema': {
    script: {
      'gpt-4.1': [
        { calls: [{ id: 'call_count', name: 'count_items', args: { count: 'three' } }], usage: { input: 30, output: 8 } },
        { text: 'Could not count.', usage: { input: 60, output: 3 } },
      ],
    },
    async run(runner, seen) {
      const agent = new Agent({ name: 'Counter', instructions: 'Count.', model: 'gpt-4.1', tools: [counterTool(seen, { needsApproval: async (_context: unknown, input: unknown) => (seen.approvalInputs.push(structuredClone(input)), false) })] });
      seen.output = (await runner.run(agent, 'Count three.')).finalOutput;
    },
  },
  'arguments that fail the schema, told to the model by the tool\'s errorFunction': {
    script: {
      'gpt-4.1': [
        { calls: [{ id: 'call_count', name: 'count_items', args: { count: 'three' } }], usage: { input: 30, output: 8 } },
        { text: 'Could not count.', usage: { input: 60, output: 3 } },
      ],
    },
    async run(runner, seen) {
      const errorFunction = (_context: unknown, error: unknown) => {
        const record = error as Record<string, unknown>;
        seen.executed.push({ error: String(error), name: record.name, cause: String(record.cause ?? record.originalError ?? ''), keys: Object.keys(record).sort() });
        return `Count failed: ${String(error)}`;
      };
      const agent = new Agent({ name: 'Counter', instructions: 'Count.', model: 'gpt-4.1', tools: [counterTool(seen, { errorFunction })] });
      seen.output = (await runner.run(agent, 'Count three.')).finalOutput;
    },
  },
  'an input guardrail on a tool rejects the call': {
    script: {
      'gpt-4.1': [
        { calls: [{ id: 'call_book', name: 'book_table', args: { city: 'Rome', people: 40 } }], usage: { input: 30, output: 8 } },
        { text: 'Too many people.', usage: { input: 60, output: 3 } },
      ],
    },
    async run(runner, seen) {
      const guard = defineToolInputGuardrail({
        name: 'party_size',
        run: async ({ toolCall }) => (JSON.parse(toolCall.arguments).people > 20 ? ToolGuardrailFunctionOutputFactory.rejectContent('Parties above 20 are not booked.') : ToolGuardrailFunctionOutputFactory.allow()),
      });
      const booking = bookingTool(seen);
      const agent = new Agent({ name: 'Concierge', instructions: 'Book tables.', model: 'gpt-4.1', tools: [{ ...booking, inputGuardrails: [guard] }] });
      seen.output = (await runner.run(agent, 'Book Rome for forty.')).finalOutput;
    },
  },
  'a tool that times out, as a result': {
    script: {
      'gpt-4.1': [
        { calls: [{ id: 'call_slow', name: 'slow_lookup', args: {} }], usage: { input: 30, output: 8 } },
        { text: 'It timed out.', usage: { input: 60, output: 3 } },
      ],
    },
    async run(runner, seen) {
      const slow = tool({
        name: 'slow_lookup',
        description: 'A lookup that hangs',
        parameters: z.object({}),
        timeoutMs: 20,
        execute: (_input, _context, details) => new Promise<string>((resolve) => details?.signal?.addEventListener('abort', () => resolve('too late'), { once: true })),
      });
      const agent = new Agent({ name: 'Researcher', instructions: 'Look up.', model: 'gpt-4.1', tools: [slow] });
      seen.output = (await runner.run(agent, 'Look it up.')).finalOutput;
    },
  },
  'a tool that times out, raising': {
    script: { 'gpt-4.1': [{ calls: [{ id: 'call_slow', name: 'slow_lookup', args: {} }], usage: { input: 30, output: 8 } }] },
    async run(runner, seen) {
      const slow = tool({
        name: 'slow_lookup',
        description: 'A lookup that hangs',
        parameters: z.object({}),
        timeoutMs: 20,
        timeoutBehavior: 'raise_exception',
        execute: (_input, _context, details) => new Promise<string>((resolve) => details?.signal?.addEventListener('abort', () => resolve('too late'), { once: true })),
      });
      const agent = new Agent({ name: 'Researcher', instructions: 'Look up.', model: 'gpt-4.1', tools: [slow] });
      seen.output = (await runner.run(agent, 'Look it up.')).finalOutput;
    },
  },
};

async function observe(program: Program, mode: Mode): Promise<Seen> {
  useTracing(mode === 'tracing on' ? 'tracing on' : 'tracing off');
  api.load(program.script);
  const seen: Seen = { approvalInputs: [], executed: [], interruptions: [], requests: [], output: undefined, error: undefined };
  const runner = new Runner({ modelProvider, ...(mode === 'runner tracingDisabled' ? { tracingDisabled: true } : {}) });
  try {
    await program.run(runner, seen);
  } catch (error) {
    seen.error = { name: (error as Error).name, message: (error as Error).message };
  }
  seen.requests = api.requests.map((request) => request.body.input);
  return seen;
}

describe('Agents SDK programs behave the same with and without the adapter', () => {
  for (const backend of backends()) {
    for (const mode of MODES) {
      for (const [label, program] of Object.entries(PROGRAMS)) {
        it(`${label} (${mode}, ${backend})`, async () => {
          const bare = await observe(program, mode);
          const recorded = recordedPlugin('agents-same-behaviour', backend);
          uninstall = instrumentOpenAIAgents(recorded.hooks);
          const instrumented = await observe(program, mode);
          expect(instrumented).toEqual(bare);
          await checkRecorded(label, mode, recorded, bare);
        }, 30_000);
      }
    }
  }

  it('the programs show what the SDK does with its parsed input (the comparison is not between two equal mistakes)', async () => {
    for (const [label, program] of Object.entries(PROGRAMS)) {
      const seen = await observe(program, 'tracing off');
      if (label.endsWith('raising')) expect(seen.error).toMatchObject({ name: 'ToolTimeoutError' });
      else expect(seen.error).toBeUndefined();
    }
    const booking = await observe(PROGRAMS['a dynamic needsApproval reads the transformed input; the approved call runs on resume']!, 'tracing off');
    expect(booking.approvalInputs[0]).toEqual({ city: 'paris', people: 2 });
    expect(booking.interruptions).toEqual([{ name: 'book_table', arguments: JSON.stringify({ city: '  PARIS ', people: 2 }) }]);
    expect(booking.executed).toEqual([{ city: 'paris', people: 2 }]);
    const invalid = await observe(PROGRAMS['arguments that fail the schema']!, 'tracing off');
    expect(invalid.executed).toEqual([]);
  }, 30_000);
});

/** The trajectory says what the program did: the approval, the failed or rejected call, the timeout. */
async function checkRecorded(label: string, mode: Mode, recorded: Recorded, bare: Seen): Promise<void> {
  const ended = Object.fromEntries(hooks(recorded, 'post_tool_call').map((payload) => [payload.tool_call_id, payload]));
  if (label.startsWith('a dynamic needsApproval')) {
    expect(hooks(recorded, 'pre_approval_request').map((payload) => payload.tool_call_id)).toEqual(['call_book']);
    expect(ended.call_book).toMatchObject({ status: 'ok', result: 'Booked in paris for 2' });
  } else if (label.endsWith('errorFunction') && mode === 'runner tracingDisabled') {
    // No span per call: a custom errorFunction's text reads as a result (docs/adapters/openai-agents.md).
    expect(ended.call_count).toMatchObject({ status: 'ok', result: `Count failed: ${(bare.executed[0] as { error: string }).error}` });
  } else if (label.startsWith('arguments that fail')) {
    expect(ended.call_count?.status).toBe('error');
  } else if (label.startsWith('an input guardrail')) {
    // The SDK answers the model with the guardrail's message as the call's output; the tool never ran.
    expect(ended.call_book).toMatchObject({ result: 'Parties above 20 are not booked.' });
    expect(bare.executed).toEqual([]);
  } else if (label.includes('times out')) {
    expect(ended.call_slow).toMatchObject({ status: 'error', error_message: "Tool 'slow_lookup' timed out after 20ms." });
  }
  const { atif, counters } = await recorded.finish();
  expectNothingLost(counters);
  if (bare.error === undefined) expect(observation(onlyTrajectory(atif), Object.keys(ended)[0] ?? 'none')).toBeDefined();
}
