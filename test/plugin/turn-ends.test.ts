// A host's turn that ends failed or interrupted after its model call answered (docs/hosts/emitting-hooks.md's
// hooks, with `on_session_end` saying how the turn ended): the plugin's own trajectory says so on the turn's last
// step and in `notes`, `view` and `compare` of it show it, `convert` of the ATOF file writes the same, memory and
// native write the same, completed turns get nothing, and the plugins.toml trajectory (native's) is left as native
// writes it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TurnIds } from '../../src/hooks/ids.ts';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { expectNothingLost, expectTurnEndInAtif, finishedRun, recordedPlugin, viewLines, type AtifDoc, type TurnEnding } from '../adapters/support.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import { compared, differencesOf, expectRunFilesAgree } from '../cli/compare-json.ts';
import { filesOf } from '../cli/view-json.ts';
import { tempDir } from '../cli/support.ts';
import { writeObservabilityToml } from '../support/plugins-toml.ts';

const FAILURE = { name: 'AnswerFormatError', message: 'the answer is not the JSON the task asked for' };

/** One turn as a host emits it: the user's message, one model call (asking with `messages`) that answered, then the turn's end. */
function turn(hooks: HookRegistry, sessionId: string, message: string, answer: string | undefined, end: Record<string, unknown>, messages: unknown[] = [{ role: 'user', content: message }]): void {
  const ids = new TurnIds({ sessionId });
  hooks.emit('pre_llm_call', { ...ids, user_message: message });
  if (answer !== undefined) {
    const api = ids.nextApiCall();
    hooks.emit('pre_api_request', { ...ids, ...api, provider: 'openai', model: 'gpt-4o', request: { body: { model: 'gpt-4o', messages } } });
    hooks.emit('post_api_request', { ...ids, ...api, response: { model: 'gpt-4o-2024-08-06', choices: [{ message: { role: 'assistant', content: answer } }] }, usage: { prompt_tokens: 12, completion_tokens: 7 } });
  }
  if (end.completed === true) hooks.emit('post_llm_call', { ...ids, assistant_response: answer });
  hooks.emit('on_session_end', { ...ids, ...end });
}

const endOf = (ending: TurnEnding): Record<string, unknown> =>
  ending.status === 'failed'
    ? { completed: false, failed: true, error_type: ending.error.name, error_message: ending.error.message }
    : { completed: false, interrupted: true };

describe('a host turn that did not complete after its model call answered, in the plugin\'s trajectory', () => {
  for (const ending of [{ status: 'failed', error: FAILURE }, { status: 'interrupted' }] as TurnEnding[]) {
    it(`on_session_end ${ending.status}: the turn's last step and notes say it; view and compare of the ATIF show it`, async () => {
      const recorded = recordedPlugin(`host-turn-${ending.status}`);
      recorded.hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o', platform: 'cli' });
      turn(recorded.hooks, 's1', 'Summarise the report as JSON', 'Here is a summary: the report is fine.', endOf(ending));
      recorded.hooks.emit('on_session_finalize', { session_id: 's1' });
      const { doc, agent } = await finishedRun(recorded);
      // Native's steps as they were: the user's message and the answered call, its tokens.
      expect((doc.steps as AtifDoc[]).map((step) => step.source)).toEqual(['user', 'agent']);
      expect(agent.map((step) => [step.message, step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([['Here is a summary: the report is fine.', 12, 7]]);
      expect(doc.final_metrics).toEqual({ total_prompt_tokens: 12, total_completion_tokens: 7, total_steps: 2 });
      await expectTurnEndInAtif(recorded, doc, ending);
      const label = ending.status === 'failed' ? `failed: ${FAILURE.name}` : 'interrupted';
      expect((await viewLines(recorded, 'atof')).filter((line) => /─ turn /.test(line))).toEqual([expect.stringContaining(label)]);
      // One run's two files agree: the trajectory's end is the ATOF file's, and convert writes it with the turn's end.
      await expectRunFilesAgree(recorded.dir, doc.agent.version);
      await sameOnNative(recorded);
    });
  }

  it('a session of three turns: completed, failed after its answer, failed before any model call; only the failed ones are said, each where it ended', async () => {
    const recorded = recordedPlugin('host-turns-three');
    recorded.hooks.emit('on_session_start', { session_id: 's3', model: 'gpt-4o', platform: 'cli' });
    turn(recorded.hooks, 's3', 'Hello', 'Hi, how can I help?', { completed: true });
    turn(recorded.hooks, 's3', 'Summarise the report as JSON', 'Here is a summary.', endOf({ status: 'failed', error: FAILURE }));
    turn(recorded.hooks, 's3', 'Try again', undefined, { completed: false, failed: true, error_type: 'ConfigError', error_message: 'no model configured' });
    recorded.hooks.emit('on_session_finalize', { session_id: 's3' });
    const { doc } = await finishedRun(recorded);
    const steps = doc.steps as AtifDoc[];
    expect(steps.map((step) => [step.step_id, step.source, step.extra?.turn_ends?.map((end: AtifDoc) => end.status).join() ?? null])).toEqual([
      [1, 'user', null],
      [2, 'agent', null],
      [3, 'user', null],
      [4, 'agent', 'failed'],
    ]);
    expect(steps[3]!.extra.turn_ends).toMatchObject([{ error_type: FAILURE.name, error_message: FAILURE.message }]);
    const [second, third] = doc.notes.split('\n');
    expect(second).toBe(`The turn that ends at step 4 failed: ${FAILURE.name}: ${FAILURE.message}`);
    expect(third).toBe('A turn without a step (after step 4) failed: ConfigError: no model configured');
    const turns = (await viewLines(recorded, 'atif')).filter((line) => /─ turn /.test(line));
    expect(turns).toEqual([expect.not.stringContaining('failed'), expect.stringContaining(`failed: ${FAILURE.name}`)]);
    await sameOnNative(recorded);
  });

  it('a turn paused twice, the second resumed run making no step of its own (its calls ran elsewhere), then finished: both pauses on the step they followed; view shows no pause, compare matches the ATOF file', async () => {
    const recorded = recordedPlugin('host-turn-resumed');
    recorded.hooks.emit('on_session_start', { session_id: 's4', model: 'gpt-4o' });
    turn(recorded.hooks, 's4', 'Refund INV-7, please.', 'I will ask for approval.', endOf({ status: 'interrupted' }));
    // Resumed runs carry no user message of their own (as the adapters send them): they go on with the turn.
    turn(recorded.hooks, 's4', '', undefined, endOf({ status: 'interrupted' }));
    const conversation = [
      { role: 'user', content: 'Refund INV-7, please.' },
      { role: 'assistant', content: 'I will ask for approval.' },
    ];
    turn(recorded.hooks, 's4', '', 'Refunded.', { completed: true }, conversation);
    recorded.hooks.emit('on_session_finalize', { session_id: 's4' });
    const { doc } = await finishedRun(recorded);
    const steps = doc.steps as AtifDoc[];
    expect(steps.map((step) => [step.step_id, step.source, step.extra?.turn_ends?.map((end: AtifDoc) => end.status).join() ?? null])).toEqual([
      [1, 'user', null],
      [2, 'agent', 'interrupted,interrupted'],
      [3, 'agent', null],
    ]);
    // Both were pauses the turn went on from, not its end.
    expect(doc.notes).toBe('The turn was paused at step 2 and resumed.\nThe turn was paused at step 2 and resumed.');
    expect((await viewLines(recorded, 'atif')).filter((line) => /─ turn /.test(line))).toEqual([expect.not.stringContaining('interrupted')]);
    const files = filesOf(recorded.dir);
    const report = await compared(files.atif, files.atof);
    expect(differencesOf(report)).toEqual([]);
    // What the trajectory does not hold: that the turn went on and completed.
    expect(report.onlyRecorded).toEqual([{ fact: 'turn', run: 'b', values: ['“Refund INV-7, please.”: interrupted, resumed, interrupted, resumed, completed'] }]);
    await sameOnNative(recorded);
  });

  it('a pause the turn resumed from is said as a pause; a pause no run resumed (the next run a new turn) as the turn\'s end', async () => {
    const recorded = recordedPlugin('host-turn-paused-then-left');
    recorded.hooks.emit('on_session_start', { session_id: 's5', model: 'gpt-4o' });
    turn(recorded.hooks, 's5', 'Refund INV-7, please.', 'I will ask for approval.', endOf({ status: 'interrupted' }));
    const conversation = [
      { role: 'user', content: 'Refund INV-7, please.' },
      { role: 'assistant', content: 'I will ask for approval.' },
    ];
    // Resumed, it asks for a second approval, which the user never gives: they ask something else.
    turn(recorded.hooks, 's5', '', 'I need a second approval.', endOf({ status: 'interrupted' }), conversation);
    turn(recorded.hooks, 's5', 'Never mind. What is INV-8?', 'An invoice for 40 EUR.', { completed: true });
    recorded.hooks.emit('on_session_finalize', { session_id: 's5' });
    const { doc } = await finishedRun(recorded);
    const steps = doc.steps as AtifDoc[];
    expect(steps.map((step) => [step.step_id, step.source, step.extra?.turn_ends?.map((end: AtifDoc) => end.status).join() ?? null])).toEqual([
      [1, 'user', null],
      [2, 'agent', 'interrupted'],
      [3, 'agent', 'interrupted'],
      [4, 'user', null],
      [5, 'agent', null],
    ]);
    expect(doc.notes).toBe('The turn was paused at step 2 and resumed.\nThe turn that ends at step 3 was interrupted.');
    await sameOnNative(recorded);
  });

  it('a completed turn: nothing added (no notes, no turn_ends)', async () => {
    const recorded = recordedPlugin('host-turn-completed');
    recorded.hooks.emit('on_session_start', { session_id: 's2', model: 'gpt-4o' });
    turn(recorded.hooks, 's2', 'Hello', 'Hi.', { completed: true });
    recorded.hooks.emit('on_session_finalize', { session_id: 's2' });
    const { doc } = await finishedRun(recorded);
    expect(doc.notes).toBeUndefined();
    expect(JSON.stringify(doc)).not.toContain('turn_ends');
  });

  it('compare of two trajectories: the run whose turn failed says it, against one whose turn completed', async () => {
    const runs = await Promise.all(
      (['failed', 'completed'] as const).map(async (how) => {
        const recorded = recordedPlugin(`host-turn-compare-${how}`);
        recorded.hooks.emit('on_session_start', { session_id: 'c1', model: 'gpt-4o' });
        turn(recorded.hooks, 'c1', 'Summarise the report as JSON', 'Here is a summary.', how === 'failed' ? endOf({ status: 'failed', error: FAILURE }) : { completed: true });
        recorded.hooks.emit('on_session_finalize', { session_id: 'c1' });
        const { counters } = await recorded.finish();
        expectNothingLost(counters);
        return filesOf(recorded.dir).atif;
      }),
    );
    const report = await compared(runs[0]!, runs[1]!);
    expect(differencesOf(report)).toEqual([]);
    expect(report.onlyRecorded).toEqual([{ fact: 'turn', run: 'a', values: ['“Summarise the report as JSON”: failed'] }]);
  });
});

describe('the plugins.toml trajectory (native\'s) of a failed turn', () => {
  it('is left as native writes it: no notes, no turn_ends', async () => {
    const dir = tempDir('nrh-turn-ends-toml-');
    const toml = writeObservabilityToml(dir, { atofDir: path.join(dir, 'events'), atifDir: path.join(dir, 'trajectories') });
    const hooks = new HookRegistry({ logger: silentLogger });
    const plugin = createNemoRelayPlugin({ backend: 'memory', env: { HERMES_NEMO_RELAY_PLUGINS_TOML: toml }, logger: silentLogger });
    plugin.register(hooks);
    hooks.emit('on_session_start', { session_id: 't1', model: 'gpt-4o' });
    turn(hooks, 't1', 'Summarise the report as JSON', 'Here is a summary.', endOf({ status: 'failed', error: FAILURE }));
    hooks.emit('on_session_finalize', { session_id: 't1' });
    await plugin.shutdown();
    const files = readdirSync(path.join(dir, 'trajectories'));
    expect(files).toHaveLength(1);
    const doc = JSON.parse(readFileSync(path.join(dir, 'trajectories', files[0]!), 'utf8')) as AtifDoc;
    // The failed end is among the events the file observed, as native keeps them; the trajectory proper says nothing of it.
    expect((doc.extra.observed_events as AtifDoc[]).some((event) => event.name === 'hermes.session.end' && event.data.failed === true)).toBe(true);
    expect(doc.notes).toBeUndefined();
    expect((doc.steps as AtifDoc[]).some((step) => step.extra?.turn_ends !== undefined)).toBe(false);
  });
});
