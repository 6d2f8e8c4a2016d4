// A query's MCP call answered by a server instrumented with
// `instrumentMcpServer`: the CLI hands the SDK's stream the server's result
// with its `_meta` (`tool_use_result`), and the call's observation references
// the server trajectory that result names for it, and only for it (the
// messages as the real CLI sent them in test/slow/claude-agent-sdk-mcp.test.ts,
// which runs the CLI and the server). The SDK is scripted here.
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { reply, scriptedSdk } from './scripted.ts';
import { expectNothingLost, recordedPlugin } from '../support.ts';

const session = { session_id: 'claude-session-1' };
const server = (id: string) => ({ session_id: `mcp-weather-server-${id}`, trajectory_id: `mcp-weather-server-${id}`, trajectory_path: `mcp-weather-server-${id}.json` });

/** The tool_result message of `id`, whose server result names `named` as the call it answered. */
function answer(id: string, named: string, text: string): Record<string, unknown> {
  return {
    type: 'user',
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text }] }] },
    parent_tool_use_id: null,
    tool_use_result: { content: [{ type: 'text', text }], _meta: { 'nemo-relay/trajectory': server(id), 'nemo-relay/caller': { tool_call_id: named } } },
    ...session,
  };
}

const script: Array<Record<string, unknown>> = [
  { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['mcp__weather__forecast'], ...session },
  ...reply(
    session,
    'msg_1',
    [
      { type: 'tool_use', id: 'toolu_oslo', name: 'mcp__weather__forecast', input: { city: 'Oslo' } },
      { type: 'tool_use', id: 'toolu_bergen', name: 'mcp__weather__forecast', input: { city: 'Bergen' } },
    ],
    'tool_use',
  ),
  answer('toolu_oslo', 'toolu_oslo', 'Oslo: rain'),
  // A result naming another call than the one it answers links nothing.
  answer('toolu_bergen', 'toolu_oslo', 'Bergen: rain'),
  ...reply(session, 'msg_2', [{ type: 'text', text: 'Rain in both.' }], 'end_turn'),
  { type: 'result', subtype: 'success', is_error: false, result: 'Rain in both.', num_turns: 2, usage: { input_tokens: 20, output_tokens: 14 }, ...session },
];

describe('the Claude Agent SDK adapter: an MCP call whose server names its trajectory', () => {
  it('references the server trajectory the result names for that call, and only for it', async () => {
    const recorded = recordedPlugin('claude-mcp-ref');
    for await (const _ of wrapClaudeAgentSdk(scriptedSdk(script), recorded.hooks).query({ prompt: 'Weather?', options: {} }) as AsyncIterable<unknown>) void _;
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const results = (atif[0]!.steps as Array<Record<string, any>>).flatMap((step) => step.observation?.results ?? []);
    expect(results.map((result) => [result.source_call_id, result.content, result.subagent_trajectory_ref])).toEqual([
      ['toolu_oslo', 'Oslo: rain', [server('toolu_oslo')]],
      ['toolu_bergen', 'Bergen: rain', undefined],
    ]);
  });
});
