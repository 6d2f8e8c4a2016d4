// Native takes object keys as C strings and throws "nul byte found in
// provided data" for a key with a NUL, dropping the whole event; the memory
// relay keeps such events. Keys are sanitized before they cross (NUL → U+FFFD).
import { describe, expect, it } from 'vitest';
import { available, NativeFixture } from './support.ts';

describe.skipIf(!available)('native payload keys', () => {
  const fixture = new NativeFixture('keys');

  it('keeps an event whose data, metadata or headers have a NUL in a key', async () => {
    const events = await fixture.recorded((r) => {
      const s = r.pushScope({ name: 's', category: 'agent', metadata: { 'm\u0000': 1 } });
      r.mark({ name: 'nul-data', parent: s, data: { 'a\u0000': 1, nested: [{ 'b\u0000c': 2 }] } });
      r.mark({ name: 'nul-metadata', parent: s, metadata: { 'k\u0000': 'v' } });
      const llm = r.llmStart({ name: 'llm', parent: s, request: { headers: { 'x\u0000h': 'v' }, content: new Map([['k\u0000', 1]]) } });
      r.llmEnd(llm, { response: { 'r\u0000': 1 } });
      r.popScope(s);
    });
    const names = events.map((e) => e.name);
    expect(names).toEqual(['s', 'nul-data', 'nul-metadata', 'llm', 'llm', 's']);
    expect(events.find((e) => e.name === 'nul-data')!.data).toEqual({ 'a\uFFFD': 1, nested: [{ 'b\uFFFDc': 2 }] });
    expect(events.find((e) => e.name === 'nul-metadata')!.metadata).toEqual({ 'k\uFFFD': 'v' });
  });

  it('keeps NULs in values and names as they are', async () => {
    const events = await fixture.recorded((r) => {
      r.mark({ name: 'n\u0000', data: { a: 'x\u0000y' } });
    });
    expect(events[0]).toMatchObject({ name: 'n\u0000', data: { a: 'x\u0000y' } });
  });
});
if (!available) console.warn('[native payload keys] skipped: nemo-relay-node cannot load here');
