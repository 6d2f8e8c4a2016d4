import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';
import { cli, cliInProcess, EXAMPLES, expectNoStack, fileErrors, outputFiles, runtime, tempDir } from './support.ts';
import { HookRegistry } from '../../src/hooks/index.ts';
import { createHookRecorder } from '../../src/hook-log/hook-recorder.ts';
import { parseTimestamp } from '../../src/shared/clock.ts';

const hookLine = (hook: string, payload: unknown) => JSON.stringify({ hook, payload });

function atifOf(dir: string, recording: string, sessionId: string): any {
  return JSON.parse(readFileSync(path.join(dir, 'atif', `${recording}-atif-${sessionId}.json`), 'utf8'));
}

if (!nativeAvailable) console.info(`[skip] replay --backend native: nemo-relay-node cannot load here (${nativeLoadError})`);

describe('nemo-relay-hooks replay', () => {
  it.each(['agent-session', 'plain-chat', 'tool-loop', 'anthropic-session'])(
    'turns examples/%s.hooks.jsonl into an ATOF file and one valid ATIF trajectory',
    async (name) => {
      const out = tempDir();
      // The first example through the executable, the others in this process.
      const run = name === 'agent-session' ? async (argv: string[]) => cli(argv) : cliInProcess;
      const result = await run(['replay', path.join(EXAMPLES, `${name}.hooks.jsonl`), '--out', out]);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^replayed \d+ lines of .* \(backend memory, \d+ hooks\)$/m);
      expect(result.stdout).toMatch(/^  sessions   1( \(\+1 subagent\))?$/m);
      const files = outputFiles(out);
      expect(files.filter((file) => file.endsWith('.jsonl'))).toEqual([path.join(out, 'atof', `${name}-atof.jsonl`)]);
      expect(files.filter((file) => file.endsWith('.json'))).toHaveLength(1);
      for (const file of files) expect(fileErrors(file), file).toEqual([]);
    },
  );

  it('summarises sessions, steps, LLM calls, tools, tokens, errors and files of the demo stream', async () => {
    const out = tempDir();
    const result = await cliInProcess(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  sessions   1 (+1 subagent)\n');
    expect(result.stdout).toMatch(/^  steps      \d+$/m);
    expect(result.stdout).toContain('  LLM calls  7 attempts, 1 failed\n');
    expect(result.stdout).toContain('  tool calls 5, 1 failed\n');
    expect(result.stdout).toContain('  tokens     prompt 6,654 · completion 290 · cached 4,352\n');
    expect(result.stdout).toContain('  errors     1 API, 1 tool, 0 malformed lines\n');
    expect(result.stdout).toMatch(/^  ATIF       1 file in /m);
    const atif = atifOf(out, 'agent-session', 'demo-session-7f3a');
    expect(atif.final_metrics.total_prompt_tokens + atif.subagent_trajectories[0].final_metrics.total_prompt_tokens).toBe(6654);
  });

  it('keeps the retry of a failed API call on the same api_request_id', async () => {
    const out = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', out])).code).toBe(0);
    const events = readFileSync(path.join(out, 'atof', 'agent-session-atof.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    const firstCall = events.filter((event) => event.category === 'llm' && event.metadata?.api_request_id === 'turn-1:api:1');
    expect(firstCall.map((event) => event.scope_category)).toEqual(['start', 'end', 'start', 'end']);
    expect(firstCall[1].metadata['error.type']).toBe('rate_limit_error');
    expect(firstCall[3].metadata['error.type']).toBeUndefined();
  });

  it('reports malformed lines with their line numbers, skips them and replays the rest', () => {
    const dir = tempDir();
    const input = path.join(dir, 'mixed.jsonl');
    writeFileSync(
      input,
      [
        hookLine('on_session_start', { session_id: 'm1', model: 'gpt-4o' }),
        '{"hook": "pre_llm_call", "payload": {',
        hookLine('pre_llm_cal', { session_id: 'm1' }),
        '',
        JSON.stringify({ hook: 'pre_tool_call', payload: [1, 2] }),
        '[1, 2, 3]',
        JSON.stringify({ payload: {} }),
        JSON.stringify({ hook: 'post_llm_call' }),
        hookLine('pre_llm_call', { session_id: 'm1', turn_id: 't1', user_message: 'hi' }),
        hookLine('on_session_finalize', { session_id: 'm1' }),
      ].join('\n') + '\n',
    );
    const out = path.join(dir, 'out');
    const result = cli(['replay', input, '--out', out]);
    expect(result.code).toBe(0);
    expectNoStack(result.stderr);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[0]).toMatch(new RegExp(`^nemo-relay-hooks: .*mixed\\.jsonl:2: not valid JSON \\(`));
    expect(lines[1]).toBe(`nemo-relay-hooks: ${input}:3: unknown hook "pre_llm_cal"`);
    expect(lines[2]).toBe(`nemo-relay-hooks: ${input}:5: "payload" of pre_tool_call must be a JSON object`);
    expect(lines[3]).toBe(`nemo-relay-hooks: ${input}:6: expected a JSON object {"hook": ..., "payload": {...}}, got an array`);
    expect(lines[4]).toBe(`nemo-relay-hooks: ${input}:7: missing "hook"`);
    expect(lines[5]).toBe(`nemo-relay-hooks: ${input}:8: missing "payload" for post_llm_call`);
    expect(result.stdout).toContain('6 malformed lines');
    expect(result.stdout).toContain('(backend memory, 3 hooks)');
    // m1 made no model call: its trajectory would have no step, which ATIF rejects, so none is written, and replay says so.
    expect(outputFiles(out).map((file) => path.basename(file))).toEqual(['mixed-atof.jsonl']);
    for (const file of outputFiles(out)) expect(fileErrors(file), file).toEqual([]);
    expect(result.stdout).toMatch(/warning +1 session recorded no step \(no model call\), and ATIF needs at least one: no trajectory written for it/);
  });

  it('--strict stops at the first malformed line, still writes valid files for what came before, and exits 1', () => {
    const dir = tempDir();
    const input = path.join(dir, 'strict.jsonl');
    writeFileSync(
      input,
      [
        hookLine('on_session_start', { session_id: 's1', model: 'gpt-4o' }),
        hookLine('pre_api_request', { session_id: 's1', api_request_id: 't:api:1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'hi' }] } } }),
        hookLine('no_such_hook', {}),
        hookLine('post_api_request', { session_id: 's1', api_request_id: 't:api:1', response: { choices: [{ message: { role: 'assistant', content: 'hello' } }] } }),
      ].join('\n'),
    );
    const out = path.join(dir, 'out');
    const result = cli(['replay', input, '--out', out, '--strict']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`nemo-relay-hooks: ${input}:3: unknown hook "no_such_hook"\n`);
    expect(result.stderr).toContain('--strict: stopped at line 3; files hold the 2 hooks before it');
    expect(result.stdout).toMatch(/^stopped after 3 lines/);
    expectNoStack(result.stderr);
    const files = outputFiles(out);
    expect(files).toHaveLength(2);
    for (const file of files) expect(fileErrors(file), file).toEqual([]);
    // The open LLM call was ended by the shutdown, so the partial trajectory still has it.
    expect(readFileSync(path.join(out, 'atof', 'strict-atof.jsonl'), 'utf8')).toContain('session_closed');
  });

  it('without --strict the same stream exits 0 and includes the line after the bad one', async () => {
    const dir = tempDir();
    const input = path.join(dir, 'lenient.jsonl');
    writeFileSync(input, [hookLine('on_session_start', { session_id: 's2' }), '{oops', hookLine('pre_llm_call', { session_id: 's2', user_message: 'after' })].join('\n'));
    const result = await cliInProcess(['replay', input, '--out', path.join(dir, 'out')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('(backend memory, 2 hooks)');
  });

  it('says one line and one attempt in the singular', async () => {
    const dir = tempDir();
    const one = path.join(dir, 'one.jsonl');
    writeFileSync(one, hookLine('on_session_start', { session_id: 's1' }));
    expect((await cliInProcess(['replay', one, '--out', path.join(dir, 'out1')])).stdout).toMatch(/^replayed 1 line of .* \(backend memory, 1 hook\)$/m);
    const call = path.join(dir, 'call.jsonl');
    const api = { session_id: 's1', api_request_id: 'a1' };
    writeFileSync(call, [hookLine('pre_api_request', { ...api, provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'Hi' }] } } }), hookLine('post_api_request', { ...api, response: { choices: [{ message: { role: 'assistant', content: 'Hello' } }] } })].join('\n'));
    expect((await cliInProcess(['replay', call, '--out', path.join(dir, 'out2')])).stdout).toMatch(/^  LLM calls  1 attempt, 0 failed$/m);
  });

  it('closes sessions left open at the end of the stream and writes their partial trajectories', async () => {
    const dir = tempDir();
    const input = path.join(dir, 'open.jsonl');
    writeFileSync(
      input,
      [
        hookLine('on_session_start', { session_id: 'never-ends', model: 'gpt-4o' }),
        hookLine('pre_llm_call', { session_id: 'never-ends', turn_id: 't1', user_message: 'still thinking' }),
        hookLine('pre_api_request', { session_id: 'never-ends', turn_id: 't1', api_request_id: 't1:api:1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'still thinking' }] } } }),
        hookLine('post_api_request', { session_id: 'never-ends', turn_id: 't1', api_request_id: 't1:api:1', response: { choices: [{ message: { role: 'assistant', content: 'partial answer' } }], usage: { prompt_tokens: 5, completion_tokens: 2 } } }),
      ].join('\n'),
    );
    const out = path.join(dir, 'out');
    expect((await cliInProcess(['replay', input, '--out', out])).code).toBe(0);
    const atif = atifOf(out, 'open', 'never-ends');
    expect(atif.steps.map((step: { source: string }) => step.source)).toEqual(['user', 'agent']);
    expect(atif.steps[1].message).toBe('partial answer');
    for (const file of outputFiles(out)) expect(fileErrors(file), file).toEqual([]);
  });

  it('writes the ATOF file afresh on a second replay into the same folder, and its trajectories beside the first ones', async () => {
    const out = tempDir();
    const input = path.join(EXAMPLES, 'plain-chat.hooks.jsonl');
    expect((await cliInProcess(['replay', input, '--out', out])).code).toBe(0);
    const first = readFileSync(path.join(out, 'atof', 'plain-chat-atof.jsonl'), 'utf8').split('\n').length;
    const trajectories = outputFiles(path.join(out, 'atif')).sort();
    expect(trajectories).toHaveLength(1);
    const firstTexts = trajectories.map((file) => readFileSync(file, 'utf8'));
    const again = await cliInProcess(['replay', input, '--out', out]);
    expect(again.code).toBe(0);
    // The summary counts this replay's file only, and its sessions and steps (the earlier file is seconds old at most).
    expect(again.stdout).toContain('ATIF       1 file in');
    expect(again.stdout).toContain('steps      4\n');
    expect(readFileSync(path.join(out, 'atof', 'plain-chat-atof.jsonl'), 'utf8').split('\n').length).toBe(first);
    // The earlier run's trajectories are kept as they were; the new ones are their `~2`.
    expect(trajectories.map((file) => readFileSync(file, 'utf8'))).toEqual(firstTexts);
    const seconds = trajectories.map((file) => file.replace(/\.json$/, '~2.json'));
    expect(outputFiles(path.join(out, 'atif')).sort()).toEqual([...trajectories, ...seconds].sort());
    for (const file of seconds) expect(fileErrors(file), file).toEqual([]);
  });

  it('ignores HERMES_NEMO_RELAY_* settings and NEMO_RELAY_HOOKS_BACKEND of the shell', () => {
    const out = tempDir();
    const elsewhere = tempDir();
    const result = cli(['replay', path.join(EXAMPLES, 'plain-chat.hooks.jsonl'), '--out', out], {
      env: { HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY: elsewhere, HERMES_NEMO_RELAY_ATOF_FILENAME: 'x.jsonl', NEMO_RELAY_HOOKS_BACKEND: 'off' },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('backend memory');
    expect(existsSync(path.join(out, 'atof', 'plain-chat-atof.jsonl'))).toBe(true);
    expect(outputFiles(elsewhere)).toEqual([]);
  });

  it('sets agent.name and agent.version from the flags', async () => {
    const out = tempDir();
    const result = await cliInProcess(['replay', path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), '--out', out, '--agent-name', 'My Agent', '--agent-version', '2.1.0']);
    expect(result.code).toBe(0);
    expect(atifOf(out, 'tool-loop', 'loop-session-4e19').agent).toMatchObject({ name: 'My Agent', version: '2.1.0' });
  });

  it('names its files after the recording and each agent after what its session reports, never after Hermes', async () => {
    const dir = tempDir();
    const out = path.join(dir, 'out');
    const session = (id: string, extra: Record<string, unknown>) =>
      [
        hookLine('on_session_start', { session_id: id, model: 'gpt-4o', ...extra }),
        hookLine('pre_api_request', { session_id: id, api_request_id: 'r1', model: 'gpt-4o' }),
        hookLine('post_api_request', { session_id: id, api_request_id: 'r1', model: 'gpt-4o', response: { content: 'ok' } }),
        hookLine('on_session_end', { session_id: id, completed: true }),
      ].join('\n');
    writeFileSync(path.join(dir, 'weather.hooks.jsonl'), `${session('w1', { agent_name: 'Weather agent', agent_version: '3.0.0' })}\n${session('w2', {})}\n`);
    writeFileSync(path.join(dir, 'billing.jsonl'), `${session('b1', {})}\n`);
    expect((await cliInProcess(['replay', path.join(dir, 'weather.hooks.jsonl'), '--out', out])).code).toBe(0);
    // A second recording into the same folder keeps the first one's files.
    expect((await cliInProcess(['replay', path.join(dir, 'billing.jsonl'), '--out', out])).code).toBe(0);
    expect(outputFiles(out).map((file) => path.relative(out, file))).toEqual([
      'atif/billing-atif-b1.json',
      'atif/weather-atif-w1.json',
      'atif/weather-atif-w2.json',
      'atof/billing-atof.jsonl',
      'atof/weather-atof.jsonl',
    ]);
    // What a session reports wins over the default ("agent": replay does not know who recorded the stream).
    expect(atifOf(out, 'weather', 'w1').agent).toMatchObject({ name: 'Weather agent', version: '3.0.0' });
    expect(atifOf(out, 'weather', 'w2').agent).toMatchObject({ name: 'agent', version: 'unknown' });
    const scopes = readFileSync(path.join(out, 'atof', 'weather-atof.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { kind: string; category: string; name: string; scope_category?: string });
    expect(scopes.filter((e) => e.category === 'agent' && e.scope_category === 'start').map((e) => e.name)).toEqual(['Weather agent-session-w1', 'agent-session-w2']);
    // The flags are the host's explicit word: they win over what the session reports.
    const flagged = path.join(dir, 'flagged');
    expect((await cliInProcess(['replay', path.join(dir, 'weather.hooks.jsonl'), '--out', flagged, '--agent-name', 'Ops', '--agent-version', '9'])).code).toBe(0);
    expect(atifOf(flagged, 'weather', 'w1').agent).toMatchObject({ name: 'Ops', version: '9' });
    for (const file of [...outputFiles(out), ...outputFiles(flagged)]) expect(fileErrors(file), file).toEqual([]);
  });

  it.skipIf(!nativeAvailable)('replays with the native backend on request, on every runtime where it loads', async () => {
    const out = tempDir();
    const result = await cliInProcess(['replay', path.join(EXAMPLES, 'anthropic-session.hooks.jsonl'), '--out', out, '--backend', 'native']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/backend native 0\.9\.\d/);
    for (const file of outputFiles(out)) expect(fileErrors(file), file).toEqual([]);
  });
});

describe("replay keeps the recording's times", () => {
  const T0 = Date.UTC(2025, 10, 29, 15, 0, 0) * 1000; // µs
  /** A recording made with a simulated clock: a 620 ms model call, a 2.35 s tool, and a session left open. */
  function recording(dir: string): string {
    const file = path.join(dir, 'timed.hooks.jsonl');
    const hooks = new HookRegistry();
    let now = T0;
    const recorder = createHookRecorder(hooks, file, { clock: () => now });
    const at = (offsetMs: number) => (now = T0 + offsetMs * 1000);
    at(0), hooks.emit('on_session_start', { session_id: 't1', model: 'gpt-4o' });
    at(10), hooks.emit('pre_llm_call', { session_id: 't1', turn_id: 'u1', user_message: 'What is the weather?' });
    at(40), hooks.emit('pre_api_request', { session_id: 't1', turn_id: 'u1', api_request_id: 'r1', model: 'gpt-4o', request: { body: { messages: [{ role: 'user', content: 'What is the weather?' }] } } });
    at(660), hooks.emit('post_api_request', { session_id: 't1', turn_id: 'u1', api_request_id: 'r1', model: 'gpt-4o', response: { assistant_message: { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'forecast', arguments: '{"city":"Oslo"}' } }] } }, usage: { prompt_tokens: 12, completion_tokens: 5 } });
    at(661), hooks.emit('pre_tool_call', { session_id: 't1', turn_id: 'u1', api_request_id: 'r1', tool_call_id: 'c1', tool_name: 'forecast', args: { city: 'Oslo' } });
    at(3011), hooks.emit('post_tool_call', { session_id: 't1', turn_id: 'u1', api_request_id: 'r1', tool_call_id: 'c1', tool_name: 'forecast', result: 'rain', status: 'ok' });
    at(3020), hooks.emit('pre_api_request', { session_id: 't1', turn_id: 'u1', api_request_id: 'r2', model: 'gpt-4o', request: { body: { messages: [] } } });
    at(3900), hooks.emit('post_api_request', { session_id: 't1', turn_id: 'u1', api_request_id: 'r2', model: 'gpt-4o', response: { assistant_message: { role: 'assistant', content: 'Rain in Oslo.' } }, usage: { prompt_tokens: 20, completion_tokens: 4 } });
    recorder.close(); // no post_llm_call, no on_session_end: the replay closes the session
    return file;
  }
  const eventsOf = (out: string) => readFileSync(path.join(out, 'atof', 'timed-atof.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  const us = (stamp: string) => parseTimestamp(stamp) - T0;

  it.each(['memory', ...(nativeAvailable ? ['native'] : [])])('stamps every event with its line\'s time (%s backend)', async (backend) => {
    const dir = tempDir();
    const out = path.join(dir, 'out');
    expect((await cliInProcess(['replay', recording(dir), '--out', out, '--backend', backend])).code).toBe(0);
    const events = eventsOf(out);
    const llm = events.filter((event) => event.category === 'llm').map((event) => [event.scope_category, us(event.timestamp)]);
    expect(llm).toEqual([['start', 40_000], ['end', 660_000], ['start', 3_020_000], ['end', 3_900_000]]);
    const tool = events.filter((event) => event.category === 'tool').map((event) => [event.scope_category, us(event.timestamp)]);
    expect(tool).toEqual([['start', 661_000], ['end', 3_011_000]]);
    const session = events.filter((event) => event.category === 'agent').map((event) => [event.scope_category, us(event.timestamp)]);
    // Left open by the recording: closed by the replay just after its last line, not at the replay's own time.
    expect(session[0]).toEqual(['start', 0]);
    expect(session.at(-1)![0]).toBe('end');
    expect(session.at(-1)![1]).toBeGreaterThan(3_900_000);
    expect(session.at(-1)![1]).toBeLessThan(3_900_010);
    const atif = atifOf(out, 'timed', 't1');
    // The question when the request carrying it went out, each answer when it came back.
    const steps = atif.steps.map((step: { source: string; timestamp: string }) => [step.source, us(step.timestamp)]);
    expect(steps[0]).toEqual(['user', 40_000]);
    expect(steps.filter(([source]: [string]) => source === 'agent')).toEqual([['agent', 660_000], ['agent', 3_900_000]]);
    for (const file of outputFiles(out)) expect(fileErrors(file), file).toEqual([]);
  });

  it.skipIf(!nativeAvailable)('writes the same times on both backends', async () => {
    const dir = tempDir();
    const file = recording(dir);
    for (const backend of ['memory', 'native']) expect((await cliInProcess(['replay', file, '--out', path.join(dir, backend), '--backend', backend])).code).toBe(0);
    const stamps = (backend: string) => eventsOf(path.join(dir, backend)).map((event) => `${event.kind} ${event.scope_category ?? ''} ${event.name} ${event.timestamp}`);
    expect(stamps('native')).toEqual(stamps('memory'));
  });

  it('follows the line before for a line without a time, never goes back, and refuses a time that is not RFC 3339', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'mixed.hooks.jsonl');
    const line = (timestamp: string | undefined, hook: string, payload: unknown) => JSON.stringify({ ...(timestamp !== undefined ? { timestamp } : {}), hook, payload });
    writeFileSync(file, [
      line('2025-11-29T15:00:00Z', 'on_session_start', { session_id: 'm1' }),
      line('2025-11-29T15:00:01.5+01:00', 'pre_llm_call', { session_id: 'm1', user_message: 'hi' }), // 14:00:01.5Z: earlier than the line before
      line(undefined, 'pre_api_request', { session_id: 'm1', api_request_id: 'a', model: 'm', request: { body: { messages: [] } } }),
      line('yesterday', 'post_api_request', { session_id: 'm1', api_request_id: 'a' }),
      line('0001-01-01T00:00:00Z', 'post_api_request', { session_id: 'm1', api_request_id: 'a' }),
      line('2025-11-29T15:00:02.25Z', 'post_api_request', { session_id: 'm1', api_request_id: 'a', model: 'm', response: { assistant_message: { role: 'assistant', content: 'hello' } } }),
      line('2025-11-29T15:00:03Z', 'on_session_end', { session_id: 'm1' }),
      line('2025-11-29T15:00:03.000001Z', 'on_session_finalize', { session_id: 'm1' }),
    ].join('\n'));
    const out = path.join(dir, 'out');
    const result = await cliInProcess(['replay', file, '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('mixed.hooks.jsonl:4: "timestamp" must be an RFC 3339 time such as "2026-01-31T09:30:00.123456Z", got "yesterday"');
    expect(result.stderr).toContain('mixed.hooks.jsonl:5: "timestamp" "0001-01-01T00:00:00Z" is out of range: times from 1685 to 2254 can be recorded to the microsecond');
    expect(result.stdout).toContain('2 malformed lines');
    const events = readFileSync(path.join(out, 'atof', 'mixed-atof.jsonl'), 'utf8').trim().split('\n').map((text) => JSON.parse(text));
    expect(events.map((event) => `${event.kind}:${event.category ?? event.name}:${event.scope_category ?? ''} ${event.timestamp}`)).toEqual([
      'scope:agent:start 2025-11-29T15:00:00+00:00',
      'mark:hermes.turn.start: 2025-11-29T15:00:00.000001+00:00',
      'scope:llm:start 2025-11-29T15:00:00.000002+00:00',
      'scope:llm:end 2025-11-29T15:00:02.250+00:00',
      'mark:hermes.session.end: 2025-11-29T15:00:03+00:00',
      'scope:agent:end 2025-11-29T15:00:03.000001+00:00',
    ]);
  });
});

describe('replay of bytes that are not UTF-8', () => {
  it('replays the line with U+FFFD in their place and says where, in the summary and in --json', async () => {
    const dir = tempDir();
    const source = readFileSync(path.join(EXAMPLES, 'tool-loop.hooks.jsonl'));
    const at = source.indexOf('read_file');
    const file = path.join(dir, 'latin1.hooks.jsonl');
    writeFileSync(file, Buffer.concat([source.subarray(0, at), Buffer.from([0x72, 0xe9]), source.subarray(at + 2)])); // "r\xe9ad_file": Latin-1, not UTF-8
    const line = source.subarray(0, at).toString('latin1').split('\n').length;
    const text = await cliInProcess(['replay', file, '--out', path.join(dir, 'text')]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`  warning    line ${line}: not valid UTF-8 at byte ${at + 1}; read with U+FFFD in place of the bytes that are not (validate reports the file invalid)\n`);
    expect(text.stdout).toContain('  errors     0 API, 0 tool, 0 malformed lines');
    const json = JSON.parse((await cliInProcess(['replay', file, '--out', path.join(dir, 'json'), '--json'])).stdout);
    expect(json.warnings).toContain(`line ${line}: not valid UTF-8 at byte ${at + 1}; read with U+FFFD in place of the bytes that are not (validate reports the file invalid)`);
    // The hook is replayed, not lost: its tool name carries the replacement character.
    const events = readFileSync(path.join(dir, 'text', 'atof', 'latin1-atof.jsonl'), 'utf8');
    expect(events).toContain('r\ufffdad_file');
  });
});
