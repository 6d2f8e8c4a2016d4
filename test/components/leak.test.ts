// No configuration, valid or not, lets a value that redaction governs reach
// any output: distinctive values are planted in every payload field of a
// conversation (request and response bodies, credentials in headers, tool
// arguments and results, marks, approvals, subagents, errors) and searched
// for in every byte the run produced: every file under the output folder,
// every OTLP span (full, gen_ai, openinference) a loopback collector
// received, every ATOF stream body and ATIF upload. On both backends.
import { describe, expect, it } from 'vitest';
import { FILE_BACKENDS } from '../contract/backends.ts';
import { runComponents, type ComponentRunResult, type Script } from '../support/component-run.ts';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { RedactHook } from '../../src/plugin/plugin.ts';

const TOKEN = 'ZQXLEAK';
const planted = (field: string) => `${TOKEN}-${field}`;

/** A conversation with a planted value in every payload field; `inNames` also plants them in ids and names. */
function conversation(inNames: boolean): Script {
  return async ({ hooks, terminal }) => {
    const session = inNames ? planted('session_id') : 'leak-session';
    const base = { session_id: session, turn_id: inNames ? planted('turn_id') : 't1' };
    hooks.emit('on_session_start', { session_id: session, model: 'gpt-4o-mini', platform: 'cli', user: planted('session_user') } as never);
    hooks.emit('pre_llm_call', { ...base, user_message: `please ${planted('user_message')}`, conversation_history: [{ role: 'user', content: planted('history') }] } as never);
    const request = {
      method: 'POST',
      headers: { authorization: `Bearer ${planted('authorization')}`, 'x-api-key': planted('x_api_key'), Cookie: `sid=${planted('cookie')}`, 'content-type': 'application/json' },
      body: { model: 'gpt-4o-mini', messages: [{ role: 'system', content: planted('system_prompt') }, { role: 'user', content: planted('request_body') }] },
    };
    hooks.emit('pre_api_request', { ...base, api_request_id: 'a1', model: 'gpt-4o-mini', provider: 'openai', request } as never);
    hooks.emit('post_api_request', {
      ...base,
      api_request_id: 'a1',
      model: 'gpt-4o-mini',
      provider: 'openai',
      finish_reason: 'tool_calls',
      response: {
        id: 'r1',
        object: 'chat.completion',
        model: 'gpt-4o-mini',
        choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: planted('response_text'), tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ q: planted('tool_call_arguments') }) } }] } }],
        usage: { prompt_tokens: 10, completion_tokens: 5 },
      },
    } as never);
    hooks.emit('pre_tool_call', { ...base, tool_name: 'lookup', tool_call_id: 'c1', args: { q: planted('tool_args'), nested: [{ deep: planted('tool_args_deep') }] } } as never);
    hooks.emit('post_tool_call', { ...base, tool_name: 'lookup', tool_call_id: 'c1', result: { rows: [planted('tool_result')] }, status: 'ok' } as never);
    hooks.emit('pre_approval_request', { ...base, command: planted('approval_command') } as never);
    hooks.emit('post_approval_response', { ...base, choice: planted('approval_choice') } as never);
    hooks.emit('subagent_start', { ...base, parent_session_id: session, child_session_id: `${session}-child`, goal: planted('subagent_goal') } as never);
    hooks.emit('subagent_stop', { ...base, parent_session_id: session, child_session_id: `${session}-child`, summary: planted('subagent_summary') } as never);
    hooks.emit('pre_api_request', { ...base, api_request_id: 'a2', model: 'gpt-4o-mini', provider: 'openai', request: { headers: { Authorization: planted('authorization_2') }, body: { messages: [{ role: 'user', content: planted('request_body_2') }] } } } as never);
    hooks.emit('api_request_error', { ...base, api_request_id: 'a2', error: { message: planted('error_message') } } as never);
    // An end without a start: the whole payload (raw request headers included) is recorded as a mark.
    hooks.emit('post_api_request', { ...base, api_request_id: 'orphan', request: { headers: { authorization: planted('authorization_orphan') } }, response: { note: planted('orphan_response') } } as never);
    hooks.emit('post_llm_call', { ...base, assistant_response: planted('assistant_response') } as never);
    hooks.emit('on_session_end', { session_id: session, summary: planted('session_end') } as never);
    hooks.emit('on_session_finalize', { session_id: session } as never);
    void terminal;
  };
}

/** A chat completion and a message, as the providers answer. */
const OPENAI_REPLY = { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };
const ANTHROPIC_REPLY = { id: 'm1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 1 } };

/**
 * A host that records each request its provider clients send, headers as the
 * client handed them to `fetch` (the real OpenAI and Anthropic clients hand a
 * `Headers`), and requests it builds itself with headers in fetch's other
 * forms and in the forms other tools hold them in.
 */
const clientHeaders: Script = async ({ hooks }) => {
  const session = 'headers-session';
  const base = { session_id: session, turn_id: 't1' };
  hooks.emit('on_session_start', { session_id: session, model: 'gpt-4o-mini', platform: 'cli' } as never);
  let n = 0;
  const record = (reply: object) => async (url: unknown, init?: RequestInit) => {
    const id = `client-${++n}`;
    const request = { method: init?.method, url: String(url), headers: init?.headers, body: JSON.parse(String(init?.body)) };
    // An end without a start: the whole raw payload, headers included, is recorded as a mark.
    hooks.emit('post_api_request', { ...base, api_request_id: id, model: 'gpt-4o-mini', provider: 'openai', request, response: reply } as never);
    return new Response(JSON.stringify(reply), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const openai = new OpenAI({ apiKey: planted('openai_key'), defaultHeaders: { 'x-team': planted('openai_team_header') }, fetch: record(OPENAI_REPLY) as never });
  await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  const anthropic = new Anthropic({ apiKey: planted('anthropic_key'), defaultHeaders: { 'x-team': planted('anthropic_team_header') }, fetch: record(ANTHROPIC_REPLY) as never });
  await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
  const forms: Record<string, unknown> = {
    pairs: [['Authorization', `Bearer ${planted('pairs_authorization')}`], ['x-team', planted('pairs_team_header')]],
    flat: ['cookie', planted('flat_cookie'), 'x-team', planted('flat_team_header')],
    har: [{ name: 'X-Api-Key', value: planted('har_api_key') }, { name: 'x-team', value: planted('har_team_header') }],
    map: new Map([['proxy-authorization', planted('map_proxy_authorization')], ['x-team', planted('map_team_header')]]),
    text: `Set-Cookie: ${planted('text_set_cookie')}\r\nx-team: ${planted('text_team_header')}\r\n`,
  };
  for (const [form, headers] of Object.entries(forms)) {
    hooks.emit('post_api_request', { ...base, api_request_id: `orphan-${form}`, request: { headers }, response: { ok: true } } as never);
  }
  // What a `toJSON` makes of a value is what is recorded: a library's own headers class that keeps its entries out of
  // sight (in private fields), and an object whose `toJSON` brings out a `headers` key of its own.
  class HiddenHeaders {
    readonly #entries = { authorization: `Bearer ${planted('class_authorization')}`, 'x-team': planted('class_team_header') };
    toJSON(): object {
      return { ...this.#entries };
    }
  }
  class RequestConfig {
    toJSON(): object {
      return { url: 'https://api.example.test', headers: { 'X-Api-Key': planted('tojson_api_key'), 'x-team': planted('tojson_team_header') } };
    }
  }
  hooks.emit('post_api_request', { ...base, api_request_id: 'orphan-class', request: { headers: new HiddenHeaders() }, response: { ok: true } } as never);
  hooks.emit('pre_tool_call', { ...base, tool_name: 'fetch', tool_call_id: 'call-tojson', args: { config: new RequestConfig() } } as never);
  hooks.emit('post_tool_call', { ...base, tool_name: 'fetch', tool_call_id: 'call-tojson', result: 'ok', status: 'ok' } as never);
  hooks.emit('on_session_end', { session_id: session } as never);
  hooks.emit('on_session_finalize', { session_id: session } as never);
};

/** Every byte a run produced, as text: files, spans, stream and upload bodies. */
function everything(run: ComponentRunResult): string {
  return [
    ...[...run.files.entries()].map(([name, text]) => `${name}\n${Buffer.from(text, 'latin1').toString('utf8')}`),
    JSON.stringify(run.spans),
    ...run.remoteBodies,
  ].join('\n');
}

const leaks = (run: ComponentRunResult) => [...new Set(everything(run).match(new RegExp(`${TOKEN}-[a-z_0-9]+`, 'g')) ?? [])].sort();

const pii = (builtin: string, top = '') => `[[components]]\nkind = "pii_redaction"\n[components.config]\n${top}\n[components.config.builtin]\n${builtin}\n`;

/** Configurations under which no planted payload value may reach any output. */
const HIDDEN: Record<string, { components: string; hook?: RedactHook; inNames?: boolean; writesNothing?: boolean; noObservability?: boolean; pluginConfigCodes?: string[] }> = {
  'a pattern for the planted values': { components: pii(`action = "regex_replace"\npattern = "${TOKEN}-[a-z_0-9]+"\nreplacement = "[X]"`) },
  'hash every string': { components: pii('action = "hash"') },
  'the trajectory_context preset': { components: pii('preset = "trajectory_context"') },
  'an invalid pattern (the document is rejected)': { components: pii('action = "redact"\npattern = "("'), writesNothing: true },
  'a disabled profile beside an invalid one': { components: pii('', '[[components.config.profiles]]\nenabled = false\n[components.config.profiles.builtin]\naction = "hash"\n[[components.config.profiles]]\n[components.config.profiles.builtin]\naction = "frob"'), writesNothing: true },
  // `enabled = "yes"` is refused (native wants a boolean), so the whole document is; the operator asked for redaction all the same.
  'a pii_redaction whose enabled is not a boolean (the document is rejected)': { components: '[[components]]\nkind = "pii_redaction"\nenabled = "yes"\n[components.config.builtin]\naction = "hash"\n', writesNothing: true },
  // Text no TOML parser reads: which components it holds is unknown, but it names pii_redaction.
  'invalid TOML that names pii_redaction': { components: '[[components]]\nkind = "pii_redaction"\n[components.config.builtin]\naction = = "hash"\n', writesNothing: true },
  'invalid TOML that names a misspelt pii-redaction': { components: '[[components]]\nkind = "PII-Redaction"\n[components.config.builtin]\naction = = "hash"\n', writesNothing: true },
  // Valid TOML the relay refuses for its shape, so the environment's exporters (ATOF and ATIF here) would take over.
  '[components] written for [[components]] (the document is refused for its shape)': {
    components: '[components]\nkind = "pii_redaction"\n[components.config.builtin]\naction = "hash"\n',
    noObservability: true,
    writesNothing: true,
    // Native says nothing in its diagnostics about a document it cannot read: the plugin says it, as memory does.
    pluginConfigCodes: ['plugin.invalid_config', 'plugins_toml.outputs_withheld'],
  },
  'components = "pii_redaction" (the document is refused for its shape)': { components: 'components = "pii_redaction"\n', noObservability: true, writesNothing: true, pluginConfigCodes: ['plugin.invalid_config', 'plugins_toml.outputs_withheld'] },
  // No relay registers these kinds: native refuses the document at activation, and so does the memory relay.
  'a misspelt kind, pii-redaction (the document is rejected)': { components: '[[components]]\nkind = "pii-redaction"\n[components.config.builtin]\naction = "hash"\n', writesNothing: true, pluginConfigCodes: ['plugin.unknown_component', 'plugins_toml.outputs_withheld'] },
  'a misspelt kind, PII_Redaction, and no observability component (the document is rejected)': {
    components: '[[components]]\nkind = "PII_Redaction"\n[components.config.builtin]\naction = "hash"\n',
    noObservability: true,
    writesNothing: true,
    pluginConfigCodes: ['plugin.unknown_component', 'plugins_toml.outputs_withheld'],
  },
  // Documents both relays accept (an unknown top-level key, an unknown field) that would run no redaction: not activated.
  '[[component]] written for [[components]] (accepted by both relays, no redaction would run)': {
    components: '[[component]]\nkind = "pii_redaction"\n[component.config.builtin]\naction = "hash"\n',
    noObservability: true,
    writesNothing: true,
    pluginConfigCodes: ['plugins_toml.redaction_not_run', 'plugins_toml.outputs_withheld'],
  },
  'a pii_redaction table inside the observability component (accepted by both relays, no redaction would run)': {
    components: '[components.config.pii_redaction.builtin]\naction = "hash"\n',
    writesNothing: true,
    pluginConfigCodes: ['plugins_toml.redaction_not_run', 'plugins_toml.outputs_withheld'],
  },
  'local_model (no local backend here)': { components: '[[components]]\nkind = "pii_redaction"\n[components.config]\nmode = "local_model"\n[components.config.local]\nbackend = "x"\n', writesNothing: true },
  'the redact hook alone, names included': {
    components: '',
    inNames: true,
    hook: (event) => {
      const scrub = (value: unknown): unknown =>
        typeof value === 'string' ? value.replace(new RegExp(`${TOKEN}-[a-z_0-9]+`, 'g'), '[hook]') : Array.isArray(value) ? value.map(scrub) : value !== null && typeof value === 'object' ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrub(v)])) : value;
      return { name: scrub(event.name) as string, data: scrub(event.data) as never, metadata: scrub(event.metadata) as never, ...(event.annotation !== undefined ? { annotation: scrub(event.annotation) as never } : {}) };
    },
  },
  'a hook that throws (fail closed)': {
    components: '',
    inNames: true,
    hook: () => {
      throw new Error('redactor bug');
    },
  },
};

describe('nothing redaction governs reaches any output', () => {
  for (const backend of FILE_BACKENDS) {
    describe.skipIf(!backend.available)(`${backend.name}`, () => {
      for (const [name, config] of Object.entries(HIDDEN)) {
        it(`${name}: no planted value in any file, span, stream or upload`, async () => {
          const run = await runComponents(backend.create(), {
            components: config.components,
            script: conversation(config.inNames === true),
            otlp: ['full', 'gen_ai', 'openinference'],
            remote: true,
            settingsAtif: true,
            ...(config.hook ? { plugin: { redact: config.hook } } : {}),
            ...(config.noObservability ? { noObservability: true } : {}),
            // The env ATOF/ATIF exporters must not take over when the document is rejected: set them too.
            ...(config.writesNothing ? {} : {}),
          });
          expect(leaks(run)).toEqual([]);
          if (config.writesNothing) {
            // Fail closed: nothing at all, and the reason is said.
            expect([...run.files.keys()].filter((f) => !f.endsWith('.jsonl') || run.files.get(f) !== '')).toEqual([]);
            expect(run.remoteBodies).toEqual([]);
            expect(Object.values(run.spans).flat()).toEqual([]);
            // (A document no parser reads is never activated: its diagnostics are the settings'.)
            expect([...run.status.pluginConfig.diagnostics, ...run.status.diagnostics].map((d) => d.code)).toContain('plugins_toml.outputs_withheld');
            expect(run.problems.some((p) => p.includes('nothing is written rather than unredacted output'))).toBe(true);
            if (config.pluginConfigCodes) expect(run.status.pluginConfig.diagnostics.map((d) => d.code)).toEqual(config.pluginConfigCodes);
          } else {
            // Something was written (a run that records nothing would pass vacuously).
            expect(run.events.length).toBeGreaterThan(10);
            expect(Object.values(run.spans).flat().length).toBeGreaterThan(5);
            expect(run.remoteBodies.length).toBeGreaterThan(0);
          }
          if (name.startsWith('a hook that throws')) expect(run.status.counters.redactionFailures).toBeGreaterThan(10);
        });
      }

      it('a document with pii_redaction and no observability component: the environment\'s ATOF file and trajectories are written, redacted', async () => {
        // A pricing- or redaction-only plugins.toml beside NEMO_RELAY_HOOKS_ATOF_ENABLED wrote no ATOF file at all
        // (the environment's ATIF was written): the document's redaction must govern that file too.
        const run = await runComponents(backend.create(), { components: HIDDEN['a pattern for the planted values']!.components, script: conversation(false), noObservability: true });
        expect(run.events.length).toBeGreaterThan(10);
        expect(run.settingsTrajectories.size).toBe(1);
        expect(leaks(run)).toEqual([]);
      });

      it('what redaction does not reach, as redaction.md lists it: object keys (OTLP attribute names too) and tool call ids; a redact hook rewrites keys', async () => {
        const address = 'ana.keyed@example.com';
        const script: Script = ({ hooks }) => {
          const base = { session_id: 'keys', turn_id: 't1' };
          hooks.emit('on_session_start', { session_id: 'keys' } as never);
          hooks.emit('pre_tool_call', { ...base, tool_name: 'send', tool_call_id: `call-${address}`, args: { [address]: 'cc', to: address } } as never);
          hooks.emit('post_tool_call', { ...base, tool_name: 'send', tool_call_id: `call-${address}`, result: { [address]: 'delivered' }, status: 'ok' } as never);
          hooks.emit('on_session_finalize', { session_id: 'keys' } as never);
        };
        const components = pii('action = "redact"\ndetector = "email"');
        const run = await runComponents(backend.create(), { components, script, otlp: ['full'] });
        const atof = [...run.files.entries()].filter(([name]) => name.endsWith('.jsonl')).map(([, text]) => text).join('\n');
        // The values are redacted; the key and the call id stay, in ATOF and as an OTLP attribute's name.
        expect(atof).toContain(`"to":"[REDACTED]"`);
        expect(atof).toContain(`"${address}":"cc"`);
        expect(atof).toContain(`"tool_call_id":"call-${address}"`);
        const attributeNames = Object.values(run.spans).flat().flatMap((span) => Object.keys((span as { attributes: object }).attributes));
        expect(attributeNames).toContain(`nemo_relay.start.data.${address}`);
        // The documented remedy for keys: a redact hook sees them, on both backends (the call id it is not given).
        const hook: RedactHook = (event) => {
          event.data = JSON.parse(JSON.stringify(event.data).replaceAll(address, '<email>'));
        };
        const hooked = await runComponents(backend.create(), { components, script, otlp: ['full'], plugin: { redact: hook } });
        const left = everything(hooked).match(new RegExp(`.{0,20}${address.replaceAll('.', '\\.')}`, 'g')) ?? [];
        expect(left.length).toBeGreaterThan(0);
        expect(left.filter((text) => !/call-ana/.test(text))).toEqual([]);
      });

      it('credential headers never leave, even with no redaction configured', async () => {
        const run = await runComponents(backend.create(), { components: '', script: conversation(false), otlp: ['full'], remote: true, settingsAtif: true });
        const found = leaks(run);
        // Everything else is recorded as the host sent it...
        expect(found).toContain(planted('request_body'));
        expect(found).toContain(planted('orphan_response'));
        // ...but no credential header, on any path (the recorded request, a raw hook payload in a mark).
        expect(found.filter((token) => /authorization|x_api_key|cookie/.test(token))).toEqual([]);
      });

      it('credential headers never leave in any form a client holds headers in; the other headers are recorded', async () => {
        const run = await runComponents(backend.create(), { components: '', script: clientHeaders, otlp: ['full'], remote: true, settingsAtif: true });
        const found = leaks(run);
        // The clients' and the host's other headers are there (a Headers used to be recorded as {}) ...
        for (const form of ['openai', 'anthropic', 'pairs', 'flat', 'har', 'map', 'text', 'class', 'tojson']) expect(found).toContain(planted(`${form}_team_header`));
        // ... and no credential, whatever the form.
        expect(found.filter((token) => !token.endsWith('_team_header'))).toEqual([]);
      });
    });
  }
});
