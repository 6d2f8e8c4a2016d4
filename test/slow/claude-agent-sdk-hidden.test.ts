// The Claude Agent SDK adapter on the model requests the CLI makes out of the
// stream's sight, on the real SDK and its bundled CLI against the loopback
// Anthropic API (test/support/anthropic-mock.ts): the request its WebSearch
// tool sends while it runs, the one WebFetch sends to read the page it
// fetched (from a loopback HTTPS server), a suggestion of the next prompt
// (`promptSuggestions`), and the summary `/compact` asks for. The result's
// `modelUsage` counts them (a suggestion, the next turn's; the last one, only
// the totals the CLI writes as it ends), the stream shows none: each test holds the trajectory's tokens, steps and turn ends'
// `unattributed_usage` together, to `modelUsage` per model, and the stated
// figure to what the mock answered that request with.
//
// Slow (each query spawns the CLI), so it runs in `npm run test:slow`.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { backends, recordedPlugin, type AtifDoc, type AtofEvent } from '../adapters/support.ts';
import type { MockReply, MockRequest } from '../support/anthropic-mock.ts';
import { loopbackCertificate } from '../support/loopback-certificate.ts';
import { isSummary, offlineApi as offlineApiOf, resultTotals, statedByTurn, stepTotals, tokensByModel, turnByTurn, userMessage } from '../support/claude-checks.ts';

/** The model the program asks for (`modelUsage` is keyed by it), and the one the API answers with. */
const ASKED = 'claude-sonnet-4-5';
const ANSWERED = 'claude-sonnet-4-5-20250929';
const askedFor = (answered: string): string => (answered === ANSWERED ? ASKED : answered);

const cleanups: Array<() => Promise<void> | void> = [];
const offlineApi = (script: (request: MockRequest) => MockReply) => offlineApiOf(script, cleanups);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const offeredTools = (request: MockRequest): string[] => ((request.body.tools ?? []) as Array<{ type?: string; name?: string }>).map((tool) => tool.type ?? tool.name ?? '');
const lastText = (request: MockRequest): string => JSON.stringify(request.body.messages.at(-1));
/** The CLI's own request for a web search: the search tool alone, the query in the CLI's words. */
const isSearch = (request: MockRequest): boolean => offeredTools(request).some((tool) => tool.startsWith('web_search')) && lastText(request).includes('Perform a web search for the query');
/** The CLI's own request to read a fetched page: no tools, the page's text and the model's question. */
const isPageRead = (request: MockRequest): boolean => offeredTools(request).length === 0 && lastText(request).includes('Web page content');
/** The CLI's own request for a suggestion of the user's next prompt (`promptSuggestions`). */
const isSuggestion = (request: MockRequest): boolean => lastText(request).includes('[SUGGESTION MODE:');

/** The `unattributed_usage` of each session end the backend wrote into its ATOF file. */
function statedInAtof(atof: AtofEvent[]): unknown[] {
  const found: unknown[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'unattributed_usage') found.push(inner);
        else walk(inner);
      }
    }
  };
  walk(atof);
  return found;
}

const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({ input_tokens: input, output_tokens: output, cache_read_input_tokens: cacheRead, cache_creation_input_tokens: cacheWrite });

describe('Claude Agent SDK: model requests the stream never shows', () => {
  for (const backend of backends()) {
    it(`WebSearch: the search's own request is not a step; its tokens are the turn end's unattributed_usage, and the totals are modelUsage's (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) => {
        if (isSearch(request)) return { blocks: [{ type: 'text', text: 'Berlin: sunny, 20 °C' }], usage: { input: 11, output: 7, cacheRead: 2 }, model: ANSWERED };
        if (request.assistantTurns === 0) return { blocks: [{ type: 'tool_use', id: 'toolu_search', name: 'WebSearch', input: { query: 'weather berlin' } }], usage: { input: 30, output: 8 }, model: ANSWERED };
        return { blocks: [{ type: 'text', text: 'It is sunny in Berlin.' }], usage: { input: 50, output: 5 }, model: ANSWERED };
      });
      const recorded = recordedPlugin(`claude-websearch-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const messages: any[] = [];
      for await (const message of query({ prompt: 'Weather in Berlin?', options: { model: ASKED, cwd: home, env, settingSources: [], allowedTools: ['WebSearch'] } })) messages.push(message);
      const { atif, atof } = await recorded.finish();

      // The CLI asked the model itself while the tool ran, with the main model; the stream showed the tool's result only.
      expect(mock.requests.map((request) => (isSearch(request) ? 'search' : 'main'))).toEqual(['main', 'search', 'main']);
      expect(mock.requests[1]!.model).toBe(ASKED);
      const toolResult = messages.find((m) => m.type === 'user' && m.tool_use_result !== undefined);
      expect(toolResult.tool_use_result).toMatchObject({ query: 'weather berlin' });
      expect(JSON.stringify(toolResult.tool_use_result)).not.toMatch(/tokens/);

      expect(atif).toHaveLength(1);
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      // Two steps, the main agent's two requests; the main loop's tokens are the results' usage, as before.
      expect((doc.steps as AtifDoc[]).filter((step) => step.source === 'agent').map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([[30, 8], [50, 5]]);
      expect(stepTotals(doc)).toEqual(resultTotals(messages));
      // modelUsage counts the search too: the turn's end states what no step holds, exactly the search's usage.
      expect(statedByTurn(recorded.log)).toEqual([{ [ASKED]: usage(11, 7, 2) }]);
      expect(statedInAtof(atof)).toEqual([{ [ASKED]: usage(11, 7, 2) }]);
      const { held, reported } = tokensByModel(atif, recorded.log, messages, askedFor);
      expect(reported).toEqual({ [ASKED]: [93, 20] });
      expect(held).toEqual(reported);
    }, 120_000);

    it(`WebFetch: the request that reads the fetched page is not a step; its tokens are the turn end's unattributed_usage (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) => {
        if (isPageRead(request)) return { blocks: [{ type: 'text', text: 'The page says hello.' }], usage: { input: 21, output: 4, cacheWrite: 3 }, model: ANSWERED };
        if (request.assistantTurns === 0) return { blocks: [{ type: 'tool_use', id: 'toolu_fetch', name: 'WebFetch', input: { url: pageUrl, prompt: 'What does it say?' } }], usage: { input: 30, output: 8 }, model: ANSWERED };
        return { blocks: [{ type: 'text', text: 'It says hello.' }], usage: { input: 50, output: 5 }, model: ANSWERED };
      });
      const certificate = loopbackCertificate(home, 'claude-agent-sdk-hidden WebFetch case');
      if (certificate === undefined) return;
      // WebFetch upgrades http to https: the page is served over TLS, with a certificate the CLI is told not to check.
      const page = https.createServer(certificate, (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end('<html><body><h1>Hello</h1><p>hello world</p></body></html>');
      });
      await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
      cleanups.push(() => new Promise<void>((resolve) => page.close(() => resolve())));
      const pageUrl = `https://127.0.0.1:${(page.address() as AddressInfo).port}/page`;
      const recorded = recordedPlugin(`claude-webfetch-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const messages: any[] = [];
      // skipWebFetchPreflight: the CLI otherwise asks claude.ai whether the domain may be fetched, and refuses a loopback one.
      const options = { model: ASKED, cwd: home, env: { ...env, NODE_TLS_REJECT_UNAUTHORIZED: '0' }, settingSources: [], allowedTools: ['WebFetch'], settings: { skipWebFetchPreflight: true } };
      for await (const message of query({ prompt: 'What does the page say?', options })) messages.push(message);
      const { atif, atof } = await recorded.finish();

      expect(mock.requests.map((request) => (isPageRead(request) ? 'page' : 'main'))).toEqual(['main', 'page', 'main']);
      const toolResult = messages.find((m) => m.type === 'user' && m.tool_use_result !== undefined);
      expect(toolResult.tool_use_result).toMatchObject({ code: 200, result: 'The page says hello.', url: pageUrl });

      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      expect((doc.steps as AtifDoc[]).filter((step) => step.source === 'agent').map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens])).toEqual([[30, 8], [50, 5]]);
      expect(statedByTurn(recorded.log)).toEqual([{ [ASKED]: usage(21, 4, 0, 3) }]);
      expect(statedInAtof(atof)).toEqual([{ [ASKED]: usage(21, 4, 0, 3) }]);
      const { held, reported } = tokensByModel(atif, recorded.log, messages, askedFor);
      expect(reported).toEqual({ [ASKED]: [104, 17] });
      expect(held).toEqual(reported);
    }, 120_000);

    for (const forkSession of [false, true]) it(`a query that ${forkSession ? 'forks' : 'resumes'} a session states only what it spent beyond its steps, not the earlier query's search the CLI's modelUsage carries over (${backend} backend)`, async () => {
      const { env, home } = await offlineApi((request) => {
        if (isSearch(request)) return { blocks: [{ type: 'text', text: 'Berlin: sunny, 20 °C' }], usage: { input: 11, output: 7 }, model: ANSWERED };
        if (request.assistantTurns === 0) return { blocks: [{ type: 'tool_use', id: 'toolu_search', name: 'WebSearch', input: { query: 'weather berlin' } }], usage: { input: 30, output: 8 }, model: ANSWERED };
        return { blocks: [{ type: 'text', text: `answer ${request.assistantTurns}` }], usage: { input: 50, output: 5 }, model: ANSWERED };
      });
      const options = { model: ASKED, cwd: home, env, settingSources: [], allowedTools: ['WebSearch'] };
      let sessionId = '';
      let earlier: Record<string, unknown> = {};
      for await (const message of sdk.query({ prompt: 'Weather in Berlin?', options })) {
        if (message.type === 'system' && message.subtype === 'init') sessionId = message.session_id;
        if (message.type === 'result') earlier = message.modelUsage;
      }
      const recorded = recordedPlugin(`claude-resumed-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const messages: any[] = [];
      for await (const message of query({ prompt: 'And tomorrow?', options: { ...options, resume: sessionId, forkSession } })) messages.push(message);
      const { atif } = await recorded.finish();
      // The CLI starts the resumed session's modelUsage from the earlier query's (search included): that query's
      // trajectory holds it. This turn spent one visible request and nothing else, and says so.
      const last = messages.filter((m) => m.type === 'result').at(-1);
      expect(last.modelUsage[ASKED]).toMatchObject({ inputTokens: 80 + 11 + 50, outputTokens: 13 + 7 + 5 });
      expect(statedByTurn(recorded.log)).toEqual([undefined]);
      const { held, reported } = tokensByModel(atif, recorded.log, messages, askedFor, earlier);
      expect(reported).toEqual({ [ASKED]: [50, 5] });
      expect(held).toEqual(reported);
    }, 120_000);

    it(`promptSuggestions: a suggestion is asked for after a turn's result, so the next turn's end states its tokens; the last one's, which no result counts, the last turn's end states from the totals the CLI writes as it ends (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) => {
        if (isSuggestion(request)) return { blocks: [{ type: 'text', text: 'now run the tests' }], usage: { input: 44, output: 2 }, model: ANSWERED };
        return { blocks: [{ type: 'text', text: `answer ${request.assistantTurns}` }], usage: { input: 50, output: 5 }, model: ANSWERED };
      });
      const recorded = recordedPlugin(`claude-suggestion-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const prompts = ['one', 'two', 'three'];
      // Each message once the previous turn's suggestion was read (the CLI suggests from the second turn on).
      let release: () => void = () => {};
      let wanted = 0;
      async function* conversation() {
        for (const [index, content] of prompts.entries()) {
          if (index > 0) await new Promise<void>((resolve) => (release = resolve));
          yield userMessage(content);
        }
      }
      const messages: any[] = [];
      for await (const message of query({ prompt: conversation(), options: { model: ASKED, cwd: home, env, settingSources: [], promptSuggestions: true } })) {
        messages.push(message);
        const results = messages.filter((m) => m.type === 'result').length;
        // The first turn has no suggestion: the next message goes after its result; later ones after their suggestion.
        if ((message.type === 'result' && results === 1) || message.type === 'prompt_suggestion') {
          if (++wanted >= prompts.length) break;
          release();
        }
      }
      const { atif } = await recorded.finish();

      expect(mock.requests.map((request) => (isSuggestion(request) ? 'suggestion' : 'main'))).toEqual(['main', 'main', 'suggestion', 'main', 'suggestion']);
      expect(messages.map((m) => m.type).filter((type) => type === 'result' || type === 'prompt_suggestion')).toEqual(['result', 'result', 'prompt_suggestion', 'result', 'prompt_suggestion']);
      // The suggestion after the second turn is in the third result's modelUsage, the one after the third in none.
      expect(messages.filter((m) => m.type === 'result').map((m) => m.modelUsage[ASKED].inputTokens)).toEqual([50, 100, 150 + 44]);
      // It is no step: three turns, one step each. The third turn's end states both: the one its result counts, and the
      // last, which the CLI counts only in the totals it writes to the session's transcript as it ends (`cost-state`).
      expect((atif[0]!.steps as AtifDoc[]).filter((step) => step.source === 'agent')).toHaveLength(3);
      expect(statedByTurn(recorded.log)).toEqual([undefined, undefined, { [ASKED]: usage(88, 4) }]);
      // So the trajectory holds every token the API reported, the last result's modelUsage one suggestion fewer.
      const { held, reported } = tokensByModel(atif, recorded.log, messages, askedFor);
      expect(reported).toEqual({ [ASKED]: [194, 17] });
      expect(held).toEqual({ [ASKED]: [150 + 88, 15 + 4] });
    }, 120_000);

    it(`/compact: a turn of its own whose end states the summary request's tokens, the other turns none; the next request starts at the summary (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) => {
        if (isSummary(request)) return { blocks: [{ type: 'text', text: '<summary>The user said hello.</summary>' }], usage: { input: 33, output: 9 }, model: ANSWERED };
        return { blocks: [{ type: 'text', text: `answer ${request.assistantTurns}` }], usage: { input: 50, output: 5 }, model: ANSWERED };
      });
      const recorded = recordedPlugin(`claude-compact-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const prompts = ['hello', '/compact', 'after'];
      // Each message once the previous turn's result was read: one turn each.
      const messages = await turnByTurn(query, prompts, { model: ASKED, cwd: home, env, settingSources: [] });
      const { atif, atof } = await recorded.finish();

      expect(mock.requests.map((request) => (isSummary(request) ? 'summary' : 'main'))).toEqual(['main', 'summary', 'main']);
      expect(messages.filter((m) => m.type === 'system' && m.subtype === 'compact_boundary').map((m) => m.compact_metadata.trigger)).toEqual(['manual']);
      // The /compact turn's result reports no usage: the summary is in modelUsage only.
      expect(messages.filter((m) => m.type === 'result').map((m) => m.usage.output_tokens)).toEqual([5, 0, 5]);

      // Three turns, one per message: /compact is one of its own (the CLI sends no UserPromptSubmit for it), and its end
      // states the summary's tokens; the message after it is the next turn's, not taken for the command.
      expect(recorded.log.filter((entry) => entry.hook === 'pre_llm_call').map((entry) => entry.payload.user_message)).toEqual(prompts);
      expect(recorded.log.filter((entry) => entry.hook === 'pre_api_request' || entry.hook === 'on_session_end').map((entry) => entry.hook)).toEqual(['pre_api_request', 'on_session_end', 'on_session_end', 'pre_api_request', 'on_session_end']);
      // The request after the compaction starts at the summary, as the CLI's does: the CLI joins the summary, the command
      // (in its own markup), what it printed and the new prompt into one user message; the recorded messages are those,
      // the command as the user sent it, and nothing of what was compacted away.
      const wire = (mock.requests.at(-1)!.body.messages as any[]).flatMap((m) => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content));
      const sent = wire.filter((b: any) => b.type === 'text' && !b.text.startsWith('<system-reminder>') && !b.text.startsWith('<local-command-caveat>')).map((b: any) => b.text.trim());
      expect(sent).toHaveLength(4);
      expect(sent[1]).toContain('<command-name>/compact</command-name>');
      const after = recorded.log.filter((entry) => entry.hook === 'pre_api_request').at(-1)!.payload.request as { body: { messages: Array<{ role: string; content: string }> } };
      expect(after.body.messages.map((m) => [m.role, m.content.trim()])).toEqual([sent[0], '/compact', sent[2], sent[3]].map((text) => ['user', text]));
      expect(sent[0]).toMatch(/^This session is being continued/);
      expect(sent[3]).toBe('after');

      // The ATIF trajectory holds the steps: a turn without a model request the stream showed has none.
      const doc = atif[0]!;
      expect(validateAtif(doc)).toEqual([]);
      expect((doc.steps as AtifDoc[]).map((step) => [step.source, step.message])).toEqual([
        ['user', 'hello'],
        ['agent', 'answer 0'],
        ['user', 'after'],
        ['agent', 'answer 0'],
      ]);
      expect(statedByTurn(recorded.log)).toEqual([undefined, { [ASKED]: usage(33, 9) }, undefined]);
      expect(statedInAtof(atof)).toEqual([{ [ASKED]: usage(33, 9) }]);
      const { held, reported } = tokensByModel(atif, recorded.log, messages, askedFor);
      expect(reported).toEqual({ [ASKED]: [133, 19] });
      expect(held).toEqual(reported);
    }, 120_000);
  }
});
