// A call allowed to run with other input than the model asked for: the
// program's `canUseTool` answering `updatedInput`, or its own `PreToolUse`
// hook doing so (the SDK's permissions and hooks docs). The SDK is scripted
// here, calling the hooks and the callback where the CLI calls them (the real
// CLI: test/slow/claude-agent-sdk-options.test.ts,
// test/slow/claude-agent-sdk-permissions.test.ts). The call's arguments stay
// the model's; the approval holds the input the tool ran with, and `view`
// shows it.
import { describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { reply, type Message } from './scripted.ts';
import { backends, expectNothingLost, recordedPlugin, viewLines, type AtifDoc } from '../support.ts';

const session = { session_id: 'claude-session-changed-input' };
type HookCallback = (input: unknown, id: unknown, options: unknown) => Promise<unknown>;
type CanUseTool = (toolName: string, input: unknown, options: unknown) => Promise<unknown>;
/** A step of the script: a message, or the CLI asking about a call (its `PreToolUse` hooks, then `canUseTool`). */
type Item = Message | { readonly asks: string; readonly input: Record<string, unknown> };

function scriptedSdk(script: readonly Item[]) {
  return {
    query: (params: { prompt: unknown; options?: unknown }) =>
      (async function* () {
        const options = params.options as { hooks?: Record<string, Array<{ hooks: HookCallback[] }>>; canUseTool?: CanUseTool } | undefined;
        for (const item of script) {
          if (!('asks' in item)) {
            yield item;
            continue;
          }
          const input = { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: item.input, tool_use_id: item.asks, ...session };
          let decided = false;
          for (const matcher of options?.hooks?.PreToolUse ?? []) {
            for (const hook of matcher.hooks) {
              const out = (await hook(input, item.asks, { signal: new AbortController().signal })) as { hookSpecificOutput?: { permissionDecision?: string } } | undefined;
              if (out?.hookSpecificOutput?.permissionDecision !== undefined) decided = true;
            }
          }
          if (!decided) await options?.canUseTool?.('Bash', item.input, { signal: new AbortController().signal, toolUseID: item.asks });
        }
      })(),
  };
}

const init = { type: 'system', subtype: 'init', model: 'claude-sonnet-4-5', tools: ['Bash'], ...session };
const requesting = { type: 'system', subtype: 'status', status: 'requesting', ...session };
const byHook = { command: 'rm -rf build', description: 'Clean' };
const byCallback = { command: 'echo model', description: 'Echo' };
const toolResults = (...results: Array<[id: string, text: string]>) => ({
  type: 'user',
  message: { role: 'user', content: results.map(([id, text]) => ({ type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text }] })) },
  parent_tool_use_id: null,
  ...session,
});
const script: Item[] = [
  init,
  requesting,
  ...reply(session, 'msg_1', [{ type: 'tool_use', id: 'toolu_hook', name: 'Bash', input: byHook }, { type: 'tool_use', id: 'toolu_callback', name: 'Bash', input: byCallback }], 'tool_use'),
  { asks: 'toolu_hook', input: byHook },
  { asks: 'toolu_callback', input: byCallback },
  toolResults(['toolu_hook', ''], ['toolu_callback', 'updated']),
  requesting,
  ...reply(session, 'msg_2', [{ type: 'text', text: 'Done.' }], 'end_turn'),
  { type: 'result', subtype: 'success', is_error: false, result: 'Done.', num_turns: 2, usage: { input_tokens: 20, output_tokens: 14 }, ...session },
];

describe('the Claude Agent SDK adapter: a call allowed with changed input', () => {
  for (const backend of backends()) {
    it(`keeps the model's arguments and records the input the tool ran with on its approval, ${backend} backend`, async () => {
      const recorded = recordedPlugin(`claude-changed-input-${backend}`, backend);
      // As the SDK's docs write them: a PreToolUse hook that narrows a command, a canUseTool that rewrites one.
      const narrow = async (input: any) =>
        input.tool_input.command.startsWith('rm ') ? { hookSpecificOutput: { hookEventName: 'PreToolUse' as const, permissionDecision: 'allow' as const, updatedInput: { ...input.tool_input, command: 'rm -rf build/tmp' } } } : {};
      const canUseTool = async (_toolName: string, input: Record<string, unknown>) => ({ behavior: 'allow' as const, updatedInput: { ...input, command: 'echo updated' } });
      const { query } = wrapClaudeAgentSdk(scriptedSdk(script), recorded.hooks);
      for await (const _ of query({ prompt: 'Clean, then echo.', options: { canUseTool, hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [narrow] }] } } }) as AsyncIterable<unknown>) void _;
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      const answers = recorded.log.filter((entry) => entry.hook === 'post_approval_response').map((entry) => entry.payload);
      expect(answers.map((payload) => [payload.tool_call_id, payload.choice, payload.decided_by ?? null, payload.description, payload.changed_args])).toEqual([
        ['toolu_hook', 'once', 'PreToolUse hook', 'allowed with changed input', { command: 'rm -rf build/tmp', description: 'Clean' }],
        ['toolu_callback', 'once', null, 'allowed with changed input', { command: 'echo updated', description: 'Echo' }],
      ]);
      // The CLI runs the tool out of sight: its span holds the call as the model asked it.
      expect(recorded.log.filter((entry) => entry.hook === 'pre_tool_call').map((entry) => (entry.payload.args as Record<string, unknown>).command)).toEqual(['rm -rf build', 'echo model']);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      // The trajectory's calls are what the model asked (the next request's history holds them); their results what ran.
      const calls = (doc.steps as AtifDoc[]).flatMap((step) => step.tool_calls ?? []);
      expect(calls.map((call: AtifDoc) => [call.tool_call_id, call.arguments.command])).toEqual([['toolu_hook', 'rm -rf build'], ['toolu_callback', 'echo model']]);
      const marks = atof.filter((event) => event.name === 'hermes.approval.response').map((event) => [event.data.tool_call_id, event.data.changed_args?.command]);
      expect(marks).toEqual([['toolu_hook', 'rm -rf build/tmp'], ['toolu_callback', 'echo updated']]);
      const shown = (await viewLines(recorded, 'atof')).filter((line) => line.includes('approval: once'));
      expect(shown).toHaveLength(2);
      expect(shown[0]).toMatch(/by PreToolUse hook · ran with changed input: \{"command":"rm -rf build\/tmp"/);
      expect(shown[1]).toMatch(/approval: once {2}ran with changed input: \{"command":"echo updated"/);
    });
  }
});
