// A host that emits the hooks itself, whose tools return values that are not
// text: an object, and the `{error}` a failed call returns. The trajectory
// keeps such a result in the observation's `extra.tool_result` (text goes in
// `content`); `view` and `compare` read it there, as they read an ATOF tool
// end's `data`. Before, they read `content` only: one run's two files
// compared different (`weather result: {"temp_c":18} → (none)`), the failed
// call's error lost its text in the trajectory, and two trajectories whose
// tools returned different objects compared equivalent.
import { describe, expect, it } from 'vitest';
import { TurnIds } from '../../src/hooks/index.ts';
import { recordedPlugin } from '../adapters/support.ts';
import { cliInProcess } from './support.ts';
import { filesOf } from './view-json.ts';
import { compared, differencesOf } from './compare-json.ts';

/** One turn: the model asks for two weather calls; Paris answers `{ temp_c }`, Atlantis fails with `{ error }`. */
async function hostRun(label: string, parisTemp: number): Promise<{ atif: string; atof: string }> {
  const recorded = recordedPlugin(label);
  const { hooks } = recorded;
  hooks.emit('on_session_start', { session_id: 'weather-1', model: 'gpt-4o' });
  const turn = new TurnIds({ sessionId: 'weather-1', taskId: 'task-1', turnId: 'turn-1' });
  hooks.emit('pre_llm_call', { ...turn, user_message: 'Weather in Paris and Atlantis?' });
  const ask = [{ role: 'user', content: 'Weather in Paris and Atlantis?' }];
  const calls = ['Paris', 'Atlantis'].map((city, index) => ({ id: `call_${index + 1}`, type: 'function', function: { name: 'weather', arguments: JSON.stringify({ city }) } }));
  const first = turn.nextApiCall();
  hooks.emit('pre_api_request', { ...turn, ...first, provider: 'openai', model: 'gpt-4o', request: { body: { messages: ask } } });
  hooks.emit('post_api_request', { ...turn, ...first, response: { model: 'gpt-4o', choices: [{ message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' }] }, usage: { prompt_tokens: 20, completion_tokens: 10 } });
  const ids = (index: number) => ({ ...turn, api_request_id: first.api_request_id, tool_call_id: calls[index]!.id, tool_name: 'weather' });
  hooks.emit('pre_tool_call', { ...ids(0), args: { city: 'Paris' } });
  hooks.emit('pre_tool_call', { ...ids(1), args: { city: 'Atlantis' } });
  hooks.emit('post_tool_call', { ...ids(0), args: { city: 'Paris' }, result: { temp_c: parisTemp }, status: 'ok' });
  hooks.emit('post_tool_call', { ...ids(1), args: { city: 'Atlantis' }, result: { error: 'no weather station in Atlantis' }, status: 'error', error_type: 'TypeError', error_message: 'no weather station in Atlantis' });
  const second = turn.nextApiCall();
  hooks.emit('pre_api_request', { ...turn, ...second, provider: 'openai', model: 'gpt-4o', request: { body: { messages: ask } } });
  hooks.emit('post_api_request', { ...turn, ...second, response: { model: 'gpt-4o', choices: [{ message: { role: 'assistant', content: `Paris: ${parisTemp}°C.` }, finish_reason: 'stop' }] }, usage: { prompt_tokens: 40, completion_tokens: 5 } });
  hooks.emit('post_llm_call', { ...turn, assistant_response: `Paris: ${parisTemp}°C.` });
  hooks.emit('on_session_end', { ...turn, completed: true });
  hooks.emit('on_session_finalize', { session_id: 'weather-1' });
  await recorded.finish();
  return filesOf(recorded.dir);
}

describe('compare and view: tool results that are not text, from a host that emits the hooks', () => {
  it('one run: its ATIF file and its ATOF file compare equivalent, the failed call with the same error from either', async () => {
    const files = await hostRun('host-results', 18);
    const report = await compared(files.atof, files.atif);
    expect(differencesOf(report)).toEqual([]);
    expect(report.code).toBe(0);
    const lines = async (file: string) => (await cliInProcess(['view', file])).stdout.split('\n').filter((line) => line.includes('tool weather'));
    const fromAtif = await lines(files.atif);
    expect(fromAtif.find((line) => line.includes('✗'))).toMatch(/ERROR TypeError: \{"error":"no weather station in Atlantis"\}$/);
    expect((await lines(files.atof)).map((line) => line.replace(/^.*tool weather\s+\S+\s+/, ''))).toEqual(fromAtif.map((line) => line.replace(/^.*tool weather\s+\S+\s+/, '')));
  }, 30_000);

  it('two runs whose tool returned different objects differ, in that result', async () => {
    const before = await hostRun('host-results-a', 18);
    const after = await hostRun('host-results-b', 21);
    const report = await compared(before.atif, after.atif);
    const results = report.pairs.flatMap((pair) => pair.differences.filter((difference) => difference.field === 'tool.result'));
    expect(results).toEqual([{ field: 'tool.result', tool: 'weather', a: { temp_c: 18 }, b: { temp_c: 21 } }]);
    expect(report.code).toBe(1);
  }, 30_000);
});
