import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, EXAMPLES, fileErrors, outputFiles, tempDir } from './support.ts';

const NATIVE = path.join(EXAMPLES, 'native');

describe('nemo-relay-hooks convert', () => {
  it('converts the native runtime\'s ATOF session into one valid ATIF file named after metadata.session_id', () => {
    const out = tempDir();
    const result = cli(['convert', path.join(NATIVE, 'claude-code-session.atof.jsonl'), '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('converted 22 events');
    expect(result.stdout).toContain('into 1 trajectory');
    expect(result.stdout).toContain('  sessions   1 (+1 embedded subagent)');
    expect(outputFiles(out)).toEqual([path.join(out, 'claude-code-atif-sess-abc.json')]);
    const atif = JSON.parse(readFileSync(path.join(out, 'claude-code-atif-sess-abc.json'), 'utf8'));
    expect(atif.session_id).toBe('sess-abc');
    expect(atif.agent.name).toBe('claude-code');
    expect(atif.subagent_trajectories).toHaveLength(1);
    expect(fileErrors(path.join(out, 'claude-code-atif-sess-abc.json'))).toEqual([]);
  });

  it.each(['exporter', 'plugin-host'])('converts the native plugin ATOF events in %s style into a valid file', async (style) => {
    const out = tempDir();
    const result = await cliInProcess(['convert', path.join(NATIVE, 'plugin-session.atof.jsonl'), '--out', out, '--style', style]);
    expect(result.code).toBe(0);
    const files = outputFiles(out);
    expect(files).toEqual([path.join(out, 'prog-session-atif-prog-sid.json')]);
    expect(fileErrors(files[0]!)).toEqual([]);
    const atif = JSON.parse(readFileSync(files[0]!, 'utf8'));
    if (style === 'plugin-host') {
      expect(atif.extra.nemo_relay).toEqual({ session_id: 'prog-sid', session_instance_id: '01a227d1-8ef4-7ab1-9526-86140fb23e57', user_id: 'u-1' });
    } else {
      expect(atif.session_id).toBe('prog-sid');
      expect(atif.extra).toBeUndefined();
    }
  });

  it.each([
    ['plugin-session', 'prog-session-atif-prog-sid.json', ['tu1']],
    ['claude-code-session', 'claude-code-atif-sess-abc.json', ['toolu_01', 'toolu_03', 'toolu_02']],
  ])('--profile nat writes a tool result no LLM response asked for on a system step without its call, which validate rejects, as docs/cli/convert.md says (%s); the default profile\'s file is valid', async (name, file, calls) => {
    const nat = tempDir();
    expect((await cliInProcess(['convert', path.join(NATIVE, `${name}.atof.jsonl`), '--out', nat, '--profile', 'nat', '-q'])).code).toBe(0);
    const errors = fileErrors(path.join(nat, file));
    expect(errors.map((error) => error.split(': ')[1])).toEqual(calls.map(() => 'atif.source_call_id'));
    const steps = JSON.parse(readFileSync(path.join(nat, file), 'utf8')).steps as Array<Record<string, any>>;
    const answered = steps.filter((step) => step.observation !== undefined);
    expect(answered.flatMap((step) => step.observation.results.map((result: Record<string, any>) => result.source_call_id))).toEqual(calls);
    expect(answered.map((step) => [step.source, step.tool_calls])).toEqual(answered.map(() => ['system', undefined]));
    const native = tempDir();
    expect((await cliInProcess(['convert', path.join(NATIVE, `${name}.atof.jsonl`), '--out', native, '-q'])).code).toBe(0);
    expect(fileErrors(path.join(native, file))).toEqual([]);
  });

  it('takes --quiet, as replay does and docs/cli/README.md says of both: no summary (and no progress line); the files are written', async () => {
    const out = tempDir();
    const result = await cliInProcess(['convert', path.join(NATIVE, 'claude-code-session.atof.jsonl'), '--out', out, '--quiet']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(outputFiles(out)).toEqual([path.join(out, 'claude-code-atif-sess-abc.json')]);
    expect(fileErrors(path.join(out, 'claude-code-atif-sess-abc.json'))).toEqual([]);
  });

  it('reproduces, byte for byte, the trajectory the plugin wrote during a replay', async () => {
    const dir = tempDir();
    const replayed = path.join(dir, 'replayed');
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', replayed, '--quiet'])).code).toBe(0);
    const converted = path.join(dir, 'converted');
    expect((await cliInProcess(['convert', path.join(replayed, 'atof', 'agent-session-atof.jsonl'), '--out', converted])).code).toBe(0);
    // The session scope says its agent ("agent": the stream reports none): the file is named after it.
    expect(readFileSync(path.join(converted, 'agent-atif-demo-session-7f3a.json'), 'utf8')).toBe(readFileSync(path.join(replayed, 'atif', 'agent-session-atif-demo-session-7f3a.json'), 'utf8'));
  });

  it('writes one file per session of a multi-session stream, and partial files for sessions without an end', async () => {
    const dir = tempDir();
    const replayed = path.join(dir, 'replayed');
    for (const name of ['plain-chat', 'tool-loop']) {
      expect((await cliInProcess(['replay', path.join(EXAMPLES, `${name}.hooks.jsonl`), '--out', path.join(replayed, name), '--quiet'])).code).toBe(0);
    }
    const chat = readFileSync(path.join(replayed, 'plain-chat', 'atof', 'plain-chat-atof.jsonl'), 'utf8').trim().split('\n');
    const loop = readFileSync(path.join(replayed, 'tool-loop', 'atof', 'tool-loop-atof.jsonl'), 'utf8').trim().split('\n');
    // Drop the tool loop's last event (its session end), as a crash would.
    const input = path.join(dir, 'two.jsonl');
    writeFileSync(input, [...chat, ...loop.slice(0, -1)].join('\n') + '\n');
    const out = path.join(dir, 'out');
    const result = await cliInProcess(['convert', input, '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('1 without an end event (partial)');
    const files = outputFiles(out);
    expect(files.map((file) => path.basename(file))).toEqual(['agent-atif-chat-session-2c88.json', 'agent-atif-loop-session-4e19.json']);
    for (const file of files) expect(fileErrors(file), file).toEqual([]);
  });

  it('keeps two sessions with the same session id apart instead of overwriting one', async () => {
    const dir = tempDir();
    const events = readFileSync(path.join(NATIVE, 'claude-code-session.atof.jsonl'), 'utf8').trim().split('\n');
    // The same session twice, the second copy with fresh uuids.
    const copy = events.map((line) => line.replace(/01a227d1-79/g, '01a227d1-89'));
    const input = path.join(dir, 'twice.jsonl');
    writeFileSync(input, [...events, ...copy].join('\n'));
    const out = path.join(dir, 'out');
    expect((await cliInProcess(['convert', input, '--out', out])).code).toBe(0);
    const names = outputFiles(out).map((file) => path.basename(file));
    // As the plugin names them: the second session reusing an id gets ~2.
    expect(names.sort()).toEqual(['claude-code-atif-sess-abc.json', 'claude-code-atif-sess-abc~2.json']);
    for (const file of outputFiles(out)) expect(fileErrors(file)).toEqual([]);
  });

  it('never replaces a file already in the folder: a second convert of the id writes beside it, under the same ~n rule, and lists it', async () => {
    const dir = tempDir();
    const input = path.join(NATIVE, 'claude-code-session.atof.jsonl');
    const out = path.join(dir, 'out');
    expect((await cliInProcess(['convert', input, '--out', out])).code).toBe(0);
    const first = path.join(out, 'claude-code-atif-sess-abc.json');
    // Another run's trajectory of the same id (an earlier convert, a plugin's file): it must survive.
    writeFileSync(first, '{"kept":true}');
    const again = await cliInProcess(['convert', input, '--out', out, '--json']);
    expect(again.code).toBe(0);
    expect(readFileSync(first, 'utf8')).toBe('{"kept":true}');
    const second = path.join(out, 'claude-code-atif-sess-abc~2.json');
    expect(fileErrors(second)).toEqual([]);
    expect(again.stdout).toContain(JSON.stringify(second).slice(1, -1));
    expect(outputFiles(out).map((file) => path.basename(file)).sort()).toEqual(['claude-code-atif-sess-abc.json', 'claude-code-atif-sess-abc~2.json']);
  });

  it('names a plugin session without a session id as the plugin does (hermes-session-default)', async () => {
    const dir = tempDir();
    const events = readFileSync(path.join(NATIVE, 'plugin-session.atof.jsonl'), 'utf8').trim().split('\n');
    const root = JSON.parse(events[0]!);
    delete root.metadata.session_id;
    const renamed = events.map((line) => line.replaceAll('"name":"prog-session"', '"name":"hermes-session-default"'));
    renamed[0] = JSON.stringify({ ...root, name: 'hermes-session-default' });
    const input = path.join(dir, 'default.jsonl');
    writeFileSync(input, renamed.join('\n'));
    const out = path.join(dir, 'out');
    expect((await cliInProcess(['convert', input, '--out', out])).code).toBe(0);
    expect(outputFiles(out).map((file) => path.basename(file))).toEqual(['hermes-atif-default.json']);
    expect(JSON.parse(readFileSync(outputFiles(out)[0]!, 'utf8')).session_id).toBe('default');
  });

  it('sorts input written out of timestamp order before converting, instead of leaving events out', async () => {
    const dir = tempDir();
    const events = readFileSync(path.join(NATIVE, 'claude-code-session.atof.jsonl'), 'utf8').trim().split('\n');
    const ordered = path.join(dir, 'ordered.jsonl');
    const reversed = path.join(dir, 'reversed.jsonl');
    writeFileSync(ordered, events.join('\n'));
    writeFileSync(reversed, [...events].reverse().join('\n'));
    const result = await cliInProcess(['convert', reversed, '--out', path.join(dir, 'b')]);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('outside any agent scope');
    expect((await cliInProcess(['convert', ordered, '--out', path.join(dir, 'a')])).code).toBe(0);
    const [a] = outputFiles(path.join(dir, 'a'));
    const [b] = outputFiles(path.join(dir, 'b'));
    expect(readFileSync(b!, 'utf8')).toBe(readFileSync(a!, 'utf8'));
    expect(JSON.parse(readFileSync(b!, 'utf8')).steps.length).toBeGreaterThan(0);
  });

  it('reports malformed lines with their line numbers and events outside any agent scope', async () => {
    const dir = tempDir();
    const events = readFileSync(path.join(NATIVE, 'plugin-session.atof.jsonl'), 'utf8').trim().split('\n');
    const stray = JSON.stringify({ atof_version: '0.1', kind: 'mark', uuid: '01a227d1-0000-7000-8000-000000000001', parent_uuid: null, timestamp: '2026-01-01T00:00:00Z', name: 'stray', data: null, data_schema: null, metadata: null, category: null, category_profile: null });
    const input = path.join(dir, 'bad.jsonl');
    writeFileSync(input, [events[0], '{broken', stray, ...events.slice(1), '42'].join('\n'));
    const result = await cliInProcess(['convert', input, '--out', path.join(dir, 'out')]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`nemo-relay-hooks: ${input}:2: not valid JSON`);
    expect(result.stderr).toContain(`nemo-relay-hooks: ${input}:17: not a JSON object`);
    expect(result.stderr).toContain('warning: 1 events outside any agent scope were left out');
    expect(result.stdout).toContain('  malformed  2 lines skipped');
  });

  it('skips events whose timestamp is not a time, so every file it writes validates', async () => {
    const dir = tempDir();
    const events = readFileSync(path.join(NATIVE, 'plugin-session.atof.jsonl'), 'utf8').trim().split('\n');
    const broken = events.map((line, i) => (i === 3 ? line.replace(/"timestamp":"[^"]*"/, '"timestamp":"yesterday"') : line));
    const input = path.join(dir, 'times.jsonl');
    writeFileSync(input, broken.join('\n'));
    const result = await cliInProcess(['convert', input, '--out', path.join(dir, 'out')]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`${input}:4: ATOF event with an invalid timestamp ("yesterday"`);
    expect(result.stdout).toContain('  malformed  1 line skipped');
    const files = outputFiles(path.join(dir, 'out'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(fileErrors(file), file).toEqual([]);
  });

  it('rejects a template without {session_id}', () => {
    const result = cli(['convert', path.join(NATIVE, 'plugin-session.atof.jsonl'), '--out', tempDir(), '--template', 'fixed.json']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--template must contain {session_id}');
  });

  it('refuses a template leading out of the output folder as a usage error (exit 2) before making the folder, where it was an internal error that left the folder empty', async () => {
    const dir = tempDir();
    const out = path.join(dir, 'out');
    for (const template of ['../x-{session_id}.json', '/abs/x-{session_id}.json', 'a/../../x-{session_id}.json', '{session_id}/../../y.json']) {
      const result = await cliInProcess(['convert', path.join(NATIVE, 'plugin-session.atof.jsonl'), '--out', out, '--template', template]);
      expect(result.code, template).toBe(2);
      expect(result.stderr).toBe(
        `nemo-relay-hooks: --template must name a file inside the --out folder: ATIF filename template ${JSON.stringify(template)} resolves outside the output folder ${out} (see "nemo-relay-hooks convert --help")\n`,
      );
      expect(existsSync(out)).toBe(false);
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('names the files of a session without a session id and of a reused id as the plugin did during the replay, byte for byte', async () => {
    const dir = tempDir();
    const hooks = path.join(dir, 'sessions.hooks.jsonl');
    const line = (hook: string, payload: Record<string, unknown>) => JSON.stringify({ hook, payload });
    const lines: string[] = [];
    for (const id of [undefined, 'x', 'x']) {
      const base = id === undefined ? {} : { session_id: id };
      lines.push(
        line('on_session_start', { ...base, model: 'm' }),
        line('pre_llm_call', { ...base, turn_id: 't', user_message: 'hi' }),
        line('pre_api_request', { ...base, turn_id: 't', api_request_id: 't:api:1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'hi' }] } } }),
        line('post_api_request', { ...base, turn_id: 't', api_request_id: 't:api:1', response: { choices: [{ message: { role: 'assistant', content: 'yo' } }] } }),
        line('post_llm_call', { ...base, turn_id: 't', assistant_response: 'yo' }),
        line('on_session_finalize', base),
      );
    }
    writeFileSync(hooks, `${lines.join('\n')}\n`);
    const replayed = path.join(dir, 'replayed');
    expect((await cliInProcess(['replay', hooks, '--out', replayed, '--quiet'])).code).toBe(0);
    const converted = path.join(dir, 'converted');
    // The replay's template, to compare file for file (the default names them after the agent: convert's other tests).
    expect((await cliInProcess(['convert', path.join(replayed, 'atof', 'sessions-atof.jsonl'), '--out', converted, '--template', 'sessions-atif-{session_id}.json'])).code).toBe(0);
    const names = outputFiles(converted).map((file) => path.basename(file)).sort();
    expect(names).toEqual(['sessions-atif-default.json', 'sessions-atif-x.json', 'sessions-atif-x~2.json']);
    expect(outputFiles(path.join(replayed, 'atif')).map((file) => path.basename(file)).sort()).toEqual(names);
    for (const name of names) {
      expect(readFileSync(path.join(converted, name), 'utf8'), name).toBe(readFileSync(path.join(replayed, 'atif', name), 'utf8'));
    }
  });

  it('names the model a session learned only from its answer, as the plugin did (a framework adapter\'s session names none at its start)', async () => {
    const dir = tempDir();
    const hooks = path.join(dir, 'framework.hooks.jsonl');
    const line = (hook: string, payload: Record<string, unknown>) => JSON.stringify({ hook, payload: { session_id: 'thread-1', ...payload } });
    const response = { model: 'gpt-4.1-2025-04-14', choices: [{ message: { role: 'assistant', content: 'yo' }, finish_reason: 'stop' }] };
    writeFileSync(hooks, [
      line('on_session_start', { platform: 'langchain' }),
      line('pre_llm_call', { turn_id: 't', user_message: 'hi' }),
      line('pre_api_request', { turn_id: 't', api_request_id: 't:api:1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'hi' }] } } }),
      line('post_api_request', { turn_id: 't', api_request_id: 't:api:1', response, response_model: response.model }),
      line('post_llm_call', { turn_id: 't', assistant_response: 'yo' }),
      line('on_session_finalize', {}),
    ].join('\n') + '\n');
    const replayed = path.join(dir, 'replayed');
    expect((await cliInProcess(['replay', hooks, '--out', replayed, '--quiet'])).code).toBe(0);
    const converted = path.join(dir, 'converted');
    expect((await cliInProcess(['convert', path.join(replayed, 'atof', 'framework-atof.jsonl'), '--out', converted, '--template', 'framework-atif-{session_id}.json'])).code).toBe(0);
    const ours = readFileSync(path.join(converted, 'framework-atif-thread-1.json'), 'utf8');
    expect(JSON.parse(ours).agent.model_name).toBe('gpt-4.1-2025-04-14');
    expect(ours).toBe(readFileSync(path.join(replayed, 'atif', 'framework-atif-thread-1.json'), 'utf8'));
  });
});

describe('convert of bytes that are not UTF-8', () => {
  it('converts the line with U+FFFD in their place and warns where, on stderr and in --json', async () => {
    const dir = tempDir();
    expect((await cliInProcess(['replay', path.join(EXAMPLES, 'tool-loop.hooks.jsonl'), '--out', path.join(dir, 'replayed')])).code).toBe(0);
    const source = readFileSync(path.join(dir, 'replayed', 'atof', 'tool-loop-atof.jsonl'));
    const at = source.indexOf('read_file');
    const file = path.join(dir, 'latin1.jsonl');
    writeFileSync(file, Buffer.concat([source.subarray(0, at), Buffer.from([0x72, 0xe9]), source.subarray(at + 2)]));
    const line = source.subarray(0, at).toString('latin1').split('\n').length;
    const warning = `line ${line}: not valid UTF-8 at byte ${at + 1}; read with U+FFFD in place of the bytes that are not (validate reports the file invalid)`;
    const text = await cliInProcess(['convert', file, '--out', path.join(dir, 'text')]);
    expect(text.code).toBe(0);
    expect(text.stderr).toContain(`nemo-relay-hooks: warning: ${warning}\n`);
    expect(text.stdout).toContain('  malformed  0 lines skipped');
    const json = JSON.parse((await cliInProcess(['convert', file, '--out', path.join(dir, 'json'), '--json'])).stdout);
    expect(json.warnings).toContain(warning);
    const written = outputFiles(path.join(dir, 'text'));
    expect(written).toHaveLength(1);
    expect(readFileSync(written[0]!, 'utf8')).toContain('r\ufffdad_file');
  });
});
