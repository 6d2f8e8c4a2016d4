// The ATIF builder loads with the first trajectory, not with the package
// (src/backends/atif-builder-loader.ts). From `dist/`, in a child process of
// the runtime running the suite: the main entry does not reach it, and a
// trajectory built in the very turn it was opened (before the builder's
// `import()` settled) is still the whole trajectory, through each of the
// synchronous ways in (`require()` of the module, and on Node the CommonJS
// copy while the `import()` is half done).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runScript } from '../native/support.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.join(ROOT, 'dist');
const MEMORY = pathToFileURL(path.join(DIST, 'src/backends/memory/index.js')).href;

/** Every file a module loads at import (its static imports, transitively). */
function staticFiles(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(/^(?:import|export)\b[^;'"]*?(?:from\s*)?["'](\.{1,2}\/[^"']+)["']/gm)) {
      queue.push(path.resolve(path.dirname(file), match[1]!));
    }
  }
  return seen;
}

describe('the ATIF builder, loaded with the first trajectory', () => {
  it('is not among the files the main entry loads at import', () => {
    const builderFiles = staticFiles(path.join(DIST, 'src/formats/atif/builder.js'));
    const mainFiles = staticFiles(path.join(DIST, 'src/index.js'));
    // The builder's own code (its entry and the chunk only it loads) stays out; the code both share is loaded once.
    const own = [...builderFiles].filter((file) => !mainFiles.has(file));
    expect(own.map((file) => path.relative(DIST, file))).toContain('src/formats/atif/builder.js');
    expect(own.length).toBeGreaterThanOrEqual(2);
    expect(fs.existsSync(path.join(DIST, 'src/formats/atif/builder.cjs'))).toBe(true);
  });

  for (const [label, ending] of [
    ['exportJsonNow() in the turn the trajectory opened', ''],
    ['exportJsonNow() once the import settled', 'await new Promise((resolve) => setTimeout(resolve, 50));'],
  ] as const) {
    it(`builds the whole trajectory with ${label}`, () => {
      const script = `
import { createMemoryRelay } from ${JSON.stringify(MEMORY)};
const relay = createMemoryRelay();
const session = relay.pushScope({ name: 'hermes-session-s1', category: 'agent', metadata: { session_id: 's1' } });
const exporter = relay.registerAtifExporter({ scope: session, sessionId: 's1', agentName: 'a', agentVersion: '1', modelName: 'gpt-4o' });
const llm = relay.llmStart({ name: 'openai', parent: session, request: { headers: {}, content: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hello?' }] } }, modelName: 'gpt-4o' });
relay.llmEnd(llm, { response: { choices: [{ message: { role: 'assistant', content: 'hi.' } }] } });
relay.popScope(session);
${ending}
const doc = JSON.parse(exporter.exportJsonNow());
console.log('@@RESULT@@' + JSON.stringify(doc.steps.map((step) => [step.source, step.message])));
`;
      const result = runScript(script);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.result).toEqual([
        ['user', 'hello?'],
        ['agent', 'hi.'],
      ]);
    });
  }
});
