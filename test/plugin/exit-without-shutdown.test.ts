// A host that never calls shutdown() (a crash handler's process.exit(), or
// a script that simply ends) still gets its files on the memory backend:
// the buffered ATOF lines and each session's trajectory, including one
// whose partial write was still waiting out trajectoryWriteDelayMs.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readValidAtif, readValidAtof } from '../contract/files.ts';
import { runScript } from '../native/support.ts';
import { tempDir } from '../contract/backends.ts';
import { writeObservabilityToml } from '../support/plugins-toml.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ENTRY = pathToFileURL(path.join(ROOT, 'dist', 'src', 'index.js')).href;

function child(dir: string, ending: string): string {
  return `
import { createNemoRelayPlugin, HookRegistry } from ${JSON.stringify(ENTRY)};
const plugin = createNemoRelayPlugin({
  backend: 'memory',
  env: {},
  settings: { atofFilename: 'hermes-atof.jsonl', atifFilenameTemplate: 'hermes-atif-{session_id}.json', atofEnabled: true, atofOutputDirectory: ${JSON.stringify(dir)}, atifEnabled: true, atifOutputDirectory: ${JSON.stringify(dir)} },
});
const hooks = new HookRegistry();
plugin.register(hooks);
await plugin.ready;
const ids = { session_id: 'open-1', turn_id: 't1' };
hooks.emit('on_session_start', { session_id: 'open-1', model: 'gpt-4o' });
hooks.emit('pre_llm_call', { ...ids, user_message: 'hello?' });
hooks.emit('pre_api_request', { ...ids, api_request_id: 't1:api:1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'hello?' }] } } });
hooks.emit('post_api_request', { ...ids, api_request_id: 't1:api:1', response: { choices: [{ message: { role: 'assistant', content: 'hi.' } }] } });
hooks.emit('on_session_end', { ...ids, completed: true });
hooks.emit('on_session_start', { session_id: 'closed-1' });
hooks.emit('pre_api_request', { session_id: 'closed-1', api_request_id: 'c:api:1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'and you?' }] } } });
hooks.emit('post_api_request', { session_id: 'closed-1', api_request_id: 'c:api:1', response: { choices: [{ message: { role: 'assistant', content: 'fine.' } }] } });
hooks.emit('on_session_finalize', { session_id: 'closed-1' });
${ending}
`;
}

describe('exit without shutdown() on the memory backend', () => {
  for (const [label, ending] of [
    ['process.exit(0) right away', 'process.exit(0);'],
    ['a natural end', ''],
  ] as const) {
    it(`writes the ATOF lines and every session's trajectory on ${label}`, () => {
      const dir = tempDir('exit-no-shutdown');
      const result = runScript(child(dir, ending));
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      const { events } = readValidAtof(path.join(dir, 'hermes-atof.jsonl'));
      expect(events.filter((e) => e.category === 'llm').map((e) => e.scope_category)).toEqual(['start', 'end', 'start', 'end']);
      const open = readValidAtif(path.join(dir, 'hermes-atif-open-1.json'));
      expect(open.steps.map((step) => [step.source, step.message])).toEqual([
        ['user', 'hello?'],
        ['agent', 'hi.'],
      ]);
      readValidAtif(path.join(dir, 'hermes-atif-closed-1.json'));
    });
  }
});

// A user trial on native: a host that emitted its hooks and called
// process.exit() before the backend had loaded got no file and no word. The
// hooks queued at start-up are recorded into the in-memory relay at exit,
// whose environment outputs a plugins.toml turns off: what the document's
// outputs miss is now said, with its number (written + said = emitted).
describe('process.exit() before the native backend loaded, with a plugins.toml', () => {
  it('says on stderr how many hooks reach none of the document\'s outputs', () => {
    const dir = tempDir('exit-before-load');
    const toml = writeObservabilityToml(dir, { atofDir: dir, atifDir: dir });
    const result = runScript(`
import { createNemoRelayPlugin, HookRegistry } from ${JSON.stringify(ENTRY)};
const plugin = createNemoRelayPlugin({ backend: 'native', env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: ${JSON.stringify(toml)} } });
const hooks = new HookRegistry();
plugin.register(hooks);
const ids = { session_id: 'early-1', turn_id: 't1' };
hooks.emit('on_session_start', { session_id: 'early-1', model: 'gpt-4o' });
hooks.emit('pre_llm_call', { ...ids, user_message: 'hello?' });
hooks.emit('post_llm_call', { ...ids, assistant_response: 'hi' });
hooks.emit('on_session_end', { ...ids, completed: true });
hooks.emit('on_session_finalize', { session_id: 'early-1' });
// The backend loads asynchronously: nothing of it has run yet.
process.exit(0);
`);
    expect(result.status).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(['plugins.toml']);
    expect(result.stderr).toContain(`the process exited before the backend loaded: the 5 hooks queued at start-up reach none of the outputs of plugins.toml (${toml})`);
  });
});
