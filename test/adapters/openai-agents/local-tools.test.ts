// A coding agent as the Agents SDK's docs write one: the local built-in tools
// (`shellTool`, `applyPatchTool`, `computerTool`) on OpenAIResponsesModel,
// the program supplying the shell, the editor and the computer, over the real
// openai client and the fake fetch (Responses JSON and SSE: `shell_call`,
// `apply_patch_call`, `computer_call` items and their outputs). Each call is a
// tool span with what the model asked and what the program answered, in ATIF
// a tool call of its step with its observation, as a function tool is; the
// next request as recorded holds the calls and their outputs, as sent.
// docs/adapters/openai-agents.md's coding agent runs as written on Node, Bun
// and Deno against the same API as a loopback server, its shell and editor
// changing the folder it runs in.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, applyPatchTool, computerTool, OpenAIResponsesModel, run, shellTool, type Computer, type Editor, type RunResult, type Shell, type StreamedRunResult } from '@openai/agents';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { loopbackApi, repoRoot, runSnippet, SNIPPET_RUNTIMES, tsSnippets, userEnv } from '../../support/doc-snippets.ts';
import { applyPatchCallItem, computerCallItem, shellCallItem, shellCallOutputItem } from '../../support/provider-wire.ts';
import { sameOnNative } from '../same-on-native.ts';
import { expectNothingLost, recordedPlugin, viewLines } from '../support.ts';
import { agentSteps, expectRunsClosed, hooks, instrumentEachTest, observation, onlyTrajectory, sdkTotals, stepsOf, tokenTotals, TRACING, useTracing } from './support.ts';
import { dated, FakeOpenAI } from './wire.ts';

const api = new FakeOpenAI();
const model = new OpenAIResponsesModel(api.client(), 'gpt-5.4');
const instrument = instrumentEachTest();
afterEach(() => api.load({}));

/** A screenshot as a computer returns it: base64 PNG, kilobytes of it. */
const SCREENSHOT = 'iVBORw0KGgo' + 'A'.repeat(4000);

const DIFF = '+export const greet = (name: string) => `Hello, ${name}!`;\n';

/** The program's side of the three tools: what each was asked, and answers as a real one would. */
function workspace() {
  const ran: string[][] = [];
  const edits: Array<{ type: string; path: string }> = [];
  const actions: string[] = [];
  const shell: Shell = {
    run: async (action) => {
      ran.push(action.commands);
      if (action.commands.includes('exit 3')) throw new Error('sandbox refused: exit 3');
      return { output: action.commands.map((command) => ({ stdout: `ran ${command}\n`, stderr: '', outcome: { type: 'exit' as const, exitCode: 0 } })) };
    },
  };
  const editor: Editor = {
    createFile: async (operation) => {
      edits.push({ type: operation.type, path: operation.path });
      return { status: 'completed', output: `Created ${operation.path}` };
    },
    updateFile: async (operation) => {
      edits.push({ type: operation.type, path: operation.path });
      return { status: 'completed', output: `Updated ${operation.path}` };
    },
    deleteFile: async (operation) => {
      edits.push({ type: operation.type, path: operation.path });
      return { status: 'completed', output: `Deleted ${operation.path}` };
    },
  };
  const computer: Computer = {
    environment: 'browser',
    dimensions: [1024, 768],
    screenshot: async () => SCREENSHOT,
    click: async (x, y, button) => void actions.push(`click ${x},${y} ${button}`),
    doubleClick: async () => {},
    scroll: async () => {},
    type: async (text) => void actions.push(`type ${text}`),
    wait: async () => {},
    move: async () => {},
    keypress: async () => {},
    drag: async () => {},
  };
  return { shell, editor, computer, ran, edits, actions };
}

describe('OpenAI Agents SDK: the local built-in tools (shell, apply_patch, computer)', () => {
  for (const tracing of TRACING) {
    for (const stream of [false, true]) {
      const how = `${stream ? 'streamed' : 'run'}, ${tracing}`;

      it(`a coding agent: each shell, apply_patch and computer call is a tool call with its input and the program's output (${how})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-5.4': [
            {
              localCalls: [
                shellCallItem('call_shell', ['ls', 'cat package.json'], { timeout_ms: 10_000 }),
                applyPatchCallItem('call_patch', { type: 'create_file', path: 'src/greet.ts', diff: DIFF }),
                computerCallItem('call_computer', [{ type: 'click', x: 40, y: 80, button: 'left' }, { type: 'type', text: 'npm test' }]),
              ],
              usage: { input: 300, output: 90, cached: 128, reasoning: 40 },
            },
            { localCalls: [shellCallItem('call_fails', ['exit 3'])], usage: { input: 520, output: 20 } },
            { text: 'Created src/greet.ts; the tests ran.', usage: { input: 600, output: 12, cached: 256 } },
          ],
        });
        const recorded = recordedPlugin('agents-local-tools');
        instrument(recorded.hooks);
        const { shell, editor, computer, ran, edits, actions } = workspace();
        const agent = new Agent({
          name: 'Coding agent',
          instructions: 'You are a coding agent. Use the shell and apply_patch to change the workspace.',
          model,
          tools: [shellTool({ shell }), applyPatchTool({ editor }), computerTool({ computer })],
        });
        const result = stream ? await run(agent, 'Add a greet function and run the tests.', { stream: true }) : await run(agent, 'Add a greet function and run the tests.');
        if (stream) {
          for await (const _event of result as unknown as AsyncIterable<unknown>) void _event;
          await (result as unknown as { completed: Promise<void> }).completed;
        }
        expect(result.finalOutput).toBe('Created src/greet.ts; the tests ran.');
        // What the program did.
        expect(ran).toEqual([['ls', 'cat package.json'], ['exit 3']]);
        expect(edits).toEqual([{ type: 'create_file', path: 'src/greet.ts' }]);
        expect(actions).toEqual(['click 40,80 left', 'type npm test']);
        // What the SDK sent the model back: each call's output item, under its call id. It runs the computer's actions
        // beside the function tools, then the shell and apply_patch calls in the model's order.
        const sent = api.requests[1]!.body.input as Array<Record<string, any>>;
        expect(sent.filter((item) => String(item.type).endsWith('_output')).map((item) => [item.type, item.call_id])).toEqual([
          ['computer_call_output', 'call_computer'],
          ['shell_call_output', 'call_shell'],
          ['apply_patch_call_output', 'call_patch'],
        ]);

        // The tool spans: what the model asked for, and what the program answered.
        const starts = hooks(recorded, 'pre_tool_call');
        expect(starts.map((p) => [p.tool_call_id, p.tool_name, p.args])).toEqual([
          ['call_computer', 'computer_use_preview', { actions: [{ type: 'click', x: 40, y: 80, button: 'left' }, { type: 'type', text: 'npm test' }] }],
          ['call_shell', 'shell', { commands: ['ls', 'cat package.json'], timeout_ms: 10_000 }],
          ['call_patch', 'apply_patch', { type: 'create_file', path: 'src/greet.ts', diff: DIFF }],
          ['call_fails', 'shell', { commands: ['exit 3'] }],
        ]);
        const ends = hooks(recorded, 'post_tool_call');
        expect(ends.map((p) => [p.tool_call_id, p.status])).toEqual([
          ['call_computer', 'ok'],
          ['call_shell', 'ok'],
          ['call_patch', 'ok'],
          ['call_fails', 'error'],
        ]);
        expect(JSON.parse(ends[1]!.result)).toEqual([
          { stdout: 'ran ls\n', stderr: '', outcome: { type: 'exit', exitCode: 0 } },
          { stdout: 'ran cat package.json\n', stderr: '', outcome: { type: 'exit', exitCode: 0 } },
        ]);
        expect(ends[2]!.result).toBe('Created src/greet.ts');
        expect(ends[3]).toMatchObject({ error_message: 'sandbox refused: exit 3' });

        // The requests as recorded hold the calls and their outputs, as sent.
        const second = hooks(recorded, 'pre_api_request')[1]!.request.body.messages as Array<Record<string, any>>;
        expect(second.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'tool']);
        expect(second[2]!.tool_calls.map((call: Record<string, any>) => [call.id, call.function.name])).toEqual([
          ['call_shell', 'shell'],
          ['call_patch', 'apply_patch'],
          ['call_computer', 'computer_use_preview'],
        ]);
        expect(second.slice(3).map((message) => message.tool_call_id)).toEqual(['call_computer', 'call_shell', 'call_patch']);
        expect(second[5]!.content).toBe('Created src/greet.ts');
        expect(hooks(recorded, 'pre_api_request')[0]!.request.body.tools.map((t: Record<string, any>) => t.function.name)).toEqual(['shell', 'apply_patch', 'computer_use_preview']);

        const { atif, atof, counters } = await recorded.finish();
        expectNothingLost(counters);
        expectRunsClosed(recorded);
        const doc = onlyTrajectory(atif);
        const steps = agentSteps(doc);
        expect(steps.map((step) => step.model_name)).toEqual([dated('gpt-5.4'), dated('gpt-5.4'), dated('gpt-5.4')]);
        expect(steps.map((step) => (step.tool_calls ?? []).map((call: Record<string, any>) => [call.tool_call_id, call.function_name, call.arguments]))).toEqual([
          [
            ['call_shell', 'shell', { commands: ['ls', 'cat package.json'], timeout_ms: 10_000 }],
            ['call_patch', 'apply_patch', { type: 'create_file', path: 'src/greet.ts', diff: DIFF }],
            ['call_computer', 'computer_use_preview', { actions: [{ type: 'click', x: 40, y: 80, button: 'left' }, { type: 'type', text: 'npm test' }] }],
          ],
          [['call_fails', 'shell', { commands: ['exit 3'] }]],
          [],
        ]);
        expect(observation(doc, 'call_shell')).toMatchObject({ extra: { metadata: { status: 'ok' } } });
        expect(observation(doc, 'call_patch')).toMatchObject({ content: 'Created src/greet.ts', extra: { metadata: { status: 'ok' } } });
        // The screenshot is an image the model was sent: its base64 is left out with its length.
        expect(observation(doc, 'call_computer')).toMatchObject({ content: `[left out: ${SCREENSHOT.length} characters of base64]`, extra: { metadata: { status: 'ok' } } });
        expect(observation(doc, 'call_fails')).toMatchObject({ extra: { metadata: { status: 'error' } } });
        expect(JSON.stringify(atif)).not.toContain('AAAAAAAAAAAAAAAA');
        expect(JSON.stringify(atof)).not.toContain('AAAAAAAAAAAAAAAA');
        expect(steps.at(-1)!.message).toBe('Created src/greet.ts; the tests ran.');
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
        expect(steps[0]!.metrics).toMatchObject({ extra: { completion_tokens_details: { reasoning_tokens: 40 } } });
        // Four tool spans in ATOF, each with its input and output.
        const toolEnds = atof.filter((event) => event.kind === 'scope' && event.category === 'tool' && event.scope_category === 'end');
        expect(toolEnds.map((event) => event.name)).toEqual(['computer_use_preview', 'shell', 'apply_patch', 'shell']);
        // What `view` shows, from either file: the four calls, the failed one marked.
        for (const of of ['atif', 'atof'] as const) {
          const tools = (await viewLines(recorded, of)).filter((line) => /(─ |✗ )tool \S+ /.test(line));
          expect(tools, of).toHaveLength(4);
          expect(tools.find((line) => line.includes('tool shell')), of).toMatch(/tool shell .*ls/);
          expect(tools.find((line) => line.includes('tool apply_patch')), of).toMatch(/tool apply_patch .*"diff":"\+export const greet/);
          expect(tools[3], of).toMatch(/✗ tool shell .*sandbox refused: exit 3/);
        }
        await sameOnNative(recorded);
      }, 60_000);

      it(`an editor that answers status 'failed' (the patch did not apply): the call failed, with the editor's output, as the model was told (${how})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-5.4': [
            { localCalls: [applyPatchCallItem('call_update', { type: 'update_file', path: 'src/greet.ts', diff: '@@\n-const a = 1;\n+const a = 2;\n' })], usage: { input: 150, output: 30 } },
            { text: 'The patch did not apply.', usage: { input: 200, output: 8 } },
          ],
        });
        const recorded = recordedPlugin('agents-local-tools-patch-failed');
        instrument(recorded.hooks);
        const editor: Editor = {
          createFile: async () => ({ status: 'completed' }),
          updateFile: async (operation) => ({ status: 'failed', output: `Patch does not apply to ${operation.path}: context not found` }),
          deleteFile: async () => ({ status: 'completed' }),
        };
        const agent = new Agent({ name: 'Coding agent', instructions: 'You are a coding agent.', model, tools: [applyPatchTool({ editor })] });
        const result = stream ? await run(agent, 'Set a to 2.', { stream: true }) : await run(agent, 'Set a to 2.');
        if (stream) {
          for await (const _event of result as unknown as AsyncIterable<unknown>) void _event;
          await (result as unknown as { completed: Promise<void> }).completed;
        }
        expect(result.finalOutput).toBe('The patch did not apply.');
        const told = (api.requests[1]!.body.input as Array<Record<string, any>>).find((item) => item.type === 'apply_patch_call_output');
        expect(told).toMatchObject({ call_id: 'call_update', status: 'failed', output: 'Patch does not apply to src/greet.ts: context not found' });
        expect(hooks(recorded, 'post_tool_call')).toMatchObject([
          { tool_call_id: 'call_update', status: 'error', error_type: 'ToolError', error_message: 'Patch does not apply to src/greet.ts: context not found', result: 'Patch does not apply to src/greet.ts: context not found' },
        ]);
        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(observation(onlyTrajectory(atif), 'call_update')).toMatchObject({ content: 'Patch does not apply to src/greet.ts: context not found', extra: { metadata: { status: 'error' } } });
        for (const of of ['atif', 'atof'] as const) {
          expect((await viewLines(recorded, of)).find((line) => line.includes('tool apply_patch')), of).toMatch(/✗ tool apply_patch .*Patch does not apply/);
        }
        await sameOnNative(recorded);
      }, 60_000);

      it(`a hosted container shell (environment container_auto): OpenAI ran the call, so it is a call of its step with what came back, and no tool span (${how})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-5.4': [
            {
              localCalls: [shellCallItem('call_hosted', ['python --version']), shellCallOutputItem('call_hosted', [{ stdout: 'Python 3.12.1\n', exit_code: 0 }])],
              text: 'The container runs Python 3.12.1.',
              usage: { input: 140, output: 30 },
            },
          ],
        });
        const recorded = recordedPlugin('agents-hosted-shell');
        instrument(recorded.hooks);
        const agent = new Agent({ name: 'Container agent', instructions: 'Use the shell.', model, tools: [shellTool({ environment: { type: 'container_auto' } })] });
        const result = stream ? await run(agent, 'Which Python is there?', { stream: true }) : await run(agent, 'Which Python is there?');
        if (stream) {
          for await (const _event of result as unknown as AsyncIterable<unknown>) void _event;
          await (result as unknown as { completed: Promise<void> }).completed;
        }
        expect(result.finalOutput).toBe('The container runs Python 3.12.1.');
        expect(api.requests).toHaveLength(1);
        expect(hooks(recorded, 'pre_tool_call')).toEqual([]);
        const { atif, atof, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = onlyTrajectory(atif);
        const calls = agentSteps(doc).flatMap((step) => step.tool_calls ?? []);
        expect(calls).toMatchObject([{ tool_call_id: 'call_hosted', function_name: 'shell', arguments: { commands: ['python --version'] }, extra: { provider_executed: true } }]);
        expect(JSON.stringify(calls[0].extra.provider_result)).toContain('Python 3.12.1');
        expect(atof.filter((event) => event.category === 'tool')).toEqual([]);
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
        await sameOnNative(recorded);
      }, 60_000);

      it(`needsApproval, as the docs set the two up: the shell call approved runs, the patch rejected is denied with what the model was told; one session (${how})`, async () => {
        useTracing(tracing);
        api.load({
          'gpt-5.4': [
            {
              localCalls: [shellCallItem('call_test', ['npm test']), applyPatchCallItem('call_delete', { type: 'delete_file', path: 'README.md' })],
              usage: { input: 200, output: 40 },
            },
            { text: 'The tests pass; README.md stays.', usage: { input: 320, output: 10, cached: 128 } },
          ],
        });
        const recorded = recordedPlugin('agents-local-tools-approvals');
        instrument(recorded.hooks);
        const { shell, editor, ran, edits } = workspace();
        const agent = new Agent({ name: 'Coding agent', instructions: 'You are a coding agent.', model, tools: [shellTool({ shell, needsApproval: true }), applyPatchTool({ editor, needsApproval: true })] });
        const go = async (input: Parameters<typeof run>[1]): Promise<RunResult<any, any> | StreamedRunResult<any, any>> => {
          if (!stream) return run(agent, input);
          const streamed = await run(agent, input, { stream: true });
          for await (const _event of streamed) void _event;
          await streamed.completed;
          return streamed;
        };
        let result = await go('Run the tests, then delete the README.');
        expect(result.interruptions.map((item) => item.name)).toEqual(['shell', 'apply_patch']);
        // Asked, with what each call would do.
        expect(hooks(recorded, 'pre_approval_request').map((p) => [p.tool_call_id, JSON.parse(p.command)])).toEqual([
          ['call_test', { commands: ['npm test'] }],
          ['call_delete', { type: 'delete_file', path: 'README.md' }],
        ]);
        for (const interruption of result.interruptions) {
          if (interruption.name === 'shell') result.state.approve(interruption);
          else result.state.reject(interruption, { message: 'Do not delete files.' });
        }
        result = await go(result.state);
        expect(result.finalOutput).toBe('The tests pass; README.md stays.');
        expect(ran).toEqual([['npm test']]);
        expect(edits).toEqual([]);
        // What the model was told of the rejected patch.
        const told = (api.requests[1]!.body.input as Array<Record<string, any>>).find((item) => item.type === 'apply_patch_call_output');
        expect(told).toMatchObject({ call_id: 'call_delete', status: 'failed', output: 'Do not delete files.' });

        expect(new Set(recorded.log.map((entry) => entry.payload.session_id).filter((id) => id !== undefined)).size).toBe(1);
        expect(hooks(recorded, 'post_approval_response').map((p) => [p.tool_call_id, p.choice])).toEqual([
          ['call_test', 'once'],
          ['call_delete', 'deny'],
        ]);
        expect(hooks(recorded, 'pre_tool_call').map((p) => [p.tool_call_id, p.args])).toEqual(
          expect.arrayContaining([
            ['call_test', { commands: ['npm test'] }],
            ['call_delete', { type: 'delete_file', path: 'README.md' }],
          ]),
        );
        // Each call ended before the request that told the model its outcome.
        const order = recorded.log.filter((e) => e.hook === 'pre_api_request' || e.hook === 'post_tool_call').map((e) => (e.hook === 'pre_api_request' ? 'request' : `${String(e.payload.tool_call_id)} ${String(e.payload.status)}`));
        expect(order).toEqual(['request', 'call_test ok', 'call_delete denied', 'request']);
        expect(hooks(recorded, 'post_tool_call').find((p) => p.tool_call_id === 'call_delete')).toMatchObject({ status: 'denied', result: 'Do not delete files.' });

        const { atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        const doc = onlyTrajectory(atif);
        expect(observation(doc, 'call_test')).toMatchObject({ extra: { metadata: { status: 'ok' } } });
        expect(observation(doc, 'call_delete')).toMatchObject({ content: 'Do not delete files.', extra: { metadata: { status: 'denied' } } });
        expect(tokenTotals(doc)).toEqual(sdkTotals(result.state.usage));
        await sameOnNative(recorded);
      }, 60_000);
    }
  }
});

const JS_DIFF = '+export const greet = (name) => `Hello, ${name}!`;\n';

describe('docs/adapters/openai-agents.md: a coding agent', () => {
  const page = readFileSync(path.join(repoRoot, 'docs/adapters/openai-agents.md'), 'utf8');
  const snippet = tsSnippets(page).find((code) => code.includes('applyPatchTool({ editor })'));
  const docsApi = new FakeOpenAI();
  let server: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    server = await loopbackApi((url, init) => docsApi.fetch(url, init));
  });
  afterAll(() => server.close());

  it('has the snippet', () => {
    expect(snippet).toBeDefined();
  });

  for (const runtime of SNIPPET_RUNTIMES) {
    it(`its snippet runs as written on ${runtime}: the patch writes the file, the shell reads it, the trajectory says both`, async () => {
      docsApi.load({
        'gpt-5.4': [
          { localCalls: [applyPatchCallItem('call_create', { type: 'create_file', path: 'greet.mjs', diff: JS_DIFF })], usage: { input: 120, output: 30 } },
          { localCalls: [shellCallItem('call_cat', ['cat greet.mjs'])], usage: { input: 160, output: 12, cached: 64 } },
          { text: 'greet.mjs has the greet function.', usage: { input: 200, output: 9, cached: 128 } },
        ],
      });
      const env = userEnv({ OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_AGENTS_DISABLE_TRACING: '1', NO_COLOR: '1', NODE_ENV: 'production' });
      const result = await runSnippet(snippet!, runtime, 'openai-agents-coding', env);
      try {
        expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
        expect(result.stdout).toContain('greet.mjs has the greet function.');
        // The SDK's applyDiff makes the file of the diff's added lines.
        const written = readFileSync(path.join(result.cwd, 'greet.mjs'), 'utf8');
        expect(written).toBe('export const greet = (name) => `Hello, ${name}!`;');
        const files = readdirSync(path.join(result.cwd, 'trajectories'));
        expect(files).toHaveLength(1);
        const doc = JSON.parse(readFileSync(path.join(result.cwd, 'trajectories', files[0]!), 'utf8'));
        expect(validateAtif(doc)).toEqual([]);
        const calls = agentSteps(doc).flatMap((step) => step.tool_calls ?? []);
        expect(calls.map((call: Record<string, any>) => [call.tool_call_id, call.function_name, call.arguments])).toEqual([
          ['call_create', 'apply_patch', { type: 'create_file', path: 'greet.mjs', diff: JS_DIFF }],
          ['call_cat', 'shell', { commands: ['cat greet.mjs'] }],
        ]);
        expect(observation(doc, 'call_create')?.content).toBe('Created greet.mjs');
        // What the shell read back is what the editor wrote.
        expect(JSON.parse(observation(doc, 'call_cat')!.content)).toEqual([{ stdout: written, stderr: '', outcome: { type: 'exit', exitCode: 0 } }]);
        expect(doc.final_metrics).toMatchObject({ total_prompt_tokens: 480, total_completion_tokens: 51, total_cached_tokens: 192 });
      } finally {
        rmSync(result.cwd, { recursive: true, force: true });
      }
    }, 130_000);
  }
});
