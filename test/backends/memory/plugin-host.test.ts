// The memory relay's plugins.toml activation: ATOF sinks and plugin-managed
// ATIF files equal what native's plugin host writes for the same calls;
// activation errors, conflicts, partial trajectories and safe file names.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../../src/backends/memory/index.ts';
import { InvalidPluginConfigError, PluginActivationBusyError } from '../../../src/relay/index.ts';
import type { ScopeHandle } from '../../../src/relay/contract.ts';
import { parseAtofJsonl, validateAtofEvents } from '../../../src/formats/atof/validate.ts';
import { sanitizeValue } from '../../../src/formats/plugins-toml/atif-template.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { SLICE_UNITS } from '../../../src/shared/slices.ts';
import { atifErrorLines, expectedNativeErrors } from '../../support/harbor.ts';
import {
  native,
  nativeInitializeError,
  nativeUnavailable,
  normalizeTree,
  pluginDocument,
  readTree,
  runMemoryPlugin,
  runNativePlugin,
  type Driver,
} from '../../support/native-driver.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-plugin-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const config = pluginDocument;

let clock = 1_800_000_000_000_000;
const ts = () => (clock += 10);

function conversation(d: Driver, parent: ScopeHandle, text: string) {
  const llm = d.llmStart({ name: 'anthropic', parent, request: { headers: {}, content: { model: 'm', messages: [{ role: 'user', content: text }] } }, modelName: 'm', timestampUs: ts() });
  d.llmEnd(llm, {
    response: {
      id: 'msg',
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'text', text: `re: ${text}` },
        { type: 'tool_use', id: `tu-${text}`, name: 'Bash', input: { command: 'pwd' } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 3, output_tokens: 2 },
    },
    timestampUs: ts(),
  });
  const tool = d.toolStart({ name: 'Bash', parent, args: { command: 'pwd' }, toolCallId: `tu-${text}`, timestampUs: ts() });
  d.toolEnd(tool, { result: '/w', timestampUs: ts() });
}

/** The probe-plugin scenario: session, turn, LLM + tool, a subagent with its own LLM call. */
function sessionScenario(d: Driver, tag = 'prog', options: { leaveOpen?: boolean } = {}) {
  const session = d.pushScope({ name: `${tag}-session`, category: 'agent', metadata: { nemo_relay_scope_role: 'session', session_id: `${tag}-sid`, user_id: 'u-1' }, input: { cwd: '/w' }, timestampUs: ts() });
  d.mark({ name: 'session.start', parent: session, metadata: { session_id: `${tag}-sid` }, timestampUs: ts() });
  const turn = d.pushScope({ name: `${tag}-turn`, category: 'custom', parent: session, metadata: { nemo_relay_scope_role: 'turn', turn_index: 1 }, input: { prompt: 'hi' }, timestampUs: ts() });
  conversation(d, turn, 'hi');
  const sub = d.pushScope({ name: 'subagent:s1', category: 'agent', parent: turn, metadata: { nemo_relay_scope_role: 'subagent' }, input: { prompt: 'sub' }, timestampUs: ts() });
  d.mark({ name: 'subagent.note', parent: sub, data: { n: 1 }, timestampUs: ts() });
  conversation(d, sub, 'sub');
  d.popScope(sub, { output: { result: 'sub done' }, timestampUs: ts() });
  d.popScope(turn, { output: { output: 'ok' }, timestampUs: ts() });
  if (!options.leaveOpen) d.popScope(session, { output: { status: 'ended' }, timestampUs: ts() });
}

function checkFiles(tree: Record<string, string>) {
  for (const [name, text] of Object.entries(tree)) {
    if (name.endsWith('.jsonl')) {
      const parsed = parseAtofJsonl(text);
      expect(parsed.errors).toEqual([]);
      expect(validateAtofEvents(parsed.events)).toEqual([]);
    } else {
      const doc: unknown = JSON.parse(text);
      expect(atifErrorLines(doc), name).toEqual(expectedNativeErrors(doc));
    }
  }
}

describe.skipIf(native === null)(`memory plugin host files equal native's${nativeUnavailable ? ` (skipped: ${nativeUnavailable})` : ''}`, () => {
  const scenarios: Record<string, { atif?: Record<string, unknown>; run: (d: Driver) => void }> = {
    'a finished session with a turn, tools and a subagent': { run: (d) => sessionScenario(d) },
    'two sessions, each in its own file': {
      run: (d) => {
        sessionScenario(d, 'one');
        sessionScenario(d, 'two');
      },
    },
    'a session still open at close (partial trajectory)': { run: (d) => sessionScenario(d, 'open', { leaveOpen: true }) },
    'a top-level turn scope without a session (session_id is its implicit root)': {
      run: (d) => {
        const turn = d.pushScope({ name: 'turn-only', category: 'custom', metadata: { nemo_relay_scope_role: 'turn', session_id: 'T', user_id: 'U' }, timestampUs: ts() });
        conversation(d, turn, 'turn');
        d.popScope(turn, { timestampUs: ts() });
      },
    },
    'scopes that are not trajectory roots write no ATIF file': {
      run: (d) => {
        const custom = d.pushScope({ name: 'plain-custom', category: 'custom', timestampUs: ts() });
        const agent = d.pushScope({ name: 'agent-under-custom', category: 'agent', parent: custom, timestampUs: ts() });
        conversation(d, agent, 'nested');
        d.popScope(agent, { timestampUs: ts() });
        d.popScope(custom, { timestampUs: ts() });
        const fn = d.pushScope({ name: 'fn', category: 'function', timestampUs: ts() });
        d.popScope(fn, { timestampUs: ts() });
        const empty = d.pushScope({ name: 'empty-agent', category: 'agent', metadata: { session_id: 'E' }, timestampUs: ts() });
        d.popScope(empty, { timestampUs: ts() });
      },
    },
    'file names from metadata placeholders, fallbacks and sanitized values': {
      atif: { filename_template: 'sessions/{metadata.user_id:-anon}/{metadata.session_id}-{metadata.deep.k:-none}-{session_id}.json', tool_definitions: [{ name: 'Bash' }], extra: { team: 'x' } },
      run: (d) => {
        for (const metadata of [
          { session_id: '../../evil', user_id: 'u/../x' },
          { session_id: 'a b/c..d', deep: { k: 'v.1' } },
          { session_id: 'ü~ok_-.', user_id: null },
        ]) {
          const scope = d.pushScope({ name: 'agent', category: 'agent', metadata, timestampUs: ts() });
          d.popScope(scope, { timestampUs: ts() });
        }
      },
    },
  };

  for (const [name, { atif, run }] of Object.entries(scenarios)) {
    it(`writes the same files for ${name}`, async () => {
      const start = clock;
      const theirs = await runNativePlugin(config(atif), run);
      clock = start; // same explicit timestamps on both sides
      const ours = await runMemoryPlugin(config(atif), run);
      checkFiles(ours);
      expect(Object.keys(ours).length).toBeGreaterThan(0);
      expect(normalizeTree(ours)).toEqual(normalizeTree(theirs));
    });
  }

  it('rejects an invalid document with native initialize()\'s message, its prefix said once', async () => {
    const documents = [
      { version: 1, components: [{ kind: 'observability', config: { version: 4, atif: { enabled: true, filename_template: 'no-placeholder.json' } } }] },
      { version: 1, components: [{ kind: 'observability', config: { version: 4, atof: { enabled: true, sinks: [{ type: 'file', mode: 'x' }, { type: 'file', mode: 'y' }] }, atif: { enabled: true, filename_template: 'a' } } }] },
      { version: 2, components: [] },
      { version: 1, components: [{ kind: 'observability', config: { version: 4, atof: { enabled: true, sinks: [{ type: 'kafka' }] } } }] },
      { version: 1, components: {} },
    ];
    for (const document of documents) {
      const expected = await nativeInitializeError(document);
      expect(expected).not.toBeNull();
      const relay = createMemoryRelay({ logger: silentLogger });
      const error = await relay.initializePluginConfig(document as never).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidPluginConfigError);
      // Native's text, with the prefix its typed diagnostics repeat said once (`invalid config: invalid config: …`).
      expect((error as Error).message).toBe(expected!.replace(/(?<=^invalid config: |; )invalid config: /g, ''));
      expect((error as InvalidPluginConfigError).diagnostics.some((d) => d.level === 'error')).toBe(true);
    }
  });
});

describe('memory plugin host activation', () => {
  it('allows one activation at a time; close is idempotent and frees the slot', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const dir = tempDir();
    const first = await relay.initializePluginConfig(config()(dir) as never, { tomlPath: '/etc/x/plugins.toml' });
    expect(first.report).toEqual({ diagnostics: [], configPaths: ['/etc/x/plugins.toml'] });
    await expect(relay.initializePluginConfig({ version: 1, components: [] })).rejects.toBeInstanceOf(PluginActivationBusyError);
    await expect(relay.initializePluginConfig({ version: 1, components: [] })).rejects.toThrow(/^conflict: /);
    expect((first as { isActive?: boolean }).isActive).toBe(true);
    await first.close();
    await first.close();
    expect((first as { isActive?: boolean }).isActive).toBe(false);
    const second = await relay.initializePluginConfig({ version: 1, components: [] });
    await second.close();
  });

  it('stops writing when closed, and reports its outputs while active', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const dir = tempDir();
    const activation = await relay.initializePluginConfig(config()(dir) as never);
    sessionScenario(relay as unknown as Driver, 'live');
    await relay.flush();
    const outputs = relay.outputs();
    expect(outputs.map((o) => o.kind).sort()).toEqual(['atif', 'atof']);
    const atif = outputs.find((o) => o.kind === 'atif')!;
    expect(atif).toMatchObject({ path: dir, errors: 0 });
    expect(atif.bytes).toBeGreaterThan(0);
    await activation.close();
    const before = readTree(dir);
    sessionScenario(relay as unknown as Driver, 'after');
    await relay.flush();
    expect(readTree(dir)).toEqual(before);
    expect(relay.outputs()).toEqual([]);
    checkFiles(before);
  });

  it('writes trajectories atomically: no temporary file is left next to them', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const dir = tempDir();
    const activation = await relay.initializePluginConfig(config()(dir) as never);
    sessionScenario(relay as unknown as Driver, 'atomic');
    await activation.close();
    expect(Object.keys(readTree(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('close() waits for the trajectory writes still running in the thread pool', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const dir = tempDir();
    const activation = await relay.initializePluginConfig(config()(dir) as never);
    sessionScenario(relay as unknown as Driver, 'closing');
    // No flush: the root's trajectory is still being built or written when close() starts.
    await activation.close();
    const tree = readTree(dir);
    const trajectories = Object.keys(tree).filter((name) => name.startsWith('nemo-relay-atif-'));
    expect(trajectories.length).toBeGreaterThan(0);
    for (const name of trajectories) expect(() => JSON.parse(tree[name]!)).not.toThrow();
    expect(Object.keys(tree).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('renders an unresolvable placeholder as "unknown" instead of losing the trajectory, and reports it', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const dir = tempDir();
    const activation = await relay.initializePluginConfig(config({ filename_template: '{metadata.user_id}/{session_id}.json' })(dir) as never);
    for (const metadata of [{}, { user_id: '' }, { user_id: { nested: true } }, { user_id: 42 }]) {
      const scope = relay.pushScope({ name: 'a', category: 'agent', metadata });
      relay.popScope(scope);
    }
    const health = relay.outputs().find((o) => o.kind === 'atif')!;
    await activation.close();
    const names = Object.keys(readTree(dir)).filter((name) => name.endsWith('.json'));
    expect(names.map((name) => name.split('/')[0]).sort()).toEqual(['42', 'unknown', 'unknown', 'unknown']);
    expect(health.errors).toBe(3);
    expect(health.lastError).toMatch(/\{metadata\.user_id\} did not resolve/);
  });

  it('keeps every file inside output_directory whatever the metadata says', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const dir = tempDir();
    const out = path.join(dir, 'out');
    const activation = await relay.initializePluginConfig(config({ output_directory: out, filename_template: '{metadata.a}/{metadata.b}-{session_id}.json' })(dir) as never);
    const hostile = ['../../../../tmp/pwned', '/etc/passwd', '..', '.', '..\\..\\win', 'C:\\x', '%2e%2e/%2e%2e', 'a/../../b', '\u0000', '~/.ssh'];
    for (const a of hostile) {
      const scope = relay.pushScope({ name: 'a', category: 'agent', metadata: { a, b: a } });
      relay.popScope(scope);
    }
    await activation.close();
    const written = Object.keys(readTree(dir)).filter((name) => name.endsWith('.json'));
    expect(written).toHaveLength(hostile.length);
    for (const name of written) expect(name.startsWith('out/')).toBe(true);
  });

  it('keeps activating when an ATOF sink cannot be opened, with a warning in the report', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'file'), 'x');
    const document = {
      version: 1,
      components: [{ kind: 'observability', config: { version: 4, atof: { enabled: true, sinks: [{ type: 'file', output_directory: path.join(dir, 'file', 'sub') }] } } }],
    };
    const activation = await relay.initializePluginConfig(document);
    expect(activation.report.diagnostics).toEqual([
      expect.objectContaining({ level: 'warning', code: 'observability.output_unavailable', component: 'atof', field: 'sinks[0]' }),
    ]);
    relay.mark({ name: 'm' });
    await activation.close();
    expect(relay.stats().dropped).toBe(1);
  });
});

describe('ATIF file-name value sanitizing', () => {
  it('reduces a value to one safe segment the way native does', () => {
    const cases: [string, string][] = [
      ['a/b', 'a-b'],
      ['a b', 'a-b'],
      ['x.y', 'x.y'],
      ['.', '-'],
      ['ü', '-'],
      ['a//b', 'a-b'],
      ['/abs', '-abs'],
      ['..', '-'],
      ['a/./b', 'a-.-b'],
      ['~t_-.', '~t_-.'],
      ['x\\y', 'x-y'],
      ['C:', 'C-'],
      ['a..b', 'a-b'],
      ['...', '-'],
      [' sp ', '-sp-'],
      ['../../evil', '-evil'],
      ['u/../x', 'u-x'],
      ['a--b', 'a--b'],
      ['a-/b', 'a--b'],
      ['..a', '-a'],
      ['a/..', 'a-'],
      ['%2e%2e', '-2e-2e'],
      ['a...b.c', 'a-b.c'],
      ['日本', '-'],
      ['a\u0000b', 'a-b'],
    ];
    for (const [value, expected] of cases) expect([value, sanitizeValue(value)]).toEqual([value, expected]);
  });
});

const here = path.dirname(fileURLToPath(import.meta.url));
const bun = path.resolve(here, '../../../node_modules/.bin/bun');
const bunAvailable = fs.existsSync(bun) && spawnSync(bun, ['--version']).status === 0;
if (!bunAvailable) console.warn('[plugin-host exit test] skipped: node_modules/.bin/bun is not available to run a TypeScript child process');

describe.skipIf(!bunAvailable)('memory plugin host at process exit', () => {
  it('writes partial trajectories of sessions still open, and every ATOF line', () => {
    const dir = tempDir();
    const script = path.join(dir, 'child.ts');
    const entry = path.resolve(here, '../../../src/backends/memory/index.ts');
    fs.writeFileSync(
      script,
      `import { createMemoryRelay } from ${JSON.stringify(entry)};
const relay = createMemoryRelay();
await relay.initializePluginConfig(${JSON.stringify(config()(dir))});
const session = relay.pushScope({ name: 'open-session', category: 'agent', metadata: { session_id: 'open' } });
const llm = relay.llmStart({ name: 'p', parent: session, request: { headers: {}, content: { messages: [{ role: 'user', content: 'hi' }] } } });
relay.llmEnd(llm, { response: { content: [{ type: 'text', text: 'hello' }] } });
`,
    );
    const result = spawnSync(bun, [script], { encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    const tree = readTree(dir);
    checkFiles(Object.fromEntries(Object.entries(tree).filter(([name]) => name !== 'child.ts')));
    const trajectories = Object.keys(tree).filter((name) => name.startsWith('nemo-relay-atif-'));
    expect(trajectories).toHaveLength(1);
    expect(JSON.parse(tree[trajectories[0]!]!).steps.map((s: { source: string }) => s.source)).toEqual(['user', 'agent']);
    expect(tree['events.jsonl']!.trim().split('\n')).toHaveLength(3);
  });
});

describe('memory plugin host: one file-name rule with native', () => {
  const sinkDocument = (dir: string, filename: string) => ({
    version: 1,
    components: [{ kind: 'observability', enabled: true, config: { version: 4, atof: { enabled: true, sinks: [{ type: 'file', output_directory: dir, filename, mode: 'append' }] } } }],
  });

  it('rejects a sink filename that climbs out of output_directory and writes nothing there', async () => {
    const top = tempDir();
    const dir = path.join(top, 'a', 'b');
    const relay = createMemoryRelay({ logger: silentLogger });
    const error = await relay.initializePluginConfig(sinkDocument(dir, '../../x.jsonl') as never).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidPluginConfigError);
    expect((error as Error).message).toMatch(/must be a confined relative file path/);
    expect(fs.existsSync(path.join(top, 'x.jsonl'))).toBe(false);
    if (!nativeUnavailable) expect((error as Error).message).toBe(await nativeInitializeError(sinkDocument(dir, '../../x.jsonl')));
  });

  it('rejects a sink whose folder part is a link out of output_directory', async () => {
    const dir = tempDir();
    const outside = tempDir();
    fs.symlinkSync(outside, path.join(dir, 'sub'));
    const relay = createMemoryRelay({ logger: silentLogger });
    await expect(relay.initializePluginConfig(sinkDocument(dir, 'sub/x.jsonl') as never)).rejects.toBeInstanceOf(InvalidPluginConfigError);
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('keeps an ATIF template with a folder part inside the output folder when that folder is a planted link', async () => {
    const dir = tempDir();
    const outside = tempDir();
    fs.symlinkSync(outside, path.join(dir, 'sub'));
    const relay = createMemoryRelay({ logger: silentLogger });
    const activation = await relay.initializePluginConfig(config({ filename_template: 'sub/{session_id}.json' })(dir) as never);
    const root = relay.pushScope({ name: 's', category: 'agent', metadata: { session_id: 's' } });
    relay.popScope(root);
    await activation.close();
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.readdirSync(dir).filter((name) => name.startsWith('nemo-relay-atif-'))).toHaveLength(1);
  });
});

describe('memory plugin host: ATIF writes after a passing fault', () => {
  it('writes a trajectory again once the folder works, instead of losing it', async () => {
    const top = tempDir();
    const dir = path.join(top, 'atif');
    fs.writeFileSync(dir, 'in the way'); // ENOTDIR for the first write, as a full disk would fail it
    const relay = createMemoryRelay({ logger: silentLogger });
    const document = {
      version: 1,
      components: [{ kind: 'observability', enabled: true, config: { version: 4, atif: { enabled: true, agent_name: 'a', agent_version: '1', model_name: 'm', output_directory: dir } } }],
    };
    const activation = await relay.initializePluginConfig(document as never);
    const root = relay.pushScope({ name: 's', category: 'agent', metadata: { session_id: 's' } });
    relay.popScope(root);
    // The root's trajectory is built after its end, in slices; flush() waits for its write.
    await relay.flush();
    const failed = relay.outputs().find((o) => o.kind === 'atif')!;
    expect(failed.errors).toBeGreaterThan(0);
    expect(failed.dropped).toBe(1);
    fs.rmSync(dir);
    fs.mkdirSync(dir);
    // Retried on a backoff timer, and a last time when the activation closes (no waiting on the timer here).
    const outputs = relay.outputs();
    await activation.close();
    expect(fs.readdirSync(dir).filter((name) => name.endsWith('.json'))).toHaveLength(1);
    expect(outputs.find((o) => o.kind === 'atif')!.path).toBe(dir);
  });
});

describe("memory plugin host: a long session's end does not stop the host (issue 23, item 9)", () => {
  it('builds the ended root\'s trajectory in slices, between turns of the host\'s event loop, and flush() waits for it', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const dir = tempDir();
    const activation = await relay.initializePluginConfig(config()(dir) as never);
    const driver = relay as unknown as Driver;
    const root = driver.pushScope({ name: 'long-session', category: 'agent', metadata: { session_id: 'long' }, timestampUs: ts() });
    const turns = 2 * SLICE_UNITS;
    for (let i = 0; i < turns; i++) conversation(driver, root, `t${i}`);
    const written = (): boolean => fs.readdirSync(dir).some((name) => name.endsWith('.json'));
    // A host timer set before the root ends: with the build done inside popScope, the file is there before it fires.
    let timerSawFile: boolean | undefined;
    setTimeout(() => {
      timerSawFile = written();
    }, 0);
    driver.popScope(root, { timestampUs: ts() });
    expect(written()).toBe(false);
    // The host's own turns of the event loop until the file is there: the build runs a slice per turn.
    let hostTurns = 0;
    while (!written() && hostTurns < 100_000) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      hostTurns++;
    }
    expect(timerSawFile).toBe(false);
    // Reading, converting and writing 4 events per turn, SLICE_UNITS events a slice: at least one turn per slice of each.
    expect(hostTurns).toBeGreaterThanOrEqual((3 * 4 * turns) / SLICE_UNITS);
    await relay.flush();
    const files = Object.entries(readTree(dir)).filter(([name]) => name.endsWith('.json'));
    expect(files).toHaveLength(1);
    const doc = JSON.parse(files[0]![1]) as { steps: unknown[]; extra: { observed_events: unknown[] } };
    expect(doc.extra.observed_events).toHaveLength(4 * turns + 2);
    expect(doc.steps.length).toBeGreaterThanOrEqual(turns);
    await activation.close();
  });

  it('flush() settles only once every ended root is written; closing finishes a build at once', async () => {
    const relay = createMemoryRelay({ logger: silentLogger });
    const dir = tempDir();
    const activation = await relay.initializePluginConfig(config()(dir) as never);
    const driver = relay as unknown as Driver;
    for (const tag of ['a', 'b']) {
      const root = driver.pushScope({ name: tag, category: 'agent', timestampUs: ts() });
      for (let i = 0; i < SLICE_UNITS; i++) conversation(driver, root, `${tag}${i}`);
      driver.popScope(root, { timestampUs: ts() });
    }
    await relay.flush();
    expect(Object.keys(readTree(dir)).filter((name) => name.endsWith('.json'))).toHaveLength(2);
    const root = driver.pushScope({ name: 'c', category: 'agent', timestampUs: ts() });
    for (let i = 0; i < SLICE_UNITS; i++) conversation(driver, root, `c${i}`);
    driver.popScope(root, { timestampUs: ts() });
    await activation.close();
    expect(Object.keys(readTree(dir)).filter((name) => name.endsWith('.json'))).toHaveLength(3);
    checkFiles(readTree(dir));
  });
});
