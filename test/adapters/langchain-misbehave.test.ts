// The LangChain adapter when the model misbehaves, on createAgent as the
// LangChain docs write it, with ChatOpenAI over the fake fetch (Chat
// Completions): arguments that are not JSON (the provider package puts the
// call in the AIMessage's `invalid_tool_calls`; no tool runs it and the
// agent ends), arguments that fail the tool's schema, and a tool the agent
// does not have (the ToolNode answers both with an error ToolMessage and the
// model is asked again). Each call is recorded as the model sent it, with
// the outcome LangChain gave it; memory and native write the same files.
import { describe, expect, it } from 'vitest';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import type { AIMessage, BaseMessage } from '@langchain/core/messages';
import { createAgent } from 'langchain';
import * as z from 'zod';
import { NemoRelayCallbackHandler } from '../../src/adapters/langchain/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { chatCompletion, scriptedFetch } from '../support/provider-wire.ts';
import { sameOnNative } from './same-on-native.ts';
import { expectNothingLost, recordedPlugin, viewLines, type AtifDoc, type Recorded } from './support.ts';

const GPT = 'gpt-4.1-2025-04-14';

const weather = tool(async ({ city }) => `Sunny and 21C in ${city}`, {
  name: 'get_weather',
  description: 'The current weather of a city',
  schema: z.object({ city: z.string() }),
});

type Step = AtifDoc;
const agentSteps = (doc: AtifDoc): Step[] => (doc.steps as Step[]).filter((step) => step.source === 'agent');
const results = (doc: AtifDoc): Step[] => (doc.steps as Step[]).flatMap((step) => step.observation?.results ?? []);
const hooksOf = (recorded: Recorded, name: string) => recorded.log.filter((entry) => entry.hook === name).map((entry) => entry.payload as Record<string, any>);
const usageOf = (messages: BaseMessage[]): Array<[number, number]> =>
  messages.filter((m) => (m as AIMessage).usage_metadata !== undefined).map((m) => [(m as AIMessage).usage_metadata!.input_tokens, (m as AIMessage).usage_metadata!.output_tokens]);

function agentOn(fetch: typeof globalThis.fetch) {
  return createAgent({ model: new ChatOpenAI({ model: 'gpt-4.1', apiKey: 'sk-test', maxRetries: 0, configuration: { fetch } }), tools: [weather], name: 'weather_agent', systemPrompt: 'You answer weather questions.' });
}

describe('LangChain createAgent: calls the model got wrong', () => {
  it('arguments that are not JSON: invalid_tool_calls on the AIMessage, recorded as sent and failed with the parser’s error; the agent ends there', async () => {
    const { fetch, requests } = scriptedFetch([chatCompletion({ id: 'chatcmpl-1', model: GPT, content: null, toolCalls: [{ id: 'call_json', name: 'get_weather', args: '{"city": "Par' }], usage: { prompt_tokens: 70, completion_tokens: 12 } })]);
    const recorded = recordedPlugin('lc-misbehave-json');
    const result = await agentOn(fetch).invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    // What LangChain did: the call is an invalid_tool_call, no tool ran, the agent stopped after one request.
    const answer = result.messages.at(-1) as AIMessage;
    expect(answer.tool_calls).toEqual([]);
    expect(answer.invalid_tool_calls).toHaveLength(1);
    const invalid = answer.invalid_tool_calls![0]!;
    expect(invalid).toMatchObject({ id: 'call_json', name: 'get_weather', args: '{"city": "Par' });
    expect(requests).toHaveLength(1);

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    const [step] = agentSteps(doc);
    expect(step!.tool_calls).toEqual([expect.objectContaining({ tool_call_id: 'call_json', function_name: 'get_weather', arguments: { raw: '{"city": "Par' } })]);
    const outcome = results(doc).find((r) => r.source_call_id === 'call_json');
    expect(outcome).toMatchObject({ content: invalid.error, extra: { metadata: { status: 'error' } } });
    expect(String(outcome!.content)).toMatch(/are not valid JSON/);
    expect(hooksOf(recorded, 'pre_tool_call').map((p) => p.tool_call_id)).toEqual(['call_json']);
    expect(hooksOf(recorded, 'post_tool_call').map((p) => p.tool_call_id)).toEqual(['call_json']);
    expect(hooksOf(recorded, 'on_session_end').at(-1)).toMatchObject({ completed: true });
    expect(agentSteps(doc).filter((s) => s.metrics !== undefined).map((s) => [s.metrics.prompt_tokens, s.metrics.completion_tokens])).toEqual(usageOf(result.messages));
    // What `view` shows, from either file: the call failed with the parser's error, not a call that never ran.
    for (const of of ['atif', 'atof'] as const) {
      const tools = (await viewLines(recorded, of)).filter((line) => /(─ |✗ )tool \S+ /.test(line));
      expect(tools, of).toEqual([expect.stringMatching(/✗ tool get_weather .*ERROR ToolCallRefused: Function "get_weather" arguments/)]);
    }
    await sameOnNative(recorded);
  });

  it('arguments that fail the schema and a tool the agent does not have: the ToolNode’s error messages are their outcomes, then the model is asked again', async () => {
    const { fetch, requests } = scriptedFetch([
      chatCompletion({
        id: 'chatcmpl-1',
        model: GPT,
        content: null,
        toolCalls: [
          { id: 'call_schema', name: 'get_weather', args: { town: 'Paris' } },
          { id: 'call_unknown', name: 'get_forecast', args: { city: 'Paris' } },
        ],
        usage: { prompt_tokens: 80, completion_tokens: 20 },
      }),
      chatCompletion({ id: 'chatcmpl-2', model: GPT, content: null, toolCalls: [{ id: 'call_ok', name: 'get_weather', args: { city: 'Paris' } }], usage: { prompt_tokens: 190, completion_tokens: 10 } }),
      chatCompletion({ id: 'chatcmpl-3', model: GPT, content: 'Sunny and 21C in Paris.', usage: { prompt_tokens: 230, completion_tokens: 8 } }),
    ]);
    const recorded = recordedPlugin('lc-misbehave-tools');
    const result = await agentOn(fetch).invoke({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, { callbacks: [new NemoRelayCallbackHandler(recorded.hooks)] });
    expect(requests).toHaveLength(3);
    // What LangChain told the model: error ToolMessages.
    const told = new Map(result.messages.filter((m) => m.type === 'tool').map((m) => [(m as unknown as { tool_call_id: string }).tool_call_id, { text: String(m.content), status: (m as unknown as { status?: string }).status }]));
    expect(told.get('call_schema')).toMatchObject({ status: 'error' });
    expect(told.get('call_unknown')).toEqual({ text: 'Error: get_forecast is not a valid tool, try one of [get_weather].', status: 'error' });

    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(agentSteps(doc)[0]!.tool_calls.map((c: Step) => [c.tool_call_id, c.function_name, c.arguments])).toEqual([
      ['call_schema', 'get_weather', { town: 'Paris' }],
      ['call_unknown', 'get_forecast', { city: 'Paris' }],
    ]);
    for (const id of ['call_schema', 'call_unknown']) expect(results(doc).find((r) => r.source_call_id === id)).toMatchObject({ content: told.get(id)!.text, extra: { metadata: { status: 'error' } } });
    expect(results(doc).find((r) => r.source_call_id === 'call_ok')).toMatchObject({ content: 'Sunny and 21C in Paris', extra: { metadata: { status: 'ok' } } });
    for (const name of ['pre_tool_call', 'post_tool_call']) expect(hooksOf(recorded, name).map((p) => p.tool_call_id).sort()).toEqual(['call_ok', 'call_schema', 'call_unknown']);
    const order = recorded.log.filter((e) => e.hook === 'pre_api_request' || e.hook === 'post_tool_call').map((e) => (e.hook === 'pre_api_request' ? 'request' : String(e.payload.tool_call_id)));
    expect(order.filter((x) => x === 'request')).toHaveLength(3);
    expect(order.indexOf('call_schema')).toBeLessThan(order.indexOf('request', 1));
    expect(order.indexOf('call_unknown')).toBeLessThan(order.indexOf('request', 1));
    expect(agentSteps(doc).filter((s) => s.metrics !== undefined).map((s) => [s.metrics.prompt_tokens, s.metrics.completion_tokens])).toEqual(usageOf(result.messages));
    await sameOnNative(recorded);
  });
});
