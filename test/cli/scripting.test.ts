// The CLI as a script uses it: --json documents on stdout, "-" for standard
// input, one-line errors for hostile input, and no terminal control
// sequences from session content.
import { copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Progress } from '../../src/cli/progress.ts';
import { PLAIN, type CliIo } from '../../src/cli/io.ts';
import { safeForTerminal } from '../../src/cli/terminal-text.ts';
import { cli, cliInProcess, EXAMPLES, expectNoStack, tempDir } from './support.ts';

// What a command prints runs in this process (cliInProcess); standard input
// and the progress line off a terminal are the executable's, in a child (cli).

const HOOKS = path.join(EXAMPLES, 'agent-session.hooks.jsonl');

async function replayed(): Promise<string> {
  const out = tempDir();
  expect((await cliInProcess(['replay', HOOKS, '--out', out, '--quiet'])).code).toBe(0);
  return out;
}

describe('--json', () => {
  it('replay prints the backend, counters and every file written with its size', async () => {
    const out = tempDir();
    const result = await cliInProcess(['replay', HOOKS, '--out', out, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { command: string; ok: boolean; backend: { kind: string }; counters: Record<string, number>; files: { format: string; path: string; bytes: number }[]; warnings: string[] };
    expect(report).toMatchObject({ command: 'replay', ok: true, backend: { kind: 'memory' }, warnings: [] });
    expect(report.counters).toMatchObject({ hooks: 37, sessions: 1, subagents: 1, llmAttempts: 7, llmErrors: 1, toolCalls: 5, toolFailures: 1, malformedLines: 0 });
    expect(report.files.map((file) => [file.format, path.basename(file.path)])).toEqual([
      ['atof', 'agent-session-atof.jsonl'],
      ['atif', 'agent-session-atif-demo-session-7f3a.json'],
    ]);
    for (const file of report.files) expect(file.bytes).toBe(statSync(file.path).size);
  });

  it('convert prints the trajectories written and the counters', async () => {
    const out = await replayed();
    const result = await cliInProcess(['convert', path.join(out, 'atof', 'agent-session-atof.jsonl'), '--out', path.join(out, 'converted'), '--json']);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { command: string; counters: Record<string, number>; files: { path: string; bytes: number }[] };
    expect(report.command).toBe('convert');
    expect(report.counters).toMatchObject({ sessions: 1, partialSessions: 0, malformedLines: 0 });
    expect(report.files).toHaveLength(1);
    expect(report.files[0]!.bytes).toBe(statSync(report.files[0]!.path).size);
  });

  it('validate prints per-file verdicts with errors and warnings apart, and exits 1 on an invalid file', async () => {
    const out = await replayed();
    const dir = tempDir();
    const bad = path.join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"atof_version":"0.1","kind":"scope","scope_category":"end","uuid":"u","name":"n","timestamp":"2026-01-01T00:00:00Z","category":"agent"}\n');
    const empty = path.join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const result = await cliInProcess(['validate', path.join(out, 'atof', 'agent-session-atof.jsonl'), bad, empty, '--json']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { ok: boolean; files: { file: string; kind: string; valid: boolean; empty: boolean; count: number; errors: { rule: string }[]; warnings: { rule: string }[] }[]; counters: Record<string, number> };
    expect(report.ok).toBe(false);
    expect(report.counters).toEqual({ files: 3, valid: 2, invalid: 1, empty: 1 });
    const [good, broken, none] = report.files;
    expect(good).toMatchObject({ kind: 'atof', valid: true, empty: false, errors: [], warnings: [] });
    expect(good!.count).toBeGreaterThan(0);
    expect(broken!.valid).toBe(false);
    expect(broken!.errors.length).toBeGreaterThan(0);
    expect(none).toMatchObject({ kind: 'atof', valid: true, empty: true, count: 0, errors: [] });
    expect(none!.warnings.map((warning) => warning.rule)).toEqual(['file.empty']);
  });

  it('view prints the session trees; doctor prints its report', async () => {
    const out = await replayed();
    const view = await cliInProcess(['view', path.join(out, 'atif', 'agent-session-atif-demo-session-7f3a.json'), '--json']);
    expect(view.code).toBe(0);
    const tree = JSON.parse(view.stdout) as { command: string; files: { kind: string; sessions: { kind: string; title: string; children: unknown[]; source?: unknown }[] }[]; html: null };
    expect(tree.command).toBe('view');
    expect(tree.files[0]!.kind).toBe('atif');
    expect(tree.files[0]!.sessions[0]).toMatchObject({ kind: 'session', title: 'session demo-session-7f3a' });
    expect(tree.files[0]!.sessions[0]!.source).toBeUndefined();
    expect(tree.html).toBeNull();
    const doctor = await cliInProcess(['doctor', '--json'], { env: { HERMES_NEMO_RELAY_PLUGINS_TOML: undefined, HERMES_NEMO_RELAY_ATIF_ENABLED: '1', HERMES_NEMO_RELAY_ATOF_ENABLED: undefined } });
    const report = JSON.parse(doctor.stdout) as { command: string; backend: { kind: string; reason: string }; exporters: { format: string; path: string | null }[]; problems: { code: string }[] };
    expect(report.command).toBe('doctor');
    expect(typeof report.backend.reason).toBe('string');
    expect(report.exporters).toEqual([{ format: 'atif', path: null }]);
    expect(report.problems.map((problem) => problem.code)).toContain('settings.atif_without_output_directory');
  });
});

describe('"-" reads standard input', () => {
  it('for replay, convert, validate and view', () => {
    const input = readFileSync(HOOKS, 'utf8');
    const out = tempDir();
    const replay = cli(['replay', '-', '--out', out, '--json'], { input });
    expect(replay.code, replay.stderr).toBe(0);
    expect((JSON.parse(replay.stdout) as { input: string; counters: { hooks: number } }).counters.hooks).toBe(37);
    const atof = readFileSync(path.join(out, 'atof', 'stdin-atof.jsonl'), 'utf8');
    const convert = cli(['convert', '-', '--out', path.join(out, 'c'), '--json'], { input: atof });
    expect(convert.code, convert.stderr).toBe(0);
    expect((JSON.parse(convert.stdout) as { files: unknown[] }).files).toHaveLength(1);
    const validate = cli(['validate', '-'], { input: atof });
    expect(validate.code).toBe(0);
    expect(validate.stdout).toMatch(/^✓ \(stdin\): valid \(ATOF 0\.1, \d+ events\)$/m);
    const atif = readFileSync(path.join(out, 'atif', 'stdin-atif-demo-session-7f3a.json'), 'utf8');
    expect(cli(['validate', '-'], { input: atif }).stdout).toMatch(/^✓ \(stdin\): valid \(ATIF ATIF-v1\.7, \d+ steps\)$/m);
    expect(cli(['view', '-'], { input: atif }).stdout).toMatch(/^ +session demo-session-7f3a/);
    const twice = cli(['validate', '-', '-'], { input: atif });
    expect(twice.code).toBe(2);
  });
});

describe('hostile input', () => {
  it('a line longer than the limit is one clear line for replay, convert and validate, not a RangeError', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'one-line.jsonl');
    writeFileSync(file, `{"hook":"on_session_start","payload":{"x":"${'a'.repeat(3 * 1024 * 1024)}"}}`);
    const env = { NEMO_RELAY_HOOKS_MAX_LINE_BYTES: String(1024 * 1024) };
    for (const args of [['replay', file, '--out', path.join(dir, 'r')], ['convert', file, '--out', path.join(dir, 'c')]]) {
      const result = await cliInProcess(args, { env });
      expect(result.code, args[0]).toBe(1);
      expectNoStack(result.stderr);
      expect(result.stderr).toBe(`nemo-relay-hooks: cannot read ${file}: line 1 is longer than 1048576 bytes, more than a JSON line may hold (is this really JSONL?)\n`);
    }
    const validate = await cliInProcess(['validate', file, '--stream-above', '0'], { env });
    expect(validate.code).toBe(1);
    expect(validate.stdout).toContain('line 1 is longer than 1048576 bytes');
    expectNoStack(validate.stdout + validate.stderr);
  });

  it('view shows escape sequences, OSC titles and BEL in session content as visible escapes', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'evil.jsonl');
    const evil = 'hi\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202eend';
    const events = [
      { atof_version: '0.1', kind: 'scope', scope_category: 'start', uuid: 'a', parent_uuid: null, name: evil, timestamp: '2026-01-01T00:00:00Z', category: 'agent', attributes: [], data: null, metadata: { session_id: evil } },
      { atof_version: '0.1', kind: 'scope', scope_category: 'start', uuid: 't', parent_uuid: 'a', name: `tool${evil}`, timestamp: '2026-01-01T00:00:01Z', category: 'tool', attributes: [], data: { cmd: evil }, metadata: {} },
      { atof_version: '0.1', kind: 'scope', scope_category: 'end', uuid: 't', parent_uuid: 'a', name: `tool${evil}`, timestamp: '2026-01-01T00:00:02Z', category: 'tool', attributes: [], data: evil, metadata: { 'otel.status_code': 'ERROR', 'error.type': evil } },
      { atof_version: '0.1', kind: 'scope', scope_category: 'end', uuid: 'a', parent_uuid: null, name: evil, timestamp: '2026-01-01T00:00:03Z', category: 'agent', attributes: [], data: null, metadata: {} },
    ];
    writeFileSync(file, `${events.map((event) => JSON.stringify(event)).join('\n')}\n`);
    const result = await cliInProcess(['view', file], { env: { NO_COLOR: '1' } });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(result.stdout).toContain('session hi\\x1b[2J\\x1b]0;pwned\\x07\\x9b31m\\u202eend');
    expect(result.stdout).toContain('ERROR hi\\x1b[2J');
  });

  it('replay and validate quote hostile line content as visible escapes too', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'evil.jsonl');
    writeFileSync(file, '\u001b]0;pwned\u0007\u001b[2J not json\n');
    const replay = await cliInProcess(['replay', file, '--out', path.join(dir, 'out')]);
    expect(replay.stderr).toContain(`${file}:1: not valid JSON`);
    expect(replay.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    const validate = await cliInProcess(['validate', file]);
    expect(validate.code).toBe(1);
    expect(validate.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(validate.stdout).toContain('\\x1b');
  });

  it('the terminal filter keeps tabs and ordinary text, and escapes newlines and the line and paragraph separators', () => {
    expect(safeForTerminal('a\tb ünïcode ✓')).toBe('a\tb ünïcode ✓');
    expect(safeForTerminal('a\nb\rc')).toBe('a\\x0ab\\x0dc');
    expect(safeForTerminal('a\u2028b\u2029c')).toBe('a\\u2028b\\u2029c');
    // Escaping twice changes nothing: a message escaped where it is made and again where it is printed reads the same.
    expect(safeForTerminal(safeForTerminal('\u001b[2J'))).toBe('\\x1b[2J');
  });

  it('view and compare quote the bytes of a file they refuse as visible escapes, where they printed them raw', async () => {
    const dir = tempDir();
    const other = path.join(dir, 'other.jsonl');
    writeFileSync(other, '');
    const hostile = '\u001b]0;PWNED-TITLE\u0007\u001b[2J\u009b31m\u2028';
    for (const name of ['osc.json', 'osc.jsonl']) {
      const file = path.join(dir, name);
      writeFileSync(file, `${hostile}\n`);
      for (const args of [['view', file], ['compare', file, other]]) {
        const result = await cliInProcess(args);
        expect(result.code, args.join(' ')).toBe(args[0] === 'view' ? 1 : 2);
        expect(result.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028]/);
        // The parser quotes the start of the text (how much, and how, depends on the runtime: V8 the text, Bun the token).
        expect(result.stderr).toContain(`not valid JSON`);
        expect(result.stderr).toContain('\\x1b');
      }
    }
  });

  it('file names with control characters are printed as visible escapes by replay, convert, view and compare', async () => {
    const dir = tempDir();
    const named = path.join(dir, 'ctl\u001b[31mname');
    mkdirSync(named);
    const hooks = path.join(named, 'run.hooks.jsonl');
    copyFileSync(path.join(EXAMPLES, 'plain-chat.hooks.jsonl'), hooks);
    const out = path.join(named, 'out');
    const atof = path.join(out, 'atof', 'run-atof.jsonl');
    const runs = [
      await cliInProcess(['replay', hooks, '--out', out]),
      await cliInProcess(['convert', atof, '--out', path.join(named, 'converted')]),
      await cliInProcess(['view', atof]),
      await cliInProcess(['compare', atof, atof]),
      await cliInProcess(['view', path.join(named, 'missing.jsonl')]),
      await cliInProcess(['compare', path.join(named, 'missing.jsonl'), atof]),
      await cliInProcess(['doctor', '--offline'], { env: { NEMO_RELAY_HOOKS_ATIF_OUTPUT_DIRECTORY: named } }),
    ];
    runs.forEach((result, index) => {
      expect(result.stdout + result.stderr, String(index)).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      // view of one file names it nowhere; compare names it in its header.
      if (index !== 2) expect(result.stdout + result.stderr, String(index)).toContain('ctl\\x1b[31mname');
    });
    expect(runs[0]!.stdout).toContain(`replayed 12 lines of ${safeForTerminal(hooks)} in`);
  });
});

describe('empty outputs are called empty', () => {
  it('validate says "valid but empty" for an ATOF file without events', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'none.jsonl');
    writeFileSync(file, '');
    const result = await cliInProcess(['validate', file]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`! ${file}: valid but empty (ATOF (no atof_version), 0 events): nothing was recorded\n`);
  });

  it('replay of a stream without hooks warns that nothing was recorded', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'none.hooks.jsonl');
    writeFileSync(file, '\n');
    const result = await cliInProcess(['replay', file, '--out', path.join(dir, 'out')]);
    expect(result.stdout).toMatch(new RegExp(`^  warning +${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} holds no hooks: nothing was recorded$`, 'm'));
    const json = JSON.parse((await cliInProcess(['replay', file, '--out', path.join(dir, 'out2'), '--json'])).stdout) as { warnings: string[] };
    expect(json.warnings).toEqual([`${file} holds no hooks: nothing was recorded`]);
  });
});

describe('progress', () => {
  function tty(lines: string[]): CliIo {
    return { out: () => {}, err: (text) => lines.push(text), stderrIsTty: true, style: PLAIN, env: {}, cwd: '.' };
  }

  it('on a terminal shows the count, percentage, rate and time left', () => {
    let now = 0;
    const lines: string[] = [];
    const progress = new Progress(tty(lines), { label: 'replaying x', unit: 'lines', totalBytes: 1000, now: () => now });
    now = 2000;
    progress.update(50_000, 250, '3 open sessions');
    expect(lines).toEqual(['\r\u001b[Kreplaying x: 50,000 lines (25%), 25,000 lines/s, 6.00s left, 3 open sessions']);
    now = 2100;
    progress.update(60_000, 300);
    expect(lines).toHaveLength(1);
    progress.clear();
    expect(lines.at(-1)).toBe('\r\u001b[K');
  });

  it('is off when stderr is not a terminal', () => {
    const result = cli(['replay', HOOKS, '--out', tempDir()]);
    expect(result.stderr).not.toContain('\r');
    let now = 0;
    const lines: string[] = [];
    const io = { ...tty(lines), stderrIsTty: false };
    const progress = new Progress(io, { label: 'x', unit: 'lines', totalBytes: 10, now: () => now });
    now = 10_000;
    progress.update(1, 1);
    expect(lines).toEqual([]);
  });
});
