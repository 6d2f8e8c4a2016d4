// A session closed while a tool or LLM call of it is open (shutdown() with calls in flight, a signal, the idle TTL or
// the session cap evicting it): the ATOF file ends the call `session_closed` and the session with why it closed. The
// plugin's own trajectory says it too, where native wrote a tool call with no result and no end of its turn: the call
// has a result `cut short: <reason>`, its turn ends interrupted with the reason, the notes name the call; `view` of
// either file and `compare` of the two say `cut short: <reason>`; `convert` of the ATOF file writes the same
// trajectory; the trajectory is valid ATIF; memory and native write the same files.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TurnIds } from '../../src/hooks/ids.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { backends, expectNothingLost, recordedPlugin, viewLines, type AtifDoc, type Recorded } from '../adapters/support.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import { compared, differencesOf, expectRunFilesAgree } from '../cli/compare-json.ts';
import { filesOf } from '../cli/view-json.ts';
import { cliInProcess, tempDir } from '../cli/support.ts';
import { runScript } from '../native/support.ts';

/** A turn whose model asked for a tool that is running when the session closes; `llmOpen`: the tool answered and the next model call is running. */
function turnCutMidway(hooks: HookRegistry, sessionId: string, llmOpen = false): void {
  const ids = new TurnIds({ sessionId });
  hooks.emit('on_session_start', { session_id: sessionId, model: 'gpt-4o' });
  hooks.emit('pre_llm_call', { ...ids, user_message: 'What is the weather in Paris?' });
  const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];
  const first = ids.nextApiCall();
  hooks.emit('pre_api_request', { ...ids, ...first, provider: 'openai', model: 'gpt-4o', request: { body: { model: 'gpt-4o', messages } } });
  const call = { id: 'call_weather', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } };
  hooks.emit('post_api_request', { ...ids, ...first, response: { model: 'gpt-4o', choices: [{ message: { role: 'assistant', content: null, tool_calls: [call] } }] }, usage: { prompt_tokens: 10, completion_tokens: 5 } });
  hooks.emit('pre_tool_call', { ...ids, tool_name: 'weather', tool_call_id: 'call_weather', args: { city: 'Paris' } });
  if (!llmOpen) return;
  hooks.emit('post_tool_call', { ...ids, tool_name: 'weather', tool_call_id: 'call_weather', result: 'sunny, 21 °C' });
  const second = ids.nextApiCall();
  hooks.emit('pre_api_request', { ...ids, ...second, provider: 'openai', model: 'gpt-4o', request: { body: { model: 'gpt-4o', messages } } });
}

/** Nothing lost, and the one call cut short counted as a span its session left open. */
function expectOneCut(counters: Record<string, number>): void {
  expect([counters.errors, counters.unmatchedEnds, counters.abandonedSpans]).toEqual([0, 0, 1]);
}

async function finished(recorded: Recorded): Promise<AtifDoc> {
  const { atif, counters } = await recorded.finish();
  expectOneCut(counters);
  expect(atif).toHaveLength(1);
  expect(validateAtif(atif[0]!)).toEqual([]);
  return atif[0]!;
}

/** The checks every reader of one cut run makes: view of both files, compare of the two, convert of the ATOF file. */
async function readersSayIt(recorded: Recorded, doc: AtifDoc, cut: RegExp, reason: string): Promise<void> {
  for (const of of ['atof', 'atif'] as const) {
    const lines = await viewLines(recorded, of);
    expect(lines.filter((line) => /─ turn /.test(line)), of).toEqual([expect.stringContaining(`cut short: ${reason}`)]);
    expect(lines.filter((line) => cut.test(line)), of).toEqual([expect.stringContaining(`ERROR cut short: ${reason}`)]);
  }
  await expectRunFilesAgree(recorded.dir, doc.agent.version);
}

describe('a call its session\'s close cut short, in the plugin\'s trajectory and the CLI', () => {
  for (const backend of backends()) {
    it(`${backend}: shutdown() with a tool call running: the call's result and its turn's end say cut short: runtime_shutdown`, async () => {
      const recorded = recordedPlugin(`cut-tool-${backend}`, backend);
      turnCutMidway(recorded.hooks, 's1');
      const doc = await finished(recorded);
      const steps = doc.steps as AtifDoc[];
      expect(steps.map((step) => step.source)).toEqual(['user', 'agent']);
      const asked = steps[1]!;
      expect(asked.tool_calls.map((call: AtifDoc) => call.tool_call_id)).toEqual(['call_weather']);
      expect(asked.observation).toEqual({ results: [{ source_call_id: 'call_weather', content: 'cut short: runtime_shutdown (the tool call never ended: its session closed first)', extra: { cut_short: 'runtime_shutdown' } }] });
      expect(asked.extra.tool_invocations.map((run: AtifDoc) => run.status)).toEqual(['failed']);
      expect(asked.extra.turn_ends).toEqual([{ status: 'interrupted', reason: 'runtime_shutdown', timestamp: expect.any(String) }]);
      expect(doc.notes).toBe('The turn that ends at step 2 was cut short (runtime_shutdown): tool weather never ended.');
      // Native's steps and counts as they were: nothing added but what says the call was cut.
      expect(doc.final_metrics).toEqual({ total_prompt_tokens: 10, total_completion_tokens: 5, total_steps: 2 });
      await readersSayIt(recorded, doc, /tool weather/, 'runtime_shutdown');
      await sameOnNative(recorded);
    });

    it(`${backend}: shutdown() with an LLM call running: its step's turn end and the notes say it was cut short`, async () => {
      const recorded = recordedPlugin(`cut-llm-${backend}`, backend);
      turnCutMidway(recorded.hooks, 's2', true);
      const doc = await finished(recorded);
      const steps = doc.steps as AtifDoc[];
      const last = steps.at(-1)!;
      expect(last.extra.invocation.status).toBe('failed');
      expect(steps.filter((step) => step.extra?.turn_ends !== undefined)).toEqual([last]);
      expect(last.extra.turn_ends).toEqual([{ status: 'interrupted', reason: 'runtime_shutdown', timestamp: expect.any(String) }]);
      expect(doc.notes).toBe(`The turn that ends at step ${last.step_id} was cut short (runtime_shutdown): LLM call openai never ended.`);
      await readersSayIt(recorded, doc, /LLM gpt-4o .*ERROR/, 'runtime_shutdown');
      await sameOnNative(recorded);
    });

    it(`${backend}: the session cap evicting a session with a tool call running: cut short: evicted_max_sessions`, async () => {
      const dir = tempDir(`nrh-cut-evicted-${backend}-`);
      const hooks = new HookRegistry({ logger: silentLogger });
      const plugin = createNemoRelayPlugin({
        backend,
        logger: silentLogger,
        env: {},
        maxSessions: 1,
        settings: { atofEnabled: true, atofOutputDirectory: path.join(dir, 'atof'), atifEnabled: true, atifOutputDirectory: path.join(dir, 'atif'), atifFilenameTemplate: 'atif-{session_id}.json' },
      });
      plugin.register(hooks);
      turnCutMidway(hooks, 'first');
      // A second session over the cap of one evicts the first, its tool call still running.
      hooks.emit('on_session_start', { session_id: 'second', model: 'gpt-4o' });
      await plugin.shutdown({ timeoutMs: 60_000 });
      expectOneCut(plugin.status().counters as unknown as Record<string, number>);
      const doc = JSON.parse(readFileSync(path.join(dir, 'atif', 'atif-first.json'), 'utf8')) as AtifDoc;
      expect(validateAtif(doc)).toEqual([]);
      expect(doc.steps[1].observation.results).toEqual([expect.objectContaining({ source_call_id: 'call_weather', extra: { cut_short: 'evicted_max_sessions' } })]);
      expect(doc.steps[1].extra.turn_ends).toEqual([{ status: 'interrupted', reason: 'evicted_max_sessions', timestamp: expect.any(String) }]);
      expect(doc.notes).toBe('The turn that ends at step 2 was cut short (evicted_max_sessions): tool weather never ended.');
    });
  }

  for (const backend of backends()) {
    it(`${backend}: a sub-agent cut with its parent by shutdown(), its tool running: the sub-agent's trajectory says it, the parent's call that ran it too`, async () => {
      const recorded = recordedPlugin(`cut-subagent-${backend}`, backend);
      const hooks = recorded.hooks;
      turnCutMidway(hooks, 'P');
      // The parent's tool runs a sub-agent, whose own tool is running when the host shuts down.
      hooks.emit('subagent_start', { session_id: 'P', child_session_id: 'C', child_subagent_id: 'sub1', child_role: 'researcher', model: 'gpt-4o', parent_tool_call_id: 'call_weather' });
      const ids = new TurnIds({ sessionId: 'C' });
      hooks.emit('on_session_start', { session_id: 'C', model: 'gpt-4o' });
      hooks.emit('pre_llm_call', { ...ids, user_message: 'Find the forecast for Paris' });
      const api = ids.nextApiCall();
      hooks.emit('pre_api_request', { ...ids, ...api, provider: 'openai', model: 'gpt-4o', request: { body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'Find the forecast for Paris' }] } } });
      const call = { id: 'call_forecast', type: 'function', function: { name: 'forecast', arguments: '{"city":"Paris"}' } };
      hooks.emit('post_api_request', { ...ids, ...api, response: { model: 'gpt-4o', choices: [{ message: { role: 'assistant', content: null, tool_calls: [call] } }] } });
      hooks.emit('pre_tool_call', { ...ids, tool_name: 'forecast', tool_call_id: 'call_forecast', args: { city: 'Paris' } });
      const { atif, counters } = await recorded.finish();
      expect([counters.errors, counters.abandonedSpans]).toEqual([0, 2]);
      const parent = atif.find((doc) => doc.session_id !== undefined && (doc.subagent_trajectories ?? []).length > 0) ?? atif[0]!;
      expect(validateAtif(parent)).toEqual([]);
      const trajectories = [parent, ...(parent.subagent_trajectories ?? []), ...atif.filter((doc) => doc !== parent)];
      const results = trajectories.flatMap((doc: AtifDoc) => (doc.steps as AtifDoc[]).flatMap((step) => step.observation?.results ?? []));
      expect(results.filter((result: AtifDoc) => result.extra?.cut_short !== undefined).map((result: AtifDoc) => [result.source_call_id, result.extra.cut_short]).sort()).toEqual([
        ['call_forecast', 'runtime_shutdown'],
        ['call_weather', 'runtime_shutdown'],
      ]);
      const notes = trajectories.map((doc: AtifDoc) => doc.notes).filter(Boolean);
      expect(notes).toEqual(expect.arrayContaining([expect.stringContaining('tool forecast never ended'), expect.stringContaining('tool weather never ended')]));
    });
  }

  it('a tool call that ended, then the session closed: nothing said (no notes, no turn_ends, its own result)', async () => {
    const recorded = recordedPlugin('cut-none');
    turnCutMidway(recorded.hooks, 's3');
    recorded.hooks.emit('post_tool_call', { session_id: 's3', tool_name: 'weather', tool_call_id: 'call_weather', result: 'sunny' });
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.notes).toBeUndefined();
    expect(JSON.stringify(doc)).not.toMatch(/turn_ends|cut_short/);
    expect(doc.steps[1].observation.results.map((result: AtifDoc) => result.content)).toEqual(['sunny']);
  });
});

describe('view of an ATOF file a process left with calls open (it died before closing its sessions)', () => {
  it('says the call never ended, not just its name', async () => {
    const dir = tempDir('nrh-cut-crash-');
    const file = path.join(dir, 'crash.jsonl');
    const scope = (fields: Record<string, unknown>) => JSON.stringify({ atof_version: '0.1', kind: 'scope', attributes: [], data_schema: null, category_profile: null, metadata: {}, ...fields });
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      file,
      [
        scope({ uuid: 'a', parent_uuid: null, scope_category: 'start', category: 'agent', name: 'session', timestamp: '2026-01-01T00:00:00.000000+00:00', data: null, metadata: { session_id: 'crashed', nemo_relay_scope_role: 'session' } }),
        scope({ uuid: 'l', parent_uuid: 'a', scope_category: 'start', category: 'llm', name: 'openai', timestamp: '2026-01-01T00:00:00.100000+00:00', data: { messages: [{ role: 'user', content: 'hi' }] } }),
      ].join('\n') + '\n',
    );
    const result = await cliInProcess(['view', file]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n').filter((line) => line.includes('LLM openai'))).toEqual([expect.stringContaining('never ended')]);
  });
});

describe('an exit without shutdown() with a tool call running (process.exit(), an uncaught exception)', () => {
  const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const ENTRY = pathToFileURL(path.join(ROOT, 'dist', 'src', 'index.js')).href;
  for (const backend of backends()) {
    for (const [label, ending] of [
      ['process.exit(0)', 'process.exit(0);'],
      ['an uncaught exception', "setTimeout(() => { throw new Error('the server crashed'); }, 0);"],
    ] as const) {
      it(`${backend}, ${label}: the trajectory says the call never ended; view, compare and convert say the same`, async () => {
        const dir = tempDir(`nrh-cut-exit-${backend}-`);
        const result = runScript(`
import { createNemoRelayPlugin, HookRegistry } from ${JSON.stringify(ENTRY)};
const plugin = createNemoRelayPlugin({ backend: ${JSON.stringify(backend)}, env: {}, settings: { atofEnabled: true, atofOutputDirectory: ${JSON.stringify(path.join(dir, 'atof'))}, atifEnabled: true, atifOutputDirectory: ${JSON.stringify(path.join(dir, 'atif'))} } });
const hooks = new HookRegistry();
plugin.register(hooks);
await plugin.ready;
const ids = { session_id: 'x1', turn_id: 't1' };
hooks.emit('on_session_start', { session_id: 'x1', model: 'gpt-4o' });
hooks.emit('pre_llm_call', { ...ids, user_message: 'What is the weather in Paris?' });
hooks.emit('pre_api_request', { ...ids, api_request_id: 't1:api:1', provider: 'openai', request: { body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'What is the weather in Paris?' }] } } });
hooks.emit('post_api_request', { ...ids, api_request_id: 't1:api:1', response: { model: 'gpt-4o', choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_weather', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] } }] } });
hooks.emit('pre_tool_call', { ...ids, tool_name: 'weather', tool_call_id: 'call_weather', args: { city: 'Paris' } });
await new Promise((resolve) => setTimeout(resolve, 50));
${ending}
`);
        expect(result.status, result.stderr).toBe(label === 'process.exit(0)' ? 0 : 1);
        const files = filesOf(dir);
        const doc = JSON.parse(readFileSync(files.atif, 'utf8')) as AtifDoc;
        expect(validateAtif(doc)).toEqual([]);
        const asked = (doc.steps as AtifDoc[]).at(-1)!;
        expect(asked.observation.results).toEqual([{ source_call_id: 'call_weather', content: 'cut short: never_ended (the tool call has no end: the process ended before its session closed)', extra: { cut_short: 'never_ended' } }]);
        expect(asked.extra.turn_ends).toEqual([{ status: 'interrupted', reason: 'never_ended', timestamp: expect.any(String) }]);
        expect(doc.notes).toBe(`The turn that ends at step ${asked.step_id} was cut short (never_ended): tool weather never ended.`);
        const atofView = await cliInProcess(['view', files.atof]);
        expect(atofView.stdout.split('\n').filter((line) => line.includes('tool weather'))).toEqual([expect.stringContaining('never ended')]);
        const atifView = await cliInProcess(['view', files.atif]);
        expect(atifView.stdout.split('\n').filter((line) => line.includes('tool weather'))).toEqual([expect.stringContaining('ERROR cut short: never_ended')]);
        const converted = path.join(dir, 'converted');
        expect((await cliInProcess(['convert', files.atof, '--out', converted, '--agent-version', doc.agent.version])).code).toBe(0);
        expect(readFileSync(path.join(converted, readdirSync(converted)[0]!), 'utf8')).toBe(readFileSync(files.atif, 'utf8'));
        const report = await compared(files.atif, files.atof);
        expect(differencesOf(report)).toEqual([]);
      });
    }
  }
});
