// A host whose session ids carry personal data (a user's email as the session
// id) and a redaction configured for it, as docs/operators/redaction.md
// writes one: the `redact` hook of that page with the outputs a user gets by
// default (an ATOF file and one ATIF trajectory per session), or a
// `pii_redaction` component in a plugins.toml. Nothing the plugin writes may
// name the email: not the ATOF events, not the trajectory's file name, its
// `session_id` or `trajectory_id`, not the path `hooks.traceContext()` hands
// out (what an MCP call's `_meta` carries), not `status()` or the log. The
// trajectory is named by the session id as the redaction leaves it; two
// sessions whose ids redact alike stay two trajectories, and a reference from
// one session to another's trajectory names the right file. On memory and
// native alike.
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookRegistry } from '../../src/hooks/index.ts';
import { createNemoRelayPlugin, type NemoRelayPlugin } from '../../src/index.ts';
import type { RedactableEvent } from '../../src/plugin/egress.ts';
import type { NemoRelaySettingsOverrides } from '../../src/plugin/config/settings.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { writePluginsToml } from '../differential/replay.ts';
import { backends } from '../adapters/support.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';

const ANA = 'ana@example.com';
const BOB = 'bob@example.com';

/** The `redact` hook of docs/operators/redaction.md, as a user copies it. */
function pageHook(event: RedactableEvent): void {
  const scrub = (text: string) => text.replace(/[\w.+-]+@[\w-]+\.[\w.]+/g, '<email>');
  event.name = scrub(event.name);
  event.data = JSON.parse(scrub(JSON.stringify(event.data)));
  event.metadata = JSON.parse(scrub(JSON.stringify(event.metadata)));
  if (event.data !== null && typeof event.data === 'object' && !Array.isArray(event.data)) {
    delete (event.data as Record<string, unknown>).internal_notes;
  }
}

const PII_REDACTION = ['[[components]]', 'kind = "pii_redaction"', 'enabled = true', '', '[components.config.builtin]', 'action = "redact"', 'detector = "email"', ''].join('\n');

interface Run {
  dir: string;
  hooks: HookRegistry;
  plugin: NemoRelayPlugin;
  logged: string[];
}

/** A plugin writing the default outputs' files (ATOF and one ATIF trajectory per session) into a temp folder. */
function start(backend: 'memory' | 'native', label: string, options: { redact?: (event: RedactableEvent) => void; settings?: NemoRelaySettingsOverrides } = {}): Run {
  const dir = mkdtempSync(path.join(tmpdir(), `nrh-redacted-ids-${label}-${backend}-`));
  const logged: string[] = [];
  const log = (message: string) => void logged.push(message);
  const hooks = new HookRegistry({ logger: { debug: log, info: log, warn: log, error: log } });
  const plugin = createNemoRelayPlugin({
    backend,
    env: {},
    logger: { debug: log, info: log, warn: log, error: log },
    settings: { atofEnabled: true, atofOutputDirectory: dir, atifEnabled: true, atifOutputDirectory: dir, ...options.settings },
    ...(options.redact !== undefined ? { redact: options.redact } : {}),
  });
  plugin.register(hooks);
  return { dir, hooks, plugin, logged };
}

/** One model call and one tool call of a session, as docs/hosts/emitting-hooks.md emits them; its trace context asked for mid-call. */
async function session(hooks: HookRegistry, sessionId: string, greeting: string): Promise<Awaited<ReturnType<HookRegistry['traceContext']>>> {
  const s = { session_id: sessionId };
  hooks.emit('on_session_start', { ...s, model: 'gpt-4o' });
  hooks.emit('pre_api_request', { ...s, api_request_id: `${greeting}-a1`, provider: 'openai', request: { body: { messages: [{ role: 'user', content: greeting }] } } });
  hooks.emit('post_api_request', { ...s, api_request_id: `${greeting}-a1`, response: { choices: [{ message: { role: 'assistant', content: `Hello, ${sessionId}!` } }] } });
  hooks.emit('pre_tool_call', { ...s, tool_name: 'lookup', tool_call_id: `${greeting}-call-1`, args: { order: 42, internal_notes: 'VIP, call back' } });
  const context = await hooks.traceContext({ ...s, tool_call_id: `${greeting}-call-1` });
  hooks.emit('post_tool_call', { ...s, tool_name: 'lookup', tool_call_id: `${greeting}-call-1`, args: { order: 42 }, result: 'shipped' });
  return context;
}

function finalize(hooks: HookRegistry, sessionId: string): void {
  hooks.emit('on_session_end', { session_id: sessionId, completed: true });
  hooks.emit('on_session_finalize', { session_id: sessionId });
}

/** Every file under `dir` by its path relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => statSync(path.join(dir, name)).isFile())
    .sort();
}

/** Nothing under `dir`, names or contents, nor `status()` or the log, names any of `secrets`. */
function expectNowhere(run: Run, secrets: readonly string[]): void {
  for (const name of filesUnder(run.dir)) {
    const text = readFileSync(path.join(run.dir, name), 'utf8');
    for (const secret of secrets) {
      expect(name, 'a file name').not.toContain(secret.split('@')[0]);
      expect(text.includes(secret), `${name} names ${secret}`).toBe(false);
    }
  }
  const said = JSON.stringify(run.plugin.status()) + run.logged.join('\n');
  for (const secret of secrets) expect(said.includes(secret), `status() or the log names ${secret}`).toBe(false);
}

/** The trajectory files under `dir`, parsed and validated, by file name. */
function trajectories(dir: string): Map<string, Record<string, any>> {
  const out = new Map<string, Record<string, any>>();
  for (const name of filesUnder(dir).filter((file) => file.endsWith('.json'))) {
    const trajectory = JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as Record<string, any>;
    expect(validateAtif(trajectory).errors, name).toEqual([]);
    out.set(name, trajectory);
  }
  return out;
}

describe('session ids as redaction leaves them, in the plugin\'s own trajectories', () => {
  let collector: Receiver;
  beforeAll(async () => {
    collector = await startHttpReceiver();
  });
  afterAll(async () => {
    await collector.close();
  });
  /** The OTLP settings of a run whose spans and logs the collector receives (cleared first). */
  const otlp = (): NemoRelaySettingsOverrides => {
    collector.requests.length = 0;
    return { otlpEnabled: true, otlpType: 'full', otlpEndpoint: `${collector.url}/v1/traces` };
  };
  /** What the collector received names none of `secrets`. */
  const expectNotSent = (secrets: readonly string[]) => {
    const sent = JSON.stringify([collector.spans(), collector.logs()]);
    expect(collector.spans().length).toBeGreaterThan(0);
    for (const secret of secrets) expect(sent.includes(secret), `OTLP carries ${secret}`).toBe(false);
  };

  for (const backend of backends()) {
    it(`the redaction page's hook, default outputs: no email anywhere, the trajectory named <email>, traceContext names the file written (${backend})`, async () => {
      const run = start(backend, 'page', { redact: pageHook, settings: otlp() });
      const context = await session(run.hooks, ANA, 'Hi');
      finalize(run.hooks, ANA);
      await run.plugin.shutdown({ timeoutMs: 60_000 });

      expectNowhere(run, [ANA]);
      expectNotSent([ANA]);
      const written = trajectories(run.dir);
      expect(written.size).toBe(1);
      const [[name, trajectory]] = [...written];
      expect(name).toMatch(/-atif-_email_-[0-9a-f]{12}\.json$/);
      expect([trajectory!.session_id, trajectory!.trajectory_id]).toEqual(['<email>', '<email>']);
      expect(JSON.stringify(trajectory)).not.toContain('VIP');
      // The path handed out before the session ended is the file it was written to, and its ids are the file's.
      expect(context.trajectory).toEqual({ session_id: '<email>', trajectory_id: '<email>', trajectory_path: name });
    }, 60_000);

    it(`pii_redaction in a plugins.toml, the plugin's own trajectories: the id as the component leaves it (${backend})`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), `nrh-redacted-ids-toml-${backend}-`));
      const toml = path.join(dir, 'plugins.toml');
      writeFileSync(toml, `version = 1\n\n${PII_REDACTION}`);
      const run = start(backend, 'pii', { settings: { pluginsTomlPath: toml } });
      const context = await session(run.hooks, ANA, 'Hi');
      finalize(run.hooks, ANA);
      await run.plugin.shutdown({ timeoutMs: 60_000 });

      expectNowhere(run, [ANA]);
      const written = trajectories(run.dir);
      expect(written.size).toBe(1);
      const [[name, trajectory]] = [...written];
      expect(name).toMatch(/-atif-_REDACTED_-[0-9a-f]{12}\.json$/);
      expect([trajectory!.session_id, trajectory!.trajectory_id]).toEqual(['[REDACTED]', '[REDACTED]']);
      expect(context.trajectory).toEqual({ session_id: '[REDACTED]', trajectory_id: '[REDACTED]', trajectory_path: name });
    }, 60_000);

    it(`pii_redaction with plugins.toml's own outputs: the session scope is named with the redacted id, so no file names the email (${backend})`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), `nrh-redacted-ids-owned-${backend}-`));
      const toml = writePluginsToml(dir, PII_REDACTION);
      const run = start(backend, 'owned', { settings: { pluginsTomlPath: toml, atofEnabled: false, atifEnabled: false } });
      await session(run.hooks, ANA, 'Hi');
      finalize(run.hooks, ANA);
      await run.plugin.shutdown({ timeoutMs: 60_000 });

      const files = filesUnder(dir);
      expect(files).toContain(path.join('atof', 'hermes-atof.jsonl'));
      expect(files.filter((file) => file.endsWith('.json'))).toHaveLength(1);
      expectNowhere({ ...run, dir }, [ANA]);
      const events = readFileSync(path.join(dir, 'atof', 'hermes-atof.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
      const root = events.find((event) => event.category === 'agent' && event.scope_category === 'start')!;
      expect(root.name).toMatch(/-session-\[REDACTED\]$/);
      expect(root.data).toEqual({ session_id: '[REDACTED]' });
    }, 60_000);

    it(`two sessions whose ids redact alike: two files, two trajectory ids, each with its own steps and the path handed out for it (${backend})`, async () => {
      const run = start(backend, 'collide', { redact: pageHook });
      // Both open at once: each claims its name before either is written.
      const s = (id: string) => ({ session_id: id });
      run.hooks.emit('on_session_start', { ...s(ANA), model: 'gpt-4o' });
      run.hooks.emit('on_session_start', { ...s(BOB), model: 'gpt-4o' });
      const contexts = await Promise.all([session(run.hooks, ANA, 'Hi from the first'), session(run.hooks, BOB, 'Hi from the second')]);
      finalize(run.hooks, BOB);
      finalize(run.hooks, ANA);
      await run.plugin.shutdown({ timeoutMs: 60_000 });

      expectNowhere(run, [ANA, BOB]);
      const written = trajectories(run.dir);
      expect(written.size).toBe(2);
      const byGreeting = (greeting: string) => [...written].find(([, trajectory]) => JSON.stringify(trajectory.steps).includes(greeting))!;
      const [firstName, first] = byGreeting('Hi from the first');
      const [secondName, second] = byGreeting('Hi from the second');
      expect(firstName).not.toBe(secondName);
      expect(JSON.stringify(first.steps)).not.toContain('Hi from the second');
      expect(JSON.stringify(second.steps)).not.toContain('Hi from the first');
      expect([first.session_id, second.session_id]).toEqual(['<email>', '<email>']);
      expect(new Set([first.trajectory_id, second.trajectory_id])).toEqual(new Set(['<email>', '<email>~2']));
      expect(contexts[0].trajectory).toEqual({ session_id: '<email>', trajectory_id: first.trajectory_id, trajectory_path: firstName });
      expect(contexts[1].trajectory).toEqual({ session_id: '<email>', trajectory_id: second.trajectory_id, trajectory_path: secondName });
    }, 60_000);

    it(`a tool call whose work ran in another session references that session's file, named as redaction leaves it (${backend})`, async () => {
      const run = start(backend, 'ref', { redact: pageHook });
      // The caller's session, whose tool call runs the work (an MCP server's session in this process, say).
      const caller = { session_id: ANA };
      run.hooks.emit('on_session_start', { ...caller, model: 'gpt-4o' });
      run.hooks.emit('pre_api_request', { ...caller, api_request_id: 'c1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'Ask the server' }] } } });
      run.hooks.emit('post_api_request', { ...caller, api_request_id: 'c1', response: { choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'remote-1', type: 'function', function: { name: 'ask', arguments: '{}' } }] } }] } });
      run.hooks.emit('pre_tool_call', { ...caller, tool_name: 'ask', tool_call_id: 'remote-1', args: {} });
      const callerContext = await run.hooks.traceContext({ ...caller, tool_call_id: 'remote-1' });
      // The work's session names its caller as an MCP call's `_meta` does (its trajectory as handed out); its id redacts alike.
      const work = { session_id: BOB };
      run.hooks.emit('on_session_start', { ...work, model: 'gpt-4o', caller: { ...callerContext.trajectory, tool_call_id: 'remote-1' } });
      run.hooks.emit('pre_api_request', { ...work, api_request_id: 'w1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'The work itself' }] } } });
      run.hooks.emit('post_api_request', { ...work, api_request_id: 'w1', response: { choices: [{ message: { role: 'assistant', content: 'done' } }] } });
      const workContext = await run.hooks.traceContext(work);
      finalize(run.hooks, BOB);
      run.hooks.emit('subagent_stop', { ...caller, parent_session_id: ANA, tool_call_id: 'remote-1', tool_name: 'ask', child_status: 'completed', child_trajectory: workContext.trajectory });
      run.hooks.emit('post_tool_call', { ...caller, tool_name: 'ask', tool_call_id: 'remote-1', result: 'done' });
      finalize(run.hooks, ANA);
      await run.plugin.shutdown({ timeoutMs: 60_000 });

      expectNowhere(run, [ANA, BOB]);
      const written = trajectories(run.dir);
      expect(written.size).toBe(2);
      const [callerName, callerTrajectory] = [...written].find(([, trajectory]) => JSON.stringify(trajectory.steps).includes('Ask the server'))!;
      const [workName, workTrajectory] = [...written].find(([, trajectory]) => JSON.stringify(trajectory.steps).includes('The work itself'))!;
      // The caller's tool result names the work's file and its id, as written.
      const results = callerTrajectory.steps.flatMap((step: Record<string, any>) => step.observation?.results ?? []);
      const refs = results.flatMap((result: Record<string, any>) => result.subagent_trajectory_ref ?? []);
      expect(refs).toEqual([{ trajectory_id: workTrajectory.trajectory_id, session_id: '<email>', trajectory_path: workName }]);
      // And the work's trajectory names its caller's file.
      expect(workTrajectory.extra.caller).toMatchObject({ trajectory_id: callerTrajectory.trajectory_id, trajectory_path: callerName, tool_call_id: 'remote-1' });
      expect(callerTrajectory.trajectory_id).not.toBe(workTrajectory.trajectory_id);
    }, 60_000);

    it(`a sub-agent with a file of its own (export mode all): both named as redaction leaves them, the parent's ref naming the child (${backend})`, async () => {
      const run = start(backend, 'subagent', { redact: pageHook, settings: { atifSubagentExportMode: 'all' } });
      const parent = { session_id: ANA };
      const child = { session_id: BOB };
      run.hooks.emit('on_session_start', { ...parent, model: 'gpt-4o' });
      run.hooks.emit('pre_api_request', { ...parent, api_request_id: 'p1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'Delegate it' }] } } });
      run.hooks.emit('post_api_request', { ...parent, api_request_id: 'p1', response: { choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'delegate-1', type: 'function', function: { name: 'delegate', arguments: '{}' } }] } }] } });
      run.hooks.emit('pre_tool_call', { ...parent, tool_name: 'delegate', tool_call_id: 'delegate-1', args: {} });
      run.hooks.emit('subagent_start', { ...parent, child_session_id: BOB, child_role: 'researcher', tool_call_id: 'delegate-1' });
      run.hooks.emit('on_session_start', { ...child, model: 'gpt-4o' });
      run.hooks.emit('pre_api_request', { ...child, api_request_id: 'k1', provider: 'openai', request: { body: { messages: [{ role: 'user', content: 'The delegated work' }] } } });
      run.hooks.emit('post_api_request', { ...child, api_request_id: 'k1', response: { choices: [{ message: { role: 'assistant', content: 'found it' } }] } });
      const childContext = await run.hooks.traceContext(child);
      finalize(run.hooks, BOB);
      run.hooks.emit('subagent_stop', { ...parent, child_session_id: BOB, child_role: 'researcher', child_status: 'completed', tool_call_id: 'delegate-1' });
      run.hooks.emit('post_tool_call', { ...parent, tool_name: 'delegate', tool_call_id: 'delegate-1', result: 'found it' });
      finalize(run.hooks, ANA);
      await run.plugin.shutdown({ timeoutMs: 60_000 });

      expectNowhere(run, [ANA, BOB]);
      const written = trajectories(run.dir);
      expect(written.size).toBe(2);
      const [parentName, parentTrajectory] = [...written].find(([, trajectory]) => JSON.stringify(trajectory.steps).includes('Delegate it'))!;
      const [childName, childTrajectory] = [...written].find(([, trajectory]) => !JSON.stringify(trajectory.steps).includes('Delegate it'))!;
      expect(JSON.stringify(childTrajectory.steps)).toContain('The delegated work');
      expect(parentName).not.toBe(childName);
      expect(new Set([parentTrajectory.trajectory_id, childTrajectory.trajectory_id])).toEqual(new Set(['<email>', '<email>~2']));
      expect(childContext.trajectory).toEqual({ session_id: '<email>', trajectory_id: childTrajectory.trajectory_id, trajectory_path: childName });
      // The parent's tool result names the sub-agent it embeds, as the redaction wrote its session.
      const refs = parentTrajectory.steps.flatMap((step: Record<string, any>) => step.observation?.results ?? []).flatMap((result: Record<string, any>) => result.subagent_trajectory_ref ?? []);
      expect(refs).toHaveLength(1);
      expect(refs[0].session_id).toBe('<email>');
      expect(parentTrajectory.subagent_trajectories.map((embedded: Record<string, any>) => embedded.trajectory_id)).toEqual([refs[0].trajectory_id]);
    }, 60_000);

    it(`a session that recorded no step writes no trajectory, and status() says so naming it as redaction leaves it (${backend})`, async () => {
      const run = start(backend, 'no-step', { redact: pageHook });
      run.hooks.emit('on_session_start', { session_id: ANA, model: 'gpt-4o' });
      finalize(run.hooks, ANA);
      await run.plugin.shutdown({ timeoutMs: 60_000 });
      expect(trajectories(run.dir).size).toBe(0);
      const skipped = run.plugin.status().outputs.filter((output) => output.kind === 'atif');
      expect(skipped).toHaveLength(1);
      expect(JSON.stringify(skipped[0])).toContain('session <email> recorded no step');
      expectNowhere(run, [ANA]);
    }, 60_000);

    it(`the hook is asked once per event: a random pseudonym names the trajectory as the ATOF file has it (${backend})`, async () => {
      const pseudonyms = new Map<string, string>();
      let sessionStarts = 0;
      const run = start(backend, 'pseudonym', {
        // A hook that keys on the session scope's role and draws a fresh pseudonym for each start it sees.
        redact: (event) => {
          const metadata = event.metadata as Record<string, unknown> | null;
          if (event.category !== 'agent' || event.phase !== 'start' || metadata?.nemo_relay_scope_role !== 'session') return pageHook(event);
          sessionStarts += 1;
          const data = event.data as { session_id: string };
          const pseudonym = `user-${Math.random().toString(36).slice(2, 10)}`;
          pseudonyms.set(data.session_id, pseudonym);
          pageHook(event);
          (event.data as Record<string, unknown>).session_id = pseudonym;
        },
      });
      await session(run.hooks, ANA, 'Hi');
      finalize(run.hooks, ANA);
      await run.plugin.shutdown({ timeoutMs: 60_000 });

      expect(sessionStarts).toBe(1);
      expectNowhere(run, [ANA]);
      const events = readFileSync(path.join(run.dir, filesUnder(run.dir).find((name) => name.endsWith('.jsonl'))!), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
      const root = events.find((event) => event.category === 'agent' && event.scope_category === 'start')!;
      expect(root.data.session_id).toBe(pseudonyms.get(ANA));
      const [[name, trajectory]] = [...trajectories(run.dir)];
      expect(name).toContain(`-atif-${pseudonyms.get(ANA)}.json`);
      expect(trajectory!.session_id).toBe(pseudonyms.get(ANA));
    }, 60_000);
  }

  it('without redaction nothing changes: the file, ids and path are the session id\'s', async () => {
    const run = start('memory', 'plain');
    const context = await session(run.hooks, ANA, 'Hi');
    finalize(run.hooks, ANA);
    await run.plugin.shutdown({ timeoutMs: 60_000 });
    const [[name, trajectory]] = [...trajectories(run.dir)];
    expect(name).toMatch(/-atif-ana_example\.com-[0-9a-f]{12}\.json$/);
    expect([trajectory!.session_id, trajectory!.trajectory_id]).toEqual([ANA, ANA]);
    expect(context.trajectory).toEqual({ session_id: ANA, trajectory_id: ANA, trajectory_path: name });
  }, 60_000);
});
