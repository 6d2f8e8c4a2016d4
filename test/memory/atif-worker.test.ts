// With `atifWorker: true` the memory relay builds the trajectories of
// exportJson() on a worker thread. What the plugin writes must be byte for byte what the host's
// thread builds from the same events; a worker that cannot start costs one
// warning and nothing else; and the worker never keeps a host alive, nor
// lets one end before its trajectories are written.
//
// Node 20 cannot run the .ts worker file, so these run the built dist/ in a
// child process of the runtime under test (the suite's global setup builds
// it); Bun and Deno also run the source worker in-process (last test).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runChild, runtime } from '../support/child.ts';
import { readStream } from '../differential/replay.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { hasNoSteps } from '../../src/formats/atif/serialize.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STREAMS = path.join(ROOT, 'test', 'fixtures', 'streams');
const DIST = pathToFileURL(path.join(ROOT, 'dist', 'src') + path.sep).href;
const made: string[] = [];
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** A temp folder inside the repo (a copy of dist/ there still resolves the package's dependencies). */
function repoTemp(label: string): string {
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, '.tmp', `nrh-${label}-`));
  made.push(dir);
  return dir;
}

interface ReplayReport {
  stream: string;
  /** Files the plugin wrote, and the in-thread text of the same session at its last export, per file. */
  files: { name: string; text: string }[];
  inThread: string[];
  /** Exports whose worker text differed from the in-thread text of the same events. */
  mismatches: number;
  exports: number;
  fallbacks: number;
  warnings: string[];
}

/**
 * Replays committed hook streams through the plugin on a memory relay whose
 * every ATIF exporter has an in-thread twin on the same scope: at each
 * export the twin's text (built on the host's thread, `exportJsonNow`) is
 * taken from exactly the events the worker is sent.
 */
function replayScript(distSrc: string, streamsFile: string, outDir: string): string {
  return `
import fs from 'node:fs';
import path from 'node:path';
const { createMemoryRelay } = await import(${JSON.stringify(`${distSrc}backends/memory/index.js`)});
const { createNemoRelayPlugin, HookRegistry } = await import(${JSON.stringify(`${distSrc}index.js`)});
const streams = JSON.parse(fs.readFileSync(${JSON.stringify(streamsFile)}, 'utf8'));
const reports = [];
for (const [stream, lines] of streams) {
  const warnings = [];
  const logger = { debug() {}, info() {}, warn: (m) => warnings.push(String(m)), error: (m) => warnings.push(String(m)) };
  const relay = createMemoryRelay({ logger, atifWorker: true });
  const last = new Map();
  let mismatches = 0;
  let exports = 0;
  const backend = new Proxy(relay, {
    get(target, key) {
      if (key === 'registerAtifExporter') {
        return (options) => {
          const real = target.registerAtifExporter(options);
          const twin = target.registerAtifExporter(options);
          return {
            exportJson: async () => {
              const inThread = twin.exportJsonNow();
              const json = await real.exportJson();
              exports++;
              if (json !== inThread) mismatches++;
              last.set(twin, inThread);
              return json;
            },
            exportJsonNow: () => real.exportJsonNow(),
            deregister: () => { real.deregister(); twin.deregister(); },
          };
        };
      }
      const value = target[key];
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const dir = path.join(${JSON.stringify(outDir)}, stream);
  const plugin = createNemoRelayPlugin({
    backend, env: {}, logger,
    settings: { atofFilename: 'hermes-atof.jsonl', atifFilenameTemplate: 'hermes-atif-{session_id}.json', atofEnabled: true, atofOutputDirectory: dir, atifEnabled: true, atifOutputDirectory: path.join(dir, 'atif') },
  });
  const hooks = new HookRegistry({ logger });
  plugin.register(hooks);
  for (const line of lines) hooks.emit(line.hook, line.payload);
  await plugin.shutdown();
  const atif = path.join(dir, 'atif');
  const files = fs.readdirSync(atif).sort().map((name) => ({ name, text: fs.readFileSync(path.join(atif, name), 'utf8') }));
  reports.push({ stream, files, inThread: [...last.values()], mismatches, exports, fallbacks: relay.stats().atifWorkerFallbacks, warnings });
}
console.log(JSON.stringify(reports));
`;
}

function replay(distSrc: string): ReplayReport[] {
  const work = repoTemp('atif-worker');
  const names = fs.readdirSync(STREAMS).filter((name) => name.endsWith('.hooks.jsonl'));
  expect(names.length).toBeGreaterThan(5);
  const streamsFile = path.join(work, 'streams.json');
  fs.writeFileSync(streamsFile, JSON.stringify(names.map((name) => [name.replace('.hooks.jsonl', ''), readStream(path.join(STREAMS, name))])));
  const result = runChild(replayScript(distSrc, streamsFile, path.join(work, 'out')));
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as ReplayReport[];
}

/**
 * Every file the plugin wrote is the in-thread text of its session's last
 * export, and the other way round (but for exports without a step, which
 * are not valid ATIF and not written).
 */
function expectSameFiles(report: ReplayReport): void {
  expect(report.files.length, report.stream).toBeGreaterThan(0);
  expect(report.files.map((file) => file.text).sort(), report.stream).toEqual(report.inThread.filter((text) => !hasNoSteps(text)).sort());
  for (const file of report.files) expect(() => JSON.parse(file.text), file.name).not.toThrow();
}

describe('ATIF trajectories built on the worker thread', () => {
  it('writes byte for byte what the host thread builds from the same events, partial and final writes alike, for every committed stream', () => {
    const reports = replay(DIST);
    for (const report of reports) {
      expect(report.warnings, report.stream).toEqual([]);
      expect(report.fallbacks, report.stream).toBe(0);
      expect(report.exports, report.stream).toBeGreaterThanOrEqual(report.files.length);
      expect(report.mismatches, report.stream).toBe(0);
      expectSameFiles(report);
    }
  });

  it('falls back to the host thread when the worker cannot start: the same files, one warning, every fallback counted', () => {
    // An install that lost the worker file: the copy of dist/ without it.
    const copy = repoTemp('no-worker');
    fs.cpSync(path.join(ROOT, 'dist'), path.join(copy, 'dist'), { recursive: true });
    fs.rmSync(path.join(copy, 'dist', 'src', 'backends', 'memory', 'atif-worker.js'));
    const reports = replay(pathToFileURL(path.join(copy, 'dist', 'src') + path.sep).href);
    const warnings = reports.flatMap((report) => report.warnings);
    // Once per process: the first relay that exports says so, the others stay quiet.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/ATIF trajectory worker is unavailable .*built on the host's thread/);
    for (const report of reports) {
      expect(report.fallbacks, report.stream).toBe(report.exports);
      expect(report.mismatches, report.stream).toBe(0);
      expectSameFiles(report);
    }
  });
});

describe('a Deno host without --allow-read', () => {
  const isDeno = runtime === 'deno';
  if (!isDeno) console.log('[atif-worker] the permission fallback is Deno\'s: tested under Deno only');
  it.skipIf(!isDeno)('falls back to the host thread (Deno refuses to read the worker file), with one warning and the same text', () => {
    // Static imports need no read permission on Deno; a worker file does.
    const result = runChild(
      `import { createMemoryRelay } from ${JSON.stringify(`${DIST}backends/memory/index.js`)};
const warnings = [];
const relay = createMemoryRelay({ atifWorker: true, logger: { warn: (m) => warnings.push(m) } });
const scope = relay.pushScope({ name: 'agent', category: 'agent' });
const real = relay.registerAtifExporter({ scope, sessionId: 's', agentName: 'a', agentVersion: '1' });
const twin = relay.registerAtifExporter({ scope, sessionId: 's', agentName: 'a', agentVersion: '1' });
relay.mark({ name: 'note', parent: scope, data: { n: 1 } });
relay.popScope(scope);
const inThread = twin.exportJsonNow();
console.log(JSON.stringify({ same: (await real.exportJson()) === inThread, warnings, fallbacks: relay.stats().atifWorkerFallbacks }));
await relay.shutdown();
`,
      { denoPermissions: [] },
    );
    expect(result.status, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout) as { same: boolean; warnings: string[]; fallbacks: number };
    expect(out.same).toBe(true);
    expect(out.fallbacks).toBe(1);
    expect(out.warnings).toHaveLength(1);
    expect(out.warnings[0]).toMatch(/trajectory worker is unavailable .*read access/);
  });
});

/** A host on the memory backend with ATIF, ending as `ending` says. */
function hostScript(dir: string, ending: string): string {
  return `
const { createNemoRelayPlugin, HookRegistry, createMemoryRelay } = {
  ...(await import(${JSON.stringify(`${DIST}index.js`)})),
  ...(await import(${JSON.stringify(`${DIST}backends/memory/index.js`)})),
};
const relay = createMemoryRelay({ atifWorker: true });
const plugin = createNemoRelayPlugin({
  backend: relay, env: {}, trajectoryWriteDelayMs: 0,
  settings: { atofFilename: 'hermes-atof.jsonl', atifFilenameTemplate: 'hermes-atif-{session_id}.json', atofEnabled: true, atofOutputDirectory: ${JSON.stringify(dir)}, atifEnabled: true, atifOutputDirectory: ${JSON.stringify(dir)} },
});
const hooks = new HookRegistry();
plugin.register(hooks);
for (const session of ['closed-1', 'closed-2', 'open-1']) {
  hooks.emit('on_session_start', { session_id: session, model: 'gpt-4o' });
  for (let turn = 1; turn <= 3; turn++) {
    const ids = { session_id: session, turn_id: session + ':t' + turn };
    hooks.emit('pre_llm_call', { ...ids, user_message: session + ' question ' + turn });
    hooks.emit('pre_api_request', { ...ids, api_request_id: ids.turn_id + ':api:1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'q' }] } } });
    hooks.emit('post_api_request', { ...ids, api_request_id: ids.turn_id + ':api:1', response: { choices: [{ message: { role: 'assistant', content: session + ' answer ' + turn } }] } });
    hooks.emit('on_session_end', { ...ids, completed: true });
    // The partial write of this turn goes to the worker now.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  if (session !== 'open-1') hooks.emit('on_session_finalize', { session_id: session });
}
${ending}
process.on('exit', () => console.log(JSON.stringify({ fallbacks: relay.stats().atifWorkerFallbacks })));
`;
}

function expectTrajectories(dir: string): void {
  for (const session of ['closed-1', 'closed-2', 'open-1']) {
    const trajectory = JSON.parse(fs.readFileSync(path.join(dir, `hermes-atif-${session}.json`), 'utf8')) as { steps: { message?: unknown }[] };
    // Every turn is in, the last one included.
    expect(trajectory.steps.map((step) => step.message).filter((message) => typeof message === 'string' && message.includes('answer'))).toEqual([
      `${session} answer 1`,
      `${session} answer 2`,
      `${session} answer 3`,
    ]);
  }
}

describe('a host whose trajectories are built on the worker', () => {
  it('ends by itself after shutdown(), with every trajectory written (the idle worker holds no one)', () => {
    const dir = repoTemp('host-shutdown');
    // A worker that kept the process alive would hang this child until the runner kills it.
    const result = runChild(hostScript(dir, 'await plugin.shutdown();'));
    expect(result.signal, result.stderr).toBeNull();
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ fallbacks: 0 });
    expectTrajectories(dir);
  });

  it('ends by itself without shutdown(): the exports in flight finish, the open session is written at exit in-thread', () => {
    const dir = repoTemp('host-no-shutdown');
    const result = runChild(hostScript(dir, ''));
    expect(result.signal, result.stderr).toBeNull();
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ fallbacks: 0 });
    expectTrajectories(dir);
  });
});

describe('the worker from source (.ts)', () => {
  const canRunTs = runtime !== 'node';
  if (!canRunTs) console.log('[atif-worker] Node 20 cannot run the .ts worker file: the source worker is tested on Bun and Deno; on Node the dist/ tests above cover it');
  it.skipIf(!canRunTs)('builds on the worker from the source files too, with the in-thread text', async () => {
    const warnings: string[] = [];
    const relay = createMemoryRelay({ atifWorker: true, logger: { warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) } });
    relay.registerAtofExporter({ outputDirectory: repoTemp('source-worker'), filename: 'events.jsonl', mode: 'overwrite' });
    const scope = relay.pushScope({ name: 'agent', category: 'agent' });
    const real = relay.registerAtifExporter({ scope, sessionId: 's', agentName: 'a', agentVersion: '1' });
    const twin = relay.registerAtifExporter({ scope, sessionId: 's', agentName: 'a', agentVersion: '1' });
    for (let i = 0; i < 3; i++) {
      const llm = relay.llmStart({ name: 'gpt', parent: scope, request: { headers: {}, content: { messages: [{ role: 'user', content: `q${i}` }] } } });
      relay.llmEnd(llm, { response: { choices: [{ message: { role: 'assistant', content: `a${i}` } }] } });
      const inThread = twin.exportJsonNow!();
      expect(await real.exportJson()).toBe(inThread);
    }
    relay.popScope(scope);
    const inThread = twin.exportJsonNow!();
    expect(await real.exportJson()).toBe(inThread);
    expect(relay.stats().atifWorkerFallbacks).toBe(0);
    expect(warnings).toEqual([]);
    await relay.shutdown();
  });
});
