// Key order of every written object: native writes keys in code-point
// order (serde_json's sorted maps), JS's `<` puts a surrogate pair
// (U+10000 and up) before U+E000..U+FFFF. The memory relay sorted with `<`
// in its copies (payloads, end metadata, recorded headers) until every
// sort used the one rule, `compareKeys` (src/shared/json.ts). Checked on
// the byte path (ATOF alone) and the object path (ATIF on too).
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RelayBackend } from '../../src/relay/contract.ts';
import { createMemoryRelay } from '../../src/backends/memory/index.ts';
import { compareKeys } from '../../src/shared/json.ts';
import { loadNativeRelay } from '../../native/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { nativeAvailable, nativeLoadError, tempDir } from '../contract/backends.ts';

const HIGH = { '\uE000': 1, '\u{1F600}': 2, b: { '\uFF01': 1, '\u{10000}': 2 } };

/** Every object's keys in the order the file has them, by event. */
function keyOrders(line: string): string[][] {
  const orders: string[][] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      orders.push(Object.keys(value));
      Object.values(value).forEach(walk);
    }
  };
  walk(JSON.parse(line));
  return orders;
}

async function written(backend: RelayBackend, withAtif: boolean): Promise<string[][][]> {
  const dir = tempDir(`key-order-${backend.kind}`);
  const sink = backend.registerAtofExporter({ outputDirectory: dir, filename: 'events.jsonl', mode: 'overwrite' });
  const session = backend.pushScope({ name: 'session', category: 'agent', metadata: { session_id: 'keys' } });
  const atif = withAtif ? backend.registerAtifExporter({ scope: session, sessionId: 'keys', agentName: 'a', agentVersion: '1' }) : undefined;
  try {
    backend.mark({ name: 'mark', parent: session, data: HIGH, metadata: HIGH });
    const llm = backend.llmStart({ name: 'llm', parent: session, request: { headers: { '\uE000': 'a', '\u{1F600}': 'b' }, content: HIGH }, metadata: HIGH, modelName: 'm' });
    backend.llmEnd(llm, { response: HIGH, metadata: { '\u{1F601}': 3 } });
    const tool = backend.toolStart({ name: 'tool', parent: session, args: HIGH, metadata: HIGH, toolCallId: 'c' });
    backend.toolEnd(tool, { result: HIGH, metadata: { '\u{1F601}': 3 } });
    backend.popScope(session);
    await backend.flush();
    await sink.flush();
    return fs.readFileSync(sink.path, 'utf8').split('\n').filter(Boolean).map(keyOrders);
  } finally {
    atif?.deregister();
    await backend.shutdown?.();
  }
}

describe('compareKeys', () => {
  it('orders by code point: U+E000..U+FFFF before a surrogate pair, unlike `<`', () => {
    expect(['\u{1F600}', '\uE000', 'b', '\uFF01', '\u{10000}'].sort(compareKeys)).toEqual(['b', '\uE000', '\uFF01', '\u{10000}', '\u{1F600}']);
    expect(['\u{1F600}', '\uE000'].sort()).toEqual(['\u{1F600}', '\uE000']);
  });
});

const title = nativeAvailable ? 'key order: memory writes keys in native\'s order' : `key order: skipped, native backend cannot load here (${nativeLoadError})`;
describe.skipIf(!nativeAvailable)(title, () => {
  it.each([
    ['ATOF alone (the byte path)', false],
    ['ATOF with ATIF (the object path)', true],
  ])('%s', async (_label, withAtif) => {
    const native = await written(loadNativeRelay({ logger: silentLogger }), false);
    const memory = await written(createMemoryRelay({ logger: silentLogger }), withAtif);
    expect(memory).toEqual(native);
  });
});
