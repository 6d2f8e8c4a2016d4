import { lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliInProcess, EXAMPLES, tempDir } from './support.ts';

async function replayDemo(): Promise<string> {
  const out = tempDir();
  expect((await cliInProcess(['replay', path.join(EXAMPLES, 'agent-session.hooks.jsonl'), '--out', out, '--quiet'])).code).toBe(0);
  return out;
}

/** The tree depth of a line: its column of the branch mark. */
function depthOf(lines: string[], pattern: RegExp): number {
  const line = lines.find((candidate) => pattern.test(candidate));
  if (!line) throw new Error(`no line matches ${pattern}:\n${lines.join('\n')}`);
  return line.search(/[├└]─ /);
}

describe('nemo-relay-hooks view', () => {
  it.each(['atof', 'atif'])('draws the %s of the demo as session > turn > LLM call > tool call > subagent, with durations and tokens', async (kind) => {
    const out = await replayDemo();
    const file = kind === 'atof' ? path.join(out, 'atof', 'agent-session-atof.jsonl') : path.join(out, 'atif', 'agent-session-atif-demo-session-7f3a.json');
    const result = cli(['view', file]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    // Totals through the subagent; its own figures are the parent trajectory's final_metrics (5,972 / 4,096 / 223).
    expect(lines[0]).toMatch(/session demo-session-7f3a .*7 LLM calls, 5 tool calls {2}6,654 in \(4,352 cached\) \/ 290 out {2}2 errors {2}\(own: 5,972 in \(4,096 cached\) \/ 223 out, 4 tool calls, 1 error\)$/);
    const turn = depthOf(lines, /turn .*“The date parser test is flaky/);
    const llm = depthOf(lines, /LLM .*1,240 in \/ 58 out {2}→ read_file, search_code/);
    const tool = depthOf(lines, /tool read_file .*\{"path":"src\/date\.ts"\}/);
    const delegate = depthOf(lines, /tool delegate_task/);
    const subagent = depthOf(lines, /subagent demo-subagent-91b2 .*682 in \(256 cached\) \/ 67 out/);
    const childTool = depthOf(lines, /✗ tool read_file .*ERROR FileNotFoundError/);
    expect(turn).toBeLessThan(llm);
    expect(llm).toBeLessThan(tool);
    expect(delegate).toBe(tool);
    expect(subagent).toBeGreaterThan(delegate);
    expect(childTool).toBeGreaterThan(subagent);
    expect(result.stdout).toMatch(/✗ LLM .*ERROR rate_limit_error: Rate limit reached/);
    // Every call line carries its start offset and a duration.
    // A call between two equal millisecond stamps (ATIF keeps invocations to three decimals) says `<1ms`, not `0µs`.
    for (const line of lines.slice(1).filter((l) => /(LLM|tool) /.test(l))) expect(line).toMatch(/^ *\+\d+\.\d{3}s .* (\d+(\.\d+)?(µs|ms|s)|<1ms) /);
  });

  it('nests the approval under the tool call it approved (ATOF)', async () => {
    const out = await replayDemo();
    const lines = (await cliInProcess(['view', path.join(out, 'atof', 'agent-session-atof.jsonl')])).stdout.split('\n');
    expect(depthOf(lines, /approval requested {2}TZ=America/)).toBeGreaterThan(depthOf(lines, /tool terminal/));
    expect(lines.some((line) => line.includes('approval: once'))).toBe(true);
  });

  it('shows every session of a multi-file, multi-session input, and the native runtime\'s turn scopes', async () => {
    const result = await cliInProcess(['view', path.join(EXAMPLES, 'native', 'claude-code-session.atof.jsonl'), path.join(EXAMPLES, 'native', 'plugin-session.atof.jsonl')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('── ');
    expect(result.stdout).toMatch(/session sess-abc/);
    expect(result.stdout).toMatch(/session prog-sid/);
    expect(result.stdout).toMatch(/turn 1 .*\{"prompt":"list files"\}/);
    expect(result.stdout).toMatch(/✗ tool Write .*ERROR internal_error/);
  });

  it('writes no ANSI codes when stdout is not a terminal, and colours errors only when forced', () => {
    const file = path.join(EXAMPLES, 'native', 'claude-code-session.atof.jsonl');
    expect(cli(['view', file], { env: { NO_COLOR: undefined } }).stdout).not.toContain('\u001b[');
    const forced = cli(['view', file], { env: { NO_COLOR: undefined, FORCE_COLOR: '1' } }).stdout;
    expect(forced).toContain('\u001b[31m✗ tool Write');
    expect(cli(['view', file], { env: { NO_COLOR: '1', FORCE_COLOR: '1' } }).stdout).not.toContain('\u001b[');
  });

  it('replaces a link planted at the --html target instead of writing through it', async () => {
    const out = await replayDemo();
    const victim = path.join(out, 'victim.txt');
    writeFileSync(victim, 'keep me\n');
    const html = path.join(out, 'timeline.html');
    symlinkSync(victim, html);
    const result = await cliInProcess(['view', path.join(out, 'atif', 'agent-session-atif-demo-session-7f3a.json'), '--html', html]);
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n');
    expect(lstatSync(html).isSymbolicLink()).toBe(false);
    expect(readFileSync(html, 'utf8').startsWith('<!doctype html>')).toBe(true);
  });

  it('writes a self-contained HTML timeline with no network references', async () => {
    const out = await replayDemo();
    const html = path.join(out, 'timeline.html');
    const result = await cliInProcess(['view', path.join(out, 'atif', 'agent-session-atif-demo-session-7f3a.json'), path.join(out, 'atof', 'agent-session-atof.jsonl'), '--html', html]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`wrote ${html}\n`);
    const page = readFileSync(html, 'utf8');
    expect(page.startsWith('<!doctype html>')).toBe(true);
    expect(page).not.toMatch(/https?:\/\//);
    expect(page).not.toMatch(/<(script|link|img)[^>]+(src|href)=/);
    expect(page).toContain('<style>');
    expect(page).toContain('<script>');
    expect(page.match(/<section>/g)).toHaveLength(2);
    expect(page).toContain('ERROR rate_limit_error');
    expect(page).toContain('class="row k-tool failed');
    // Input text is escaped: the demo's tool arguments contain quotes.
    expect(page).toContain('{&quot;path&quot;:&quot;src/date.ts&quot;}');
    const ids = [...page.matchAll(/data-id="(\d+)"/g)].map((match) => match[1]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('refuses a recorded hook stream and points to replay', async () => {
    const file = path.join(EXAMPLES, 'plain-chat.hooks.jsonl');
    const result = await cliInProcess(['view', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`nemo-relay-hooks: ${file} is a recorded hook stream; run "nemo-relay-hooks replay ${file} --out <dir>" first\n`);
  });

  it('times a trajectory that has only step timestamps, and reads content parts as text', async () => {
    const file = path.join(tempDir(), 'harbor-style.json');
    writeFileSync(
      file,
      JSON.stringify({
        schema_version: 'ATIF-v1.6',
        session_id: 'timed',
        agent: { name: 'other-writer', version: '1' },
        steps: [
          { step_id: 1, source: 'user', timestamp: '2025-10-11T10:30:00Z', message: [{ type: 'text', text: 'look at' }, { type: 'image', source: { media_type: 'image/png', path: 'shot.png' } }] },
          { step_id: 2, source: 'agent', timestamp: '2025-10-11T10:30:02Z', message: [{ type: 'text', text: 'a cat' }] },
          { step_id: 3, source: 'agent', timestamp: '2025-10-11T10:30:05Z', message: 'done' },
        ],
      }),
    );
    const result = await cliInProcess(['view', file]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/session timed .* 5\.00s/);
    expect(result.stdout).toContain('“look at [image shot.png]”');
    // Each agent step runs from the step before it to its own timestamp.
    expect(lines.find((line) => line.includes('a cat'))).toMatch(/\+0\.000s .*LLM .*2\.00s .*a cat$/);
    expect(lines.find((line) => line.includes('done'))).toMatch(/\+2\.000s .*LLM .*3\.00s .*done$/);
    expect(result.stdout).not.toContain('"type":"text"');
  });

  it("reads a recorded request's media parts (the builder writes them as JSON text) as tags: where each is, or its name", async () => {
    const parts = [
      { type: 'input_text', text: 'what?' },
      { type: 'input_image', image: 'data:image/png;base64,[left out: 136536 characters of base64]' },
      { type: 'image_url', image_url: { url: 'https://images.example/cat.png' } },
      { type: 'file', data: '[left out: 20489 bytes]', mediaType: 'application/pdf', filename: 'receipt.pdf' },
    ];
    const file = path.join(tempDir(), 'media.json');
    writeFileSync(
      file,
      JSON.stringify({
        schema_version: 'ATIF-v1.6',
        session_id: 'media',
        agent: { name: 'writer', version: '1' },
        steps: [
          { step_id: 1, source: 'user', message: JSON.stringify(parts) },
          { step_id: 2, source: 'agent', message: 'a cat' },
          { step_id: 3, source: 'user', message: '[{"not": "parts"}]' },
        ],
      }),
    );
    const result = await cliInProcess(['view', file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('“what? [image] [image https://images.example/cat.png] [file receipt.pdf]”');
    // A message that only looks like JSON stays as it was written.
    expect(result.stdout).toContain('“[{"not": "parts"}]”');
  });

  it('shows no duration for an instant (a step with no span and no step before it, a mark), in the terminal and the HTML page', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'instants.json');
    writeFileSync(
      file,
      JSON.stringify({
        schema_version: 'ATIF-v1.6',
        session_id: 'instants',
        agent: { name: 'other-writer', version: '1' },
        steps: [
          { step_id: 1, source: 'agent', timestamp: '2025-10-11T10:30:00.123456Z', message: 'first' },
          { step_id: 2, source: 'system', timestamp: '2025-10-11T10:30:00.123456Z', message: 'a note' },
        ],
      }),
    );
    const html = path.join(dir, 'instants.html');
    const result = await cliInProcess(['view', file, '--html', html]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    // One stamp is a moment, not a call that lasted 0µs; a session of moments has no duration either.
    expect(lines[0]).toMatch(/session instants {2}\(other-writer\) {2}1 LLM call, 0 tool calls$/);
    expect(lines.find((line) => line.includes('first'))).toMatch(/\+0\.000s .*LLM {2}first$/);
    expect(lines.find((line) => line.includes('a note'))).toMatch(/system {2}a note$/);
    const page = readFileSync(html, 'utf8');
    expect(page).not.toMatch(/class="dur">[^<]*µs/);
    expect(page).not.toContain('duration ');
  });

  it('shows the approvals a plugin-host ATIF file observed, under the tool call they were asked for', async () => {
    const out = await replayDemo();
    const converted = tempDir();
    expect((await cliInProcess(['convert', path.join(out, 'atof', 'agent-session-atof.jsonl'), '--out', converted, '--style', 'plugin-host'])).code).toBe(0);
    const [file] = readdirSync(converted).filter((name) => name.includes('demo-session'));
    const lines = (await cliInProcess(['view', path.join(converted, file as string)])).stdout.split('\n');
    expect(depthOf(lines, /approval requested {2}TZ=America/)).toBeGreaterThan(depthOf(lines, /tool terminal/));
    expect(lines.some((line) => line.includes('approval: once'))).toBe(true);
  });

  it('refuses JSON that is not an ATIF trajectory with one line and exit code 1', async () => {
    const file = path.join(tempDir(), 'other.json');
    writeFileSync(file, JSON.stringify({ agent: 'not a trajectory', spans: [] }));
    const result = await cliInProcess(['view', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toEqual([`nemo-relay-hooks: ${file} is JSON but not an ATIF trajectory (no "steps" list)`]);
  });

  it('refuses an ATOF file of a major version it does not know', async () => {
    const file = path.join(tempDir(), 'future.jsonl');
    const line = readFileSync(path.join(EXAMPLES, 'native', 'plugin-session.atof.jsonl'), 'utf8').split('\n')[0]!.replace('"atof_version":"0.1"', '"atof_version":"1.0"');
    writeFileSync(file, `${line}\n`);
    const result = await cliInProcess(['view', file]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(`nemo-relay-hooks: ${file}: ATOF major version 1; this reader knows ATOF 0.x only`);
  });
});

describe('view of another producer\'s trajectory whose results name no call', () => {
  it('pairs them with the calls by index, where every call read "not run" though its output was there', async () => {
    // A user trial viewed Harbor's Terminus-2 golden trajectories: each step's one bash_command call and the terminal
    // output in its observation, without the optional source_call_id: every call was shown "not run".
    const step = (id: number, keys: string, output: string) => ({
      step_id: id,
      source: 'agent',
      model_name: 'openai/gpt-4o',
      message: `Run ${keys.trim()}`,
      tool_calls: [{ tool_call_id: `call_${id}_1`, function_name: 'bash_command', arguments: { keystrokes: keys } }],
      observation: { results: [{ content: output }] },
      metrics: { prompt_tokens: 100, completion_tokens: 10 },
    });
    const trajectory = {
      schema_version: 'ATIF-v1.5',
      session_id: 'terminus-run',
      agent: { name: 'terminus-2', version: '2.0.0', model_name: 'openai/gpt-4o' },
      steps: [{ step_id: 1, source: 'user', message: 'Create hello.txt' }, step(2, 'echo hi > hello.txt\n', 'root@box:/app# echo hi > hello.txt\n'), step(3, 'cat hello.txt\n', 'root@box:/app# cat hello.txt\nhi\n')],
    };
    const file = path.join(tempDir(), 'terminus.trajectory.json');
    writeFileSync(file, JSON.stringify(trajectory));
    const text = await cliInProcess(['view', file]);
    expect(text.code, text.stderr).toBe(0);
    const tools = text.stdout.split('\n').filter((line) => line.includes('tool bash_command'));
    expect(tools).toHaveLength(2);
    for (const line of tools) expect(line).not.toContain('not run');
    // The HTML details pane shows what the node's result is: the terminal output.
    const html = path.join(tempDir(), 'terminus.html');
    expect((await cliInProcess(['view', file, '--html', html])).code).toBe(0);
    expect(readFileSync(html, 'utf8')).toContain('cat hello.txt\\nhi');
    // compare reads the same pairing: a changed output is a changed result.
    const changed = structuredClone(trajectory);
    (changed.steps[2] as { observation: { results: Array<Record<string, unknown>> } }).observation.results[0]!.content = 'root@box:/app# cat hello.txt\nbye\n';
    const changedFile = path.join(tempDir(), 'terminus-changed.trajectory.json');
    writeFileSync(changedFile, JSON.stringify(changed));
    const compared = await cliInProcess(['compare', file, changedFile, '--json']);
    expect(compared.code, compared.stderr).toBe(1);
    const pairs = (JSON.parse(compared.stdout) as { pairs: { differences: { field: string }[] }[] }).pairs;
    expect(pairs.flatMap((pair) => pair.differences.map((difference) => difference.field))).toEqual(['tool.result']);
    // A result naming another call does not pair by index.
    const named = structuredClone(trajectory);
    (named.steps[2] as { observation: { results: Array<Record<string, unknown>> } }).observation.results[0]!.source_call_id = 'call_elsewhere';
    writeFileSync(file, JSON.stringify(named));
    const other = (await cliInProcess(['view', file])).stdout.split('\n').filter((line) => line.includes('tool bash_command'));
    expect(other.map((line) => line.includes('not run'))).toEqual([false, true]);
  });
});
