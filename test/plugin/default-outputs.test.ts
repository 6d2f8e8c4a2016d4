// First contact: a plugin created with nothing configured records ATOF
// events and ATIF trajectories under ./nemo-relay-output/, named after the
// host, says where once, and writes only files that validate. Each case runs
// a host in a child process of its own, in a temporary working directory
// with the host's package.json, as a newcomer's program would run (the
// suite turns the default outputs off; these children turn them back on).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dist, runChild } from '../support/child.ts';
import { tempDir } from '../contract/backends.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { parseAtofJsonl, validateAtofEvents } from '../../src/formats/atof/validate.ts';
import { loadSettings } from '../../src/plugin/config/settings.ts';

const HOST = { name: 'my-agent', fileStem: 'my-agent', version: '1.2.3' };

/** A host folder with its package.json, and a script that runs one session there. */
function host(body: string, options: { env?: Record<string, string | undefined>; packageJson?: object | null; prepare?: (cwd: string) => void } = {}) {
  const cwd = tempDir('first-contact');
  if (options.packageJson !== null) fs.writeFileSync(path.join(cwd, 'package.json'), JSON.stringify(options.packageJson ?? { name: '@acme/my-agent', version: '1.2.3' }));
  options.prepare?.(cwd);
  const script = `
import { createNemoRelayPlugin, HookRegistry } from ${dist('src/index.js')};
const hooks = new HookRegistry();
${body}
`;
  const result = runChild(script, { cwd, env: { NEMO_RELAY_HOOKS_OUTPUTS: undefined, ...options.env } });
  return { cwd, ...result };
}

const SESSION_WITH_A_MODEL_CALL = `
const ids = { session_id: 's1', task_id: 'task', turn_id: 't1' };
hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o' });
hooks.emit('pre_llm_call', { ...ids, user_message: 'What time is it?' });
hooks.emit('pre_api_request', { ...ids, api_request_id: 't1:api:1', provider: 'openai', model: 'gpt-4o', request: { body: { messages: [{ role: 'user', content: 'What time is it?' }] } } });
hooks.emit('post_api_request', { ...ids, api_request_id: 't1:api:1', response: { choices: [{ message: { role: 'assistant', content: 'Noon.' } }] }, usage: { prompt_tokens: 12, completion_tokens: 3 } });
hooks.emit('post_llm_call', { ...ids, assistant_response: 'Noon.' });
hooks.emit('on_session_end', { ...ids, completed: true });
hooks.emit('on_session_finalize', { session_id: 's1' });
`;

function files(folder: string): string[] {
  return fs.existsSync(folder) ? fs.readdirSync(folder).sort() : [];
}

describe('a plugin created with nothing configured', () => {
  it('records ATOF and ATIF under ./nemo-relay-output, named after the host, says where once, and both files validate', () => {
    const run = host(`
const plugin = createNemoRelayPlugin();
plugin.register(hooks);
${SESSION_WITH_A_MODEL_CALL}
await plugin.shutdown();
console.log(JSON.stringify(plugin.status().outputs.map((o) => [o.kind, path(o.path)])));
function path(p) { return p.split('/').slice(-2).join('/'); }
`);
    expect(run.status, run.stderr).toBe(0);
    const folder = path.join(run.cwd, 'nemo-relay-output');
    expect(files(folder)).toEqual(['acme-my-agent-atif-s1.json', 'acme-my-agent-atof.jsonl']);
    const notices = run.stderr.split('\n').filter((line) => line.includes('recording to'));
    expect(notices).toEqual([
      `[nemo-relay-hooks] recording to ${fs.realpathSync(folder)}: ATOF events in acme-my-agent-atof.jsonl, one ATIF trajectory per session in acme-my-agent-atif-<session id>.json (no file output was configured, so these are the defaults; NEMO_RELAY_HOOKS_OUTPUTS=off turns them off)`,
    ]);
    const trajectory = JSON.parse(fs.readFileSync(path.join(folder, 'acme-my-agent-atif-s1.json'), 'utf8'));
    expect(validateAtif(trajectory).errors).toEqual([]);
    expect(trajectory.agent).toMatchObject({ name: '@acme/my-agent', version: '1.2.3', model_name: 'gpt-4o' });
    expect(trajectory.steps.map((step: { source: string }) => step.source)).toEqual(['user', 'agent']);
    const atof = parseAtofJsonl(fs.readFileSync(path.join(folder, 'acme-my-agent-atof.jsonl'), 'utf8'));
    expect(atof.errors).toEqual([]);
    expect(validateAtofEvents(atof.events).errors).toEqual([]);
    expect(atof.events.length).toBeGreaterThan(4);
  });

  it('with only OTLP configured, says the default files are there because no file output was configured (not that nothing was)', () => {
    const run = host(
      `
const plugin = createNemoRelayPlugin();
plugin.register(hooks);
${SESSION_WITH_A_MODEL_CALL}
await plugin.shutdown({ timeoutMs: 5_000 });
`,
      { env: { NEMO_RELAY_HOOKS_OTLP_ENABLED: '1', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' } },
    );
    // The notice comes with the OTLP document's activation, which on native follows the backend's load: on a
    // busy machine the two outlasted a 500 ms budget (the hooks then dropped, counted, and rightly no notice;
    // docs/known-limits.md). The default budget fits them; the refused port ends the export at once.
    const notices = run.stderr.split('\n').filter((line) => line.includes('recording to'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain('(no file output was configured, so these are the defaults; NEMO_RELAY_HOOKS_OUTPUTS=off turns them off)');
  });

  it('says nothing of recording when the OTLP activation finishes only after shutdown() gave up on it (its hooks were dropped, counted)', () => {
    // The activation is held past the budget, as native's can take on a busy machine.
    const run = host(
      `
import { createMemoryRelay } from ${dist('src/backends/memory/index.js')};
const relay = createMemoryRelay();
const backend = new Proxy(relay, {
  get(target, key) {
    if (key === 'initializePluginConfig') return async (...args) => { await new Promise((r) => setTimeout(r, 600)); return target.initializePluginConfig(...args); };
    const value = Reflect.get(target, key, target);
    return typeof value === 'function' ? value.bind(target) : value;
  },
});
const plugin = createNemoRelayPlugin({ backend });
plugin.register(hooks);
${SESSION_WITH_A_MODEL_CALL}
await plugin.shutdown({ timeoutMs: 200 });
console.error('@@shutdown returned, dropped ' + plugin.status().counters.dropped);
await new Promise((r) => setTimeout(r, 1_000));
console.log('@@active ' + plugin.status().pluginConfig.active);
`,
      { env: { NEMO_RELAY_HOOKS_OTLP_ENABLED: '1', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' } },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain('@@shutdown returned, dropped 7');
    expect(run.stderr).toContain("shutdown's budget ran out with 7 hooks from start-up still queued");
    expect(run.stderr).not.toContain('recording to');
    expect(run.stdout).toContain('@@active false');
  });

  it('writes no trajectory for a session without a model call (it would not be valid ATIF) and says why in status()', () => {
    const run = host(`
const plugin = createNemoRelayPlugin();
plugin.register(hooks);
hooks.emit('on_session_start', { session_id: 'quiet' });
hooks.emit('pre_llm_call', { session_id: 'quiet', turn_id: 't1', user_message: 'hello?' });
hooks.emit('on_session_end', { session_id: 'quiet', turn_id: 't1', completed: true });
hooks.emit('on_session_finalize', { session_id: 'quiet' });
await plugin.shutdown();
console.log('@@' + JSON.stringify(plugin.status().outputs.filter((o) => o.kind === 'atif')));
`);
    expect(run.status, run.stderr).toBe(0);
    expect(files(path.join(run.cwd, 'nemo-relay-output'))).toEqual(['acme-my-agent-atof.jsonl']);
    const [atif] = JSON.parse(run.stdout.split('@@')[1]!) as { path: string; bytes: number; skipped?: string }[];
    expect(atif).toMatchObject({ bytes: 0, skipped: expect.stringContaining('session quiet recorded no step (no model call), and ATIF needs at least one') });
  });

  it('with a file name template without {session_id}, says the name it writes (the template with -<session id> inserted), not the template', () => {
    const run = host(`const plugin = createNemoRelayPlugin(); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();`, {
      env: { NEMO_RELAY_HOOKS_ATIF_FILENAME_TEMPLATE: 'traj.json' },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(files(path.join(run.cwd, 'nemo-relay-output'))).toEqual(['acme-my-agent-atof.jsonl', 'traj-s1.json']);
    const notice = run.stderr.split('\n').find((line) => line.includes('recording to'));
    expect(notice).toContain('one ATIF trajectory per session in traj-<session id>.json');
    // A file name was configured: the notice does not say none was, only that the folder is the default.
    expect(notice).not.toContain('no file output was configured');
    expect(notice).toContain('(no output folder was configured, so this is the default one; NEMO_RELAY_HOOKS_OUTPUTS=off turns these outputs off)');
  });

  it('with only ATIF configured (the adapters pages set atifEnabled and a folder), says the ATOF file it still writes by default is there', () => {
    const run = host(`
const plugin = createNemoRelayPlugin({ settings: { atifEnabled: true, atifOutputDirectory: 'trajectories' } });
plugin.register(hooks);
${SESSION_WITH_A_MODEL_CALL}
await plugin.shutdown();
`);
    expect(run.status, run.stderr).toBe(0);
    const folder = path.join(run.cwd, 'nemo-relay-output');
    expect(files(path.join(run.cwd, 'trajectories'))).toEqual(['acme-my-agent-atif-s1.json']);
    expect(files(folder)).toEqual(['acme-my-agent-atof.jsonl']);
    const notices = run.stderr.split('\n').filter((line) => line.includes('recording to'));
    expect(notices).toEqual([
      `[nemo-relay-hooks] recording to ${fs.realpathSync(folder)}: ATOF events in acme-my-agent-atof.jsonl (only ATIF was configured, so ATOF records here by default; NEMO_RELAY_HOOKS_OUTPUTS=off turns it off)`,
    ]);
  });

  it('with only ATOF enabled from the environment (as the OTLP page sets it), says the trajectories it still writes by default are there', () => {
    const run = host(`const plugin = createNemoRelayPlugin(); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();`, {
      env: { NEMO_RELAY_HOOKS_ATOF_ENABLED: '1' },
    });
    expect(run.status, run.stderr).toBe(0);
    const folder = path.join(run.cwd, 'nemo-relay-output');
    expect(files(folder)).toEqual(['acme-my-agent-atif-s1.json', 'acme-my-agent-atof.jsonl']);
    const notices = run.stderr.split('\n').filter((line) => line.includes('recording to'));
    expect(notices).toEqual([
      `[nemo-relay-hooks] recording to ${fs.realpathSync(folder)}: one ATIF trajectory per session in acme-my-agent-atif-<session id>.json (only ATOF was configured, so ATIF records here by default; NEMO_RELAY_HOOKS_OUTPUTS=off turns it off)`,
    ]);
  });

  it('says nothing of recording when both file outputs are configured', () => {
    const run = host(`const plugin = createNemoRelayPlugin({ settings: { atifEnabled: true, atifOutputDirectory: 'trajectories', atofEnabled: false } }); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();`);
    expect(run.status, run.stderr).toBe(0);
    expect(files(path.join(run.cwd, 'nemo-relay-output'))).toEqual([]);
    expect(run.stderr).not.toContain('recording to');
  });

  it('names files after the script when the host has no package.json', () => {
    const run = host(`const plugin = createNemoRelayPlugin(); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();`, { packageJson: null });
    expect(run.status, run.stderr).toBe(0);
    // The child's script is script.mjs (support/child.ts).
    expect(files(path.join(run.cwd, 'nemo-relay-output'))).toEqual(['script-atif-s1.json', 'script-atof.jsonl']);
  });

  it('records nothing and says nothing with NEMO_RELAY_HOOKS_OUTPUTS=off, even when the host passes its own env', () => {
    const run = host(`const plugin = createNemoRelayPlugin({ env: {} }); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();\nconsole.log('@@' + plugin.status().outputs.length);`, {
      env: { NEMO_RELAY_HOOKS_OUTPUTS: 'off' },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(path.join(run.cwd, 'nemo-relay-output'))).toBe(false);
    expect(run.stdout).toContain('@@0');
    expect(run.stderr).not.toContain('recording to');
  });

  it('does not say it records where the folder cannot be written: the error it reported stands alone', () => {
    const run = host(`const plugin = createNemoRelayPlugin(); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();`, {
      // A file where the default folder would go: nothing can be written under it.
      prepare: (cwd) => fs.writeFileSync(path.join(cwd, 'nemo-relay-output'), 'not a folder'),
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/ATOF file .*nemo-relay-output.*acme-my-agent-atof\.jsonl/);
    expect(run.stderr).not.toContain('recording to');
  });

  it('configured through HERMES_NEMO_RELAY_* variables, behaves exactly as the Hermes plugin: only what they enable, with its names', () => {
    const run = host(`const plugin = createNemoRelayPlugin(); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();`, {
      env: { HERMES_NEMO_RELAY_ATOF_ENABLED: '1' },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(fs.existsSync(path.join(run.cwd, 'nemo-relay-output'))).toBe(false);
    expect(fs.readdirSync(run.cwd).sort()).toEqual(['hermes-atof.jsonl', 'package.json']);
    expect(run.stderr).not.toContain('recording to');
  });

  it('with only ATIF enabled under a Hermes name, writes nothing and warns once on the console, naming the fix', () => {
    const run = host(`const plugin = createNemoRelayPlugin(); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();`, {
      env: { HERMES_NEMO_RELAY_ATIF_ENABLED: '1' },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(fs.readdirSync(run.cwd)).toEqual(['package.json']);
    const warnings = run.stderr.split('\n').filter((line) => line.includes('settings.atif_without_output_directory'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('fix: set HERMES_NEMO_RELAY_ATIF_OUTPUT_DIRECTORY');
  });
});

/** A plugins.toml recording ATOF to events/; `atif` is appended as its [components.config.atif] table. */
function pluginsTomlIn(cwd: string, atif: string): string {
  const file = path.join(cwd, 'plugins.toml');
  fs.writeFileSync(
    file,
    `version = 1\n\n[[components]]\nkind = "observability"\n\n[components.config]\nversion = 4\n\n[components.config.atof]\nenabled = true\n\n[[components.config.atof.sinks]]\ntype = "file"\noutput_directory = "events"\nfilename = "events.jsonl"\n\n[components.config.atif]\n${atif}`,
  );
  return file;
}

// What a user is told about a plugins.toml must be what happens to the files, on both backends (auto is native on Node when it loads).
describe.each(['memory', 'auto'])('a plugins.toml a user got slightly wrong (backend %s)', (backend) => {
  it('whose [components.config.atif] is enabled without an output_directory: the warning names the working directory its trajectories land in, and they are there', () => {
    const run = host(`const plugin = createNemoRelayPlugin({ backend: ${JSON.stringify(backend)} }); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();`, {
      env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: 'plugins.toml', NEMO_RELAY_HOOKS_ATIF_ENABLED: '1', NEMO_RELAY_HOOKS_ATIF_OUTPUT_DIRECTORY: 'env-atif' },
      prepare: (cwd) => pluginsTomlIn(cwd, 'enabled = true\n'),
    });
    expect(run.status, run.stderr).toBe(0);
    const written = files(run.cwd).filter((name) => name.endsWith('.json') && name !== 'package.json');
    expect(written, run.stderr).toHaveLength(1);
    expect(validateAtif(JSON.parse(fs.readFileSync(path.join(run.cwd, written[0]!), 'utf8')))).toEqual([]);
    expect(files(path.join(run.cwd, 'events'))).toEqual(['events.jsonl']);
    // The document owns ATIF: the environment's trajectory is not written beside it.
    expect(fs.existsSync(path.join(run.cwd, 'env-atif'))).toBe(false);
    const warning = run.stderr.split('\n').filter((line) => line.includes('[components.config.atif]'));
    expect(warning).toHaveLength(1);
    expect(warning[0]).toContain(fs.realpathSync(run.cwd));
    expect(warning[0]).not.toContain('writes no ATIF');
  });

  it('whose OTLP endpoint reads its header from a variable that is not set (the Collector example without OTLP_AUTH): that endpoint is skipped, named, and ATOF records', () => {
    const run = host(`const plugin = createNemoRelayPlugin({ backend: ${JSON.stringify(backend)} }); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown({ timeoutMs: 2000 });\nconsole.log(JSON.stringify(plugin.status().pluginConfig.active));`, {
      env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: 'plugins.toml', OTLP_AUTH: undefined },
      prepare: (cwd) =>
        fs.appendFileSync(
          pluginsTomlIn(cwd, 'enabled = false\n'),
          '\n[components.config.opentelemetry]\nenabled = true\n\n[[components.config.opentelemetry.endpoints]]\ntype = "gen_ai"\nendpoint = "http://127.0.0.1:9"\nheader_env = { authorization = "OTLP_AUTH" }\n\n[components.config.opentelemetry.logs]\nenabled = true\n',
        ),
    });
    expect(run.status, run.stderr).toBe(0);
    const atof = parseAtofJsonl(fs.readFileSync(path.join(run.cwd, 'events', 'events.jsonl'), 'utf8'));
    expect(validateAtofEvents(atof.events)).toEqual([]);
    expect(atof.events.filter((event) => event.category === 'llm')).toHaveLength(2);
    expect(run.stderr).not.toContain('rejected');
    const warning = run.stderr.split('\n').filter((line) => line.includes('observability.otel_endpoint_skipped'));
    expect(warning).toHaveLength(1);
    expect(warning[0]).toContain('set OTLP_AUTH');
  });

  it('whose file sink has a misspelt key (output_dir): the warning names it and the key meant, and the file is where both backends then write it', () => {
    const run = host(`const plugin = createNemoRelayPlugin({ backend: ${JSON.stringify(backend)} }); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();`, {
      env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: 'plugins.toml' },
      prepare: (cwd) => {
        const file = pluginsTomlIn(cwd, 'enabled = true\noutput_directory = "trajectories"\n');
        fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('output_directory = "events"', 'output_dir = "events"'));
      },
    });
    expect(run.status, run.stderr).toBe(0);
    // Native ignores the key, and so does the memory relay: the sink writes into the working directory.
    expect(files(run.cwd)).toContain('events.jsonl');
    expect(fs.existsSync(path.join(run.cwd, 'events'))).toBe(false);
    const warning = run.stderr.split('\n').filter((line) => line.includes('plugins_toml.unknown_field'));
    expect(warning).toHaveLength(1);
    expect(warning[0]).toContain('sinks[0].output_dir');
    expect(warning[0]).toContain('did you mean output_directory?');
  });

  it('that is not there: the warning says nothing is recorded, and nothing is', () => {
    const run = host(`const plugin = createNemoRelayPlugin({ backend: ${JSON.stringify(backend)} }); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();\nconsole.log(JSON.stringify(plugin.status().outputs));`, {
      env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: 'plugin.toml' },
      prepare: (cwd) => pluginsTomlIn(cwd, 'enabled = true\noutput_directory = "trajectories"\n'),
    });
    expect(run.status, run.stderr).toBe(0);
    expect(files(run.cwd)).toEqual(['package.json', 'plugins.toml']);
    expect(run.stdout.trim()).toBe('[]');
    const warning = run.stderr.split('\n').filter((line) => line.includes('plugins_toml.unreadable'));
    expect(warning).toHaveLength(1);
    expect(warning[0]).toContain('nothing is recorded');
    expect(warning[0]).not.toContain("using the environment's outputs instead");
  });

  it('that is not valid TOML: the warning says where, and that nothing is recorded', () => {
    const run = host(`const plugin = createNemoRelayPlugin({ backend: ${JSON.stringify(backend)} }); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();`, {
      env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: 'plugins.toml' },
      prepare: (cwd) => fs.writeFileSync(path.join(pluginsTomlIn(cwd, 'enabled = true\n')), fs.readFileSync(path.join(cwd, 'plugins.toml'), 'utf8').replace('type = "file"', 'type = file')),
    });
    expect(run.status, run.stderr).toBe(0);
    expect(files(run.cwd)).toEqual(['package.json', 'plugins.toml']);
    const warning = run.stderr.split('\n').filter((line) => line.includes('plugins_toml.invalid_toml'));
    expect(warning).toHaveLength(1);
    expect(warning[0]).toContain('nothing is recorded');
    expect(warning[0]).toMatch(/line 13/);
  });

  it('that is not there, with an output the environment enables: the warning says what is recorded instead', () => {
    const run = host(`const plugin = createNemoRelayPlugin({ backend: ${JSON.stringify(backend)} }); plugin.register(hooks);\n${SESSION_WITH_A_MODEL_CALL}\nawait plugin.shutdown();`, {
      env: { NEMO_RELAY_HOOKS_PLUGINS_TOML: 'plugin.toml', NEMO_RELAY_HOOKS_ATOF_ENABLED: '1' },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(files(path.join(run.cwd, 'nemo-relay-output'))).toEqual(['acme-my-agent-atof.jsonl']);
    const warning = run.stderr.split('\n').filter((line) => line.includes('plugins_toml.unreadable'));
    expect(warning).toHaveLength(1);
    expect(warning[0]).toContain("using the environment's outputs instead");
    expect(warning[0]).not.toContain('nothing is recorded');
  });
});

describe('settings: neutral names, Hermes names and defaults', () => {
  it('reads every HERMES_NEMO_RELAY_* setting under a NEMO_RELAY_HOOKS_* name too; the neutral one wins when both are set', () => {
    const { settings, profile } = loadSettings(
      { NEMO_RELAY_HOOKS_ATOF_FILENAME: 'events.jsonl', HERMES_NEMO_RELAY_ATOF_FILENAME: 'hermes.jsonl', NEMO_RELAY_HOOKS_ATIF_SUBAGENT_EXPORT_MODE: 'all' },
      {},
      { host: HOST, processEnv: {} },
    );
    expect(profile).toBe('hermes');
    expect(settings).toMatchObject({ atofFilename: 'events.jsonl', atifSubagentExportMode: 'all' });
  });

  it('the default profile: records by default, named after the host; a plugins.toml or outputs: false turns that off', () => {
    const byDefault = loadSettings({}, {}, { host: HOST, processEnv: {} });
    expect(byDefault.profile).toBe('default');
    expect(byDefault.recordingByDefault).toBe(true);
    expect(byDefault.settings).toMatchObject({
      atofEnabled: true,
      atifEnabled: true,
      atofOutputDirectory: 'nemo-relay-output',
      atifOutputDirectory: 'nemo-relay-output',
      atofFilename: 'my-agent-atof.jsonl',
      atifFilenameTemplate: 'my-agent-atif-{session_id}.json',
      atifAgentName: 'my-agent',
      atifAgentVersion: '1.2.3',
    });
    const off = loadSettings({}, { outputs: false }, { host: HOST, processEnv: {} });
    expect(off.settings).toMatchObject({ atofEnabled: false, atifEnabled: false });
    expect(loadSettings({}, {}, { host: HOST, processEnv: { NEMO_RELAY_HOOKS_OUTPUTS: 'off' } }).settings.atofEnabled).toBe(false);
    // The host's own env decides over the process's.
    expect(loadSettings({ NEMO_RELAY_HOOKS_OUTPUTS: 'on' }, {}, { host: HOST, processEnv: { NEMO_RELAY_HOOKS_OUTPUTS: 'off' } }).settings.atofEnabled).toBe(true);
    const toml = loadSettings({ NEMO_RELAY_HOOKS_PLUGINS_TOML: '/nonexistent/plugins.toml' }, {}, { host: HOST, processEnv: {} });
    expect(toml.settings).toMatchObject({ atofEnabled: false, atifEnabled: false });
  });

  it('an explicit setting keeps the other defaults: ATIF enabled without a folder writes to the default folder', () => {
    const { settings, recordingByDefault } = loadSettings({}, { atifEnabled: true, atofEnabled: false }, { host: HOST, processEnv: { NEMO_RELAY_HOOKS_OUTPUTS: 'off' } });
    expect(settings).toMatchObject({ atifEnabled: true, atifOutputDirectory: 'nemo-relay-output', atofEnabled: false });
    expect(recordingByDefault).toBe(false);
  });

  it('marks as explicit what the host set; Hermes\' model name stays a fallback, as in Hermes', () => {
    const neutral = loadSettings({ NEMO_RELAY_HOOKS_ATIF_MODEL_NAME: 'm', NEMO_RELAY_HOOKS_ATIF_AGENT_NAME: 'a' }, {}, { host: HOST, processEnv: {} });
    expect([...neutral.explicit].sort()).toEqual(['atifAgentName', 'atifModelName']);
    const hermes = loadSettings({ HERMES_NEMO_RELAY_ATIF_MODEL_NAME: 'm', HERMES_NEMO_RELAY_ATIF_AGENT_NAME: 'a' }, {}, { host: HOST, processEnv: {} });
    expect([...hermes.explicit]).toEqual(['atifAgentName']);
    expect(hermes.settings).toMatchObject({ atifModelName: 'm', atifAgentName: 'a', atofFilename: 'hermes-atof.jsonl', atifOutputDirectory: '' });
  });
});

describe('names a framework reports', () => {
  const script = (settings: string) => `
const plugin = createNemoRelayPlugin({ settings: ${settings} });
plugin.register(hooks);
hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o-2024-08-06', agent_name: 'triage', agent_version: '0.20.1' });
${SESSION_WITH_A_MODEL_CALL.replace("hooks.emit('on_session_start', { session_id: 's1', model: 'gpt-4o' });", '')}
await plugin.shutdown();
`;
  const agentOf = (cwd: string) => JSON.parse(fs.readFileSync(path.join(cwd, 'nemo-relay-output', 'acme-my-agent-atif-s1.json'), 'utf8')).agent;

  it('come before any default', () => {
    const run = host(script('{}'));
    expect(run.status, run.stderr).toBe(0);
    expect(agentOf(run.cwd)).toMatchObject({ name: 'triage', version: '0.20.1', model_name: 'gpt-4o-2024-08-06' });
  });

  it('never before a value the host set explicitly', () => {
    const run = host(script("{ atifAgentName: 'Support Bot', atifModelName: 'house-model' }"));
    expect(run.status, run.stderr).toBe(0);
    expect(agentOf(run.cwd)).toMatchObject({ name: 'Support Bot', version: '0.20.1', model_name: 'house-model' });
  });
});
