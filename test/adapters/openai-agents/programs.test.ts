// Agents SDK programs from its docs' patterns (streaming, structured output,
// handoffs, agents as tools), on OpenAIResponsesModel over the real openai
// client and a fake fetch, with tracing on and off. Each trajectory is
// checked against what the program did.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent, run } from '@openai/agents';
import * as z from 'zod';
import { expectNothingLost, recordedPlugin } from '../support.ts';
import { agentSteps, expectRunsClosed, hooks, observation, onlyTrajectory, sdkTotals, stepsOf, toolCallIds, tokenTotals, instrumentEachTest, TRACING, useTracing, weatherTool } from './support.ts';
import { dated, FakeOpenAI, useAsDefaultClient } from './wire.ts';

const api = new FakeOpenAI();
useAsDefaultClient(api);

const instrument = instrumentEachTest();

const getWeather = weatherTool();

describe('OpenAI Agents SDK programs', () => {
  for (const tracing of TRACING) {
    it(`a streamed tool loop: run(agent, input, { stream: true }) read with toTextStream() (${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1': [
          { calls: [{ id: 'call_rome', name: 'get_weather', args: { city: 'Rome' } }], usage: { input: 60, output: 11, cached: 0 } },
          { text: 'Rome is sunny today, perfect for a walk.', usage: { input: 95, output: 12, cached: 32 } },
        ],
      });
      const recorded = recordedPlugin('agents-stream');
      instrument(recorded.hooks);
      const agent = new Agent({ name: 'Streamer', instructions: 'Be brief.', model: 'gpt-4.1', tools: [getWeather] });
      const result = await run(agent, 'How is Rome?', { stream: true });
      let text = '';
      for await (const chunk of result.toTextStream()) text += chunk;
      await result.completed;
      expect(text).toBe('Rome is sunny today, perfect for a walk.');
      expect(api.requests.every((request) => request.body.stream === true)).toBe(true);

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      const doc = onlyTrajectory(atif);
      expect(stepsOf(doc)[0]).toMatchObject({ source: 'user', message: 'How is Rome?' });
      const answered = agentSteps(doc);
      expect(answered.map((step) => step.model_name)).toEqual([dated('gpt-4.1'), dated('gpt-4.1')]);
      expect(answered.at(-1)!.message).toBe(text);
      expect(toolCallIds(doc)).toEqual(['call_rome']);
      expect(observation(doc, 'call_rome')?.content).toBe('The weather in Rome is sunny.');
      expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
      expect(hooks(recorded, 'post_llm_call')[0]!.assistant_response).toBe(text);
    }, 30_000);

    it(`structured output: outputType with zod, the schema in the request and the object as the answer (${tracing})`, async () => {
      useTracing(tracing);
      const answer = { city: 'Lima', temperature_c: 19, conditions: 'cloudy' };
      api.load({ 'gpt-4.1-mini': [{ text: JSON.stringify(answer), usage: { input: 40, output: 15 } }] });
      const recorded = recordedPlugin('agents-structured');
      instrument(recorded.hooks);
      const Report = z.object({ city: z.string(), temperature_c: z.number(), conditions: z.string() });
      const agent = new Agent({ name: 'Reporter', instructions: 'Report the weather.', model: 'gpt-4.1-mini', outputType: Report });
      const result = await run(agent, 'Weather report for Lima.');
      expect(result.finalOutput).toEqual(answer);

      const request = hooks(recorded, 'pre_api_request')[0]!.request.body;
      expect(request.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: expect.any(String), strict: true } });
      expect(Object.keys(request.response_format.json_schema.schema.properties)).toEqual(['city', 'temperature_c', 'conditions']);
      expect(JSON.parse(hooks(recorded, 'post_llm_call')[0]!.assistant_response)).toEqual(answer);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      const doc = onlyTrajectory(atif);
      expect(JSON.parse(agentSteps(doc)[0]!.message)).toEqual(answer);
      expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
    }, 30_000);

    it(`handoffs: the transfer call by id, the next agent a sub-agent linked to it, with its own model (${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1-mini': [{ calls: [{ id: 'call_transfer', name: 'transfer_to_Spanish_Agent', args: {} }], usage: { input: 70, output: 8 } }],
        'gpt-4.1': [{ text: '¡Hola! Hace sol en Madrid.', usage: { input: 90, output: 10, cached: 64 } }],
      });
      const recorded = recordedPlugin('agents-handoff');
      instrument(recorded.hooks);
      const spanishAgent = new Agent({ name: 'Spanish Agent', instructions: 'You only speak Spanish.', model: 'gpt-4.1', handoffDescription: 'Speaks Spanish' });
      const englishAgent = new Agent({ name: 'English Agent', instructions: 'You only speak English.', model: 'gpt-4.1', handoffDescription: 'Speaks English' });
      const triageAgent = new Agent({
        name: 'Triage Agent',
        instructions: 'Handoff to the appropriate agent based on the language of the request.',
        model: 'gpt-4.1-mini',
        handoffs: [spanishAgent, englishAgent],
      });
      const result = await run(triageAgent, 'Hola, ¿qué tiempo hace en Madrid?');
      expect(result.finalOutput).toBe('¡Hola! Hace sol en Madrid.');
      expect(result.lastAgent?.name).toBe('Spanish Agent');
      // The triage request offered both handoffs as tools.
      expect(hooks(recorded, 'pre_api_request')[0]!.request.body.tools.map((t: Record<string, any>) => t.function.name)).toEqual(['transfer_to_Spanish_Agent', 'transfer_to_English_Agent']);

      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      const doc = onlyTrajectory(atif);
      expect(doc.agent.name).toBe('Triage Agent');
      expect(agentSteps(doc).map((step) => step.model_name)).toEqual([dated('gpt-4.1-mini')]);
      expect(toolCallIds(doc)).toEqual(['call_transfer']);
      expect(observation(doc, 'call_transfer')?.content).toBe('{"assistant":"Spanish Agent"}');
      // The Spanish agent's steps are its own trajectory, referred to by the transfer call.
      const spanish = (doc.subagent_trajectories as Array<Record<string, any>>)[0]!;
      expect(observation(doc, 'call_transfer')?.subagent_trajectory_ref[0].trajectory_id).toBe(spanish.trajectory_id);
      expect(spanish.agent.name).toBe('Spanish Agent');
      expect(agentSteps(spanish).map((step) => [step.model_name, step.message])).toEqual([[dated('gpt-4.1'), '¡Hola! Hace sol en Madrid.']]);
      expect(hooks(recorded, 'post_llm_call').at(-1)!.assistant_response).toBe('¡Hola! Hace sol en Madrid.');
      // The Spanish agent was asked with its own instructions.
      expect(hooks(recorded, 'pre_api_request')[1]!.request.body.messages[0]).toEqual({ role: 'system', content: 'You only speak Spanish.' });
      expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
    }, 30_000);

    it(`agents as tools: each sub-agent its own trajectory, session and model, linked to the call that ran it (${tracing})`, async () => {
      useTracing(tracing);
      api.load({
        'gpt-4.1': [
          {
            calls: [
              { id: 'call_es', name: 'translate_to_spanish', args: { input: 'Good morning' } },
              { id: 'call_fr', name: 'translate_to_french', args: { input: 'Good morning' } },
            ],
            usage: { input: 100, output: 30 },
          },
          { text: 'Spanish: Buenos días. French: Bonjour.', usage: { input: 160, output: 14, cached: 64 } },
        ],
        'gpt-4.1-nano': [
          { text: 'Buenos días', model: 'gpt-4.1-nano-2025-04-14', usage: { input: 20, output: 3 } },
          { text: 'Bonjour', model: 'gpt-4.1-nano-2025-04-14', usage: { input: 21, output: 2 } },
        ],
      });
      const recorded = recordedPlugin('agents-as-tools');
      instrument(recorded.hooks);
      const spanish = new Agent({ name: 'spanish_agent', instructions: 'Translate to Spanish.', model: 'gpt-4.1-nano' });
      const french = new Agent({ name: 'french_agent', instructions: 'Translate to French.', model: 'gpt-4.1-nano' });
      const orchestrator = new Agent({
        name: 'orchestrator_agent',
        instructions: 'Use the tools to translate.',
        model: 'gpt-4.1',
        tools: [
          spanish.asTool({ toolName: 'translate_to_spanish', toolDescription: 'Translate the user message to Spanish' }),
          french.asTool({ toolName: 'translate_to_french', toolDescription: 'Translate the user message to French' }),
        ],
      });
      const result = await run(orchestrator, 'Say "Good morning" in Spanish and French.');
      expect(result.finalOutput).toBe('Spanish: Buenos días. French: Bonjour.');

      const starts = hooks(recorded, 'subagent_start');
      expect(starts.map((start) => [start.tool_call_id, start.child_role, start.child_goal]).sort()).toEqual([
        ['call_es', 'spanish_agent', 'Good morning'],
        ['call_fr', 'french_agent', 'Good morning'],
      ]);
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);
      expectRunsClosed(recorded);
      const doc = onlyTrajectory(atif);
      expect(toolCallIds(doc)).toEqual(['call_es', 'call_fr']);
      expect(observation(doc, 'call_es')?.content).toBe('Buenos días');
      const children = doc.subagent_trajectories as Array<Record<string, any>>;
      expect(children).toHaveLength(2);
      for (const [callId, text] of [['call_es', 'Buenos días'], ['call_fr', 'Bonjour']] as const) {
        const ref = stepsOf(doc).flatMap((step) => step.observation?.results ?? []).find((r: Record<string, any>) => r.source_call_id === callId && r.subagent_trajectory_ref !== undefined);
        expect(ref, `the sub-agent of ${callId} is linked`).toBeDefined();
        const child = children.find((c) => c.trajectory_id === ref.subagent_trajectory_ref[0].trajectory_id)!;
        expect(child.session_id).toBe(`${doc.session_id}:sub:${callId}`);
        expect(agentSteps(child).map((step) => [step.model_name, step.message])).toEqual([['gpt-4.1-nano-2025-04-14', text]]);
        expect(child.agent.model_name, 'the sub-agent names its own model, not its parent\'s').toBe('gpt-4.1-nano');
        expect(stepsOf(child)[0]).toMatchObject({ source: 'user', message: 'Good morning' });
      }
      // The SDK counts the sub-agents' tokens into the run's usage; so do the trajectories together.
      expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
    }, 30_000);
  }

  it('a sub-agent written to a file of its own (subagent export mode "all") is named after its session id, as native names it; its header names its agent', async () => {
    useTracing('tracing off');
    api.load({
      'gpt-4.1': [
        { calls: [{ id: 'call_es', name: 'translate_to_spanish', args: { input: 'Thank you' } }], usage: { input: 50, output: 9 } },
        { text: 'Gracias.', usage: { input: 70, output: 3 } },
      ],
      'gpt-4.1-nano': [{ text: 'Gracias', usage: { input: 12, output: 2 } }],
    });
    const recorded = recordedPlugin('agents-subagent-files', 'memory', { atifSubagentExportMode: 'all' });
    instrument(recorded.hooks);
    const spanish = new Agent({ name: 'spanish_agent', instructions: 'Translate to Spanish.', model: 'gpt-4.1-nano' });
    const orchestrator = new Agent({ name: 'orchestrator_agent', instructions: 'Translate.', model: 'gpt-4.1', tools: [spanish.asTool({ toolName: 'translate_to_spanish', toolDescription: 'Translate to Spanish' })] });
    await run(orchestrator, 'Say thank you in Spanish.');
    const { atif } = await recorded.finish();
    const byName = Object.fromEntries(atif.map((doc) => [doc.agent.name, doc]));
    expect(Object.keys(byName).sort()).toEqual(['orchestrator_agent', 'spanish_agent']);
    expect(byName.spanish_agent!.agent.model_name).toBe('gpt-4.1-nano');
    const parent = byName.orchestrator_agent!.session_id as string;
    expect(byName.spanish_agent!.session_id).toBe(`${parent}:sub:call_es`);
    // The session id made file-name safe: ':' is replaced and a hash of the id keeps two ids from sharing a file.
    const files = readdirSync(path.join(recorded.dir, 'atif')).sort();
    expect(files).toHaveLength(2);
    expect(files.find((file) => file.endsWith(`-atif-${parent}.json`)), files.join(', ')).toBeDefined();
    expect(files.find((file) => new RegExp(`-atif-${parent}_sub_call_es-[0-9a-f]{12}\\.json$`).test(file)), files.join(', ')).toBeDefined();
  }, 30_000);
});
