// An LLM call that failed (status 'error', as the plugin ends a call closed
// by api_request_error) is an error span on the memory relay. Native cannot
// say so on a manual LLM end (it forces OK): a documented difference.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryRelay } from '../../../src/backends/memory/index.ts';
import { silentLogger } from '../../../src/shared/logger.ts';

async function ends(metadata: unknown, status?: 'ok' | 'error') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-llm-error-'));
  const relay = createMemoryRelay({ logger: silentLogger });
  relay.registerAtofExporter({ outputDirectory: dir, filename: 'e.jsonl', mode: 'overwrite' });
  const s = relay.pushScope({ name: 's', category: 'agent' });
  const llm = relay.llmStart({ name: 'llm', parent: s, request: { headers: {}, content: {} } });
  relay.llmEnd(llm, { response: { error: { type: 'rate_limit_error' } }, metadata, ...(status ? { status } : {}) });
  relay.popScope(s);
  await relay.shutdown();
  const events = fs.readFileSync(path.join(dir, 'e.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { name: string; scope_category?: string; metadata: Record<string, unknown> });
  return events.find((e) => e.name === 'llm' && e.scope_category === 'end')!.metadata;
}

describe('memory relay: failed LLM calls', () => {
  for (const [label, metadata] of [['object metadata', { 'error.type': 'rate_limit_error' }], ['no metadata', undefined]] as const) {
    it(`records otel.status_code ERROR for status 'error' (${label})`, async () => {
      expect((await ends(metadata, 'error'))['otel.status_code']).toBe('ERROR');
    });
  }

  it('keeps native\'s forced OK for an LLM end without status', async () => {
    expect((await ends({ 'error.type': 'x', 'otel.status_code': 'ERROR' }))['otel.status_code']).toBe('OK');
  });
});
