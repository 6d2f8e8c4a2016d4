// Hostile payloads through every contract method of the native backend, in
// a child process: a BigInt or a cycle reaching nemo-relay-node kills the
// process (SIGABRT / SIGSEGV), so a crash must not take the test runner down.
// The child runs the built adapter (dist/, built by the suite's global
// setup) with whatever runtime runs the tests (Node 20 cannot run .ts).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { validateAtofEvents } from '../../src/formats/atof/validate.ts';
import { available, builtAdapter as adapter, readAtof, runScript, tempDir } from '../native/support.ts';

const SCRIPT = (outputDirectory: string) => `
import { loadNativeRelay } from ${JSON.stringify(adapter)};

const errors = [];
const attempt = async (label, fn) => {
  try { await fn(); } catch (error) { errors.push(label + ': ' + (error && error.name) ); }
};

function hostile() {
  const cycle = { name: 'cycle' }; cycle.self = cycle; cycle.list = [cycle];
  let deep = {}; const deepRoot = deep;
  for (let i = 0; i < 10000; i++) { deep.next = {}; deep = deep.next; }
  let deepArray = []; const deepArrayRoot = deepArray;
  for (let i = 0; i < 10000; i++) { const next = []; deepArray.push(next); deepArray = next; }
  const throwingProxy = new Proxy({}, {
    get() { throw new Error('proxy get'); }, ownKeys() { throw new Error('proxy keys'); },
    getPrototypeOf() { throw new Error('proxy proto'); }, has() { throw new Error('proxy has'); },
    getOwnPropertyDescriptor() { throw new Error('proxy descriptor'); },
  });
  const revocable = Proxy.revocable({}, {}); revocable.revoke();
  return {
    cycle, big: 10n ** 30n, fn() { return 1; }, arrow: () => 2, sym: Symbol('s'), [Symbol('key')]: 1,
    date: new Date(0), badDate: new Date(NaN), map: new Map([[1, { n: 1n }], [{ k: 1 }, cycle]]), set: new Set([1, 2n, cycle]),
    typed: new Uint8Array([1, 2, 3]), floats: new Float64Array([NaN, 1.5]), bigTyped: new BigInt64Array([1n, -2n]),
    buffer: new ArrayBuffer(4), view: new DataView(new ArrayBuffer(2)),
    nan: NaN, inf: Infinity, negInf: -Infinity, holes: [1, undefined, , 3, () => 1, Symbol('x')],
    // Text, not base64 (the space): the copy would leave a run of base64 characters out as media.
    deep: deepRoot, deepArray: deepArrayRoot, huge: 'x '.repeat(5 * 512 * 1024),
    getter: { get boom() { throw new Error('getter'); }, ok: 1 },
    toJSONThrows: { toJSON() { throw new Error('toJSON'); } },
    proxy: throwingProxy, revoked: revocable.proxy,
    error: Object.assign(new Error('e', { cause: cycle }), { code: 5n }),
    proto: JSON.parse('{"__proto__": {"polluted": true}}'),
  };
}

const h = hostile();
const proxy = h.proxy;
const values = [h, h.cycle, h.big, h.fn, h.sym, h.deep, h.huge, h.proxy, h.revoked, h.getter, undefined, NaN, h.map];

const relay = loadNativeRelay({ logger: { debug() {}, info() {}, warn() {}, error() {} } });
const sink = relay.registerAtofExporter({ outputDirectory: ${JSON.stringify(outputDirectory)}, filename: 'events.jsonl', mode: 'overwrite' });
const session = relay.pushScope({ name: 'session', category: 'agent', input: h, metadata: h, attributes: [h.sym, 'parallel'] });
relay.registerAtifExporter({ scope: session, sessionId: h.big, agentName: proxy, agentVersion: h.cycle, modelName: h.fn });
const scopes = [];
for (const [i, value] of values.entries()) {
  const name = 'scope-' + i;
  scopes.push(name);
  const scope = relay.pushScope({ name, category: 'function', parent: session, input: value, metadata: value, timestampUs: i % 2 ? value : undefined });
  relay.mark({ name: 'mark-' + i, parent: scope, data: value, metadata: value, timestampUs: value });
  const llm = relay.llmStart({ name: 'llm-' + i, parent: scope, request: { headers: value, content: value }, metadata: value, modelName: value });
  relay.llmEnd(llm, { response: value, metadata: value, timestampUs: value });
  const tool = relay.toolStart({ name: 'tool-' + i, parent: scope, args: value, metadata: value, toolCallId: value });
  relay.toolEnd(tool, { result: value, annotation: value, metadata: value, status: i % 2 ? 'error' : 'ok' });
  // A Proxy whose traps throw cannot be returned from any async function (the
  // thenable check reads .then), so for those only survival is checked.
  const awaitable = value !== proxy && value !== h.revoked;
  const same = (out) => out === value || (Number.isNaN(out) && Number.isNaN(value));
  await attempt('executeLlm ' + i, async () => {
    const out = relay.executeLlm({ name: 'managed-llm-' + i, parent: scope, request: { headers: value, content: value }, metadata: value }, () => value);
    if (!awaitable) return out.catch(() => {});
    if (!same(await out)) throw new Error('executeLlm changed the result');
  });
  await attempt('executeTool ' + i, async () => {
    const out = relay.executeTool({ name: 'managed-tool-' + i, parent: scope, args: value, metadata: value, toolCallId: value }, () => value);
    if (!awaitable) return out.catch(() => {});
    if (!same(await out)) throw new Error('executeTool changed the result');
  });
  try {
    await relay.executeTool({ name: 'throwing-tool-' + i, parent: scope, args: value }, () => { throw value; });
    errors.push('executeTool ' + i + ': a throwing call resolved');
  } catch (error) {
    if (error !== value && !(Number.isNaN(error) && Number.isNaN(value))) errors.push('executeTool ' + i + ': rejected with another value');
  }
  relay.popScope(scope, { output: value, metadata: value, timestampUs: value });
}
const statsBeforeOptions = relay.stats();
// Hostile option objects and handles.
relay.pushScope(proxy);
relay.popScope(proxy, proxy);
relay.mark(proxy);
relay.llmEnd(relay.llmStart(proxy), proxy);
relay.toolEnd(relay.toolStart(proxy), proxy);
relay.popScope(h.revoked);
await attempt('executeLlm proxy options', () => relay.executeLlm(proxy, () => 1));
await attempt('executeTool proxy options', () => relay.executeTool(proxy, () => 1));
await attempt('registerAtifExporter proxy', () => relay.registerAtifExporter(proxy).exportJson());
const expectedRejections = [];
for (const [label, fn] of [
  ['registerAtofExporter', () => relay.registerAtofExporter(proxy)],
  ['initializePluginConfig', () => relay.initializePluginConfig(proxy, proxy)],
  ['activateDynamicPlugins', () => relay.activateDynamicPlugins(h, [proxy, h], proxy)],
]) {
  try { await fn(); } catch (error) { expectedRejections.push(label + ': ' + error.name); }
}
// The hostile object converts to a document native accepts (it ignores unknown top-level keys).
await attempt('initializePluginConfig hostile document', async () => {
  const activation = await relay.initializePluginConfig(h);
  await activation.close();
});
relay.popScope(session, { output: h, metadata: h });
await relay.flush();
await sink.close();
await relay.shutdown();
await relay.shutdown();
console.log('@@RESULT@@' + JSON.stringify({ scopes, errors, expectedRejections, statsBeforeOptions, stats: relay.stats() }));
`;

describe.skipIf(!available)('native backend with hostile payloads', () => {
  it('survives every hostile value through every contract method and still writes every scope', () => {
    expect(fs.existsSync(fileURLToPath(adapter)), 'dist/ is built by the global setup').toBe(true);
    const dir = tempDir('hostile');
    const child = runScript(SCRIPT(dir));
    const stderr = child.stderr.split('\n').slice(0, 20).join('\n');
    expect({ status: child.status, signal: child.signal }, stderr).toEqual({ status: 0, signal: null });
    expect(child.result, child.stdout.slice(0, 2000)).toBeDefined();
    const result = child.result as {
      scopes: string[];
      errors: string[];
      expectedRejections: string[];
      statsBeforeOptions: Record<string, number>;
      stats: Record<string, number>;
    };
    expect(result.errors).toEqual([]);
    expect(result.expectedRejections).toEqual([
      'registerAtofExporter: AtofExporterError',
      'initializePluginConfig: InvalidPluginConfigError',
      'activateDynamicPlugins: DynamicPluginError',
    ]);
    // Nothing native refused: every hostile payload was converted before it crossed.
    expect(result.statsBeforeOptions).toMatchObject({ errors: 0, dropped: 0 });
    // Only calls whose options object itself cannot be read are lost:
    // pushScope, mark, llmStart, toolStart (1 each) and the two managed calls (2 each).
    expect(result.stats.dropped).toBe(8);
    expect(stderr).not.toMatch(/nemo_relay: JS event subscriber/);

    const events = readAtof(path.join(dir, 'events.jsonl'));
    expect(validateAtofEvents(events)).toEqual([]);
    const scopes = new Set(events.filter((e) => e.kind === 'scope' && e.category === 'function').map((e) => `${e.name}:${e.scope_category}`));
    for (const name of ['session', ...result.scopes]) {
      const category = name === 'session' ? 'agent' : 'function';
      const recorded = events.filter((e) => e.name === name && e.category === category).map((e) => e.scope_category);
      expect(recorded, name).toEqual(['start', 'end']);
    }
    expect(scopes.size).toBe(result.scopes.length * 2);
    const huge = events.find((e) => e.name === 'mark-6');
    expect(typeof huge?.data === 'string' && huge.data.length).toBe(5 * 1024 * 1024);
    const first = events.find((e) => e.name === 'scope-0' && e.scope_category === 'start');
    expect(first?.data).toMatchObject({ big: '1000000000000000000000000000000', cycle: { self: '[Circular]' }, nan: null, holes: [1, null, null, 3, null, null] });
  });
});
