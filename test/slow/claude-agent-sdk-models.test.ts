// The Claude Agent SDK adapter on the query options that decide which model
// answers and how it thinks, on the real SDK and its bundled CLI against the
// loopback Anthropic API (test/support/anthropic-mock.ts), each written as
// the SDK's docs write it: extended thinking (`thinking`), a fallback model
// the CLI switches to when the main one is overloaded (`fallbackModel`), a
// model changed mid-conversation (`query.setModel`) and a system prompt of
// the program's own (`systemPrompt`). Each test holds the trajectory to what
// the CLI sent and received on the loopback (each attempt's model, the
// thinking it was answered with) and to what the SDK's result messages say
// (`usage`, `modelUsage`), on memory and on native.
//
// Slow (each query spawns the CLI), so it runs in `npm run test:slow`.
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { backends, expectNothingLost, llmModels, onlyTrajectory, recordedPlugin, viewLines, writtenFiles, type AtifDoc, type Recorded } from '../adapters/support.ts';
import { sameOnNative } from '../adapters/same-on-native.ts';
import type { MockReply, MockRequest } from '../support/anthropic-mock.ts';
import { modelUsageTotals, offlineApi as offlineApiOf, resultTotals, stepTotals, tokensByModel, turnByTurn, userMessage } from '../support/claude-checks.ts';

const cleanups: Array<() => Promise<void> | void> = [];
const offlineApi = (script: (request: MockRequest) => MockReply) => offlineApiOf(script, cleanups);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The models the program asks for (modelUsage is keyed by these); the API answers with a dated name. */
const MAIN = 'claude-main';
const SPARE = 'claude-spare';
const dated = (model: string): string => `${model}-2026-01-01`;
/** The name a step counts under in modelUsage: the one asked for, which the answer's dated name starts with. */
const askedFor = (answered: string): string => answered.replace(/-2026-01-01$/, '');

/** What the API signs thinking with: opaque, which a leak would show. */
const SIGNATURE = 'EqQBSignatureOfThinking' + 'c2lnbmF0dXJl'.repeat(40);

const overloaded: MockReply = { status: 529, errorType: 'overloaded_error', message: 'Overloaded' };

async function drain(iterable: AsyncIterable<any>): Promise<any[]> {
  const messages: any[] = [];
  for await (const message of iterable) messages.push(message);
  return messages;
}

/** Every attempt the adapter recorded, in order: the model its request names, and how it ended ([model asked, answered by | error type]). */
function attempts(log: Recorded['log']): Array<[unknown, unknown]> {
  const out: Array<[unknown, unknown]> = [];
  for (const { hook, payload } of log) {
    if (hook === 'pre_api_request') out.push([(payload.request as { body: { model?: string } }).body.model, undefined]);
    else if (hook === 'api_request_error') out.at(-1)![1] = `error:${(payload.error as { type: string }).type}`;
    else if (hook === 'post_api_request') out.at(-1)![1] = payload.response_model;
  }
  return out;
}

/** What went over the loopback, in the same terms: each request's model, and the model that answered or the error type. */
function onTheWire(mock: { requests: MockRequest[]; replies: Array<{ model: string; reply: MockReply }> }): Array<[unknown, unknown]> {
  return mock.requests.map((request, index) => {
    const reply = mock.replies[index]!;
    return [request.model, 'status' in reply.reply ? `error:${reply.reply.errorType}` : reply.model];
  });
}

describe('wrapClaudeAgentSdk: the model that answers, and how it thinks', () => {
  for (const backend of backends()) {
    it(`extended thinking: each step's reasoning is the thinking the API streamed (never its signature or a redacted block's data), the next request's history holds it as its response did, its tokens the API's (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) =>
        request.assistantTurns === 0
          ? {
              blocks: [
                { type: 'thinking', thinking: 'The user wants an echo; Bash can do it.', signature: SIGNATURE },
                { type: 'redacted_thinking', data: 'RW5jcnlwdGVkVGhpbmtpbmc=' },
                { type: 'tool_use', id: 'toolu_echo', name: 'Bash', input: { command: 'echo hi', description: 'Echo' } },
              ],
              usage: { input: 20, output: 30 },
              model: dated(MAIN),
            }
          : { blocks: [{ type: 'thinking', thinking: 'It printed hi.' }, { type: 'text', text: 'It says hi.' }], usage: { input: 60, output: 12, cacheRead: 10 }, model: dated(MAIN) },
      );
      const recorded = recordedPlugin(`claude-thinking-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      // As the SDK's docs write it: a fixed thinking budget.
      const messages = await drain(query({ prompt: 'Echo hi.', options: { model: MAIN, cwd: home, env, settingSources: [], allowedTools: ['Bash'], thinking: { type: 'enabled', budgetTokens: 4096 } } }));
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);

      // The CLI asked for thinking, and was answered with it, signed, beside a redacted block.
      // (For a model it does not know, the CLI asks for adaptive thinking in place of the budget.)
      expect(mock.requests.map((request) => ['enabled', 'adaptive'].includes(request.body.thinking?.type))).toEqual([true, true]);
      expect(messages.filter((m) => m.type === 'result').map((m) => m.subtype)).toEqual(['success']);

      const doc = onlyTrajectory(atif);
      const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
      expect(agent.map((step) => [step.reasoning_content, step.message, step.model_name])).toEqual([
        ['The user wants an echo; Bash can do it.', '', dated(MAIN)],
        ['It printed hi.', 'It says hi.', dated(MAIN)],
      ]);
      // The CLI sent the first answer's thinking back, signed, with the redacted block: the second request's recorded
      // messages hold that reasoning, on the assistant message it came with, as the first response recorded it.
      expect(JSON.stringify(mock.requests[1]!.body.messages)).toContain(SIGNATURE);
      const answered = recorded.log.filter((entry) => entry.hook === 'post_api_request')[0]!.payload.assistant_message;
      expect(answered).toMatchObject({ reasoning_content: 'The user wants an echo; Bash can do it.', tool_calls: [{ id: 'toolu_echo' }] });
      const resent = (recorded.log.filter((entry) => entry.hook === 'pre_api_request')[1]!.payload.request as { body: { messages: Array<Record<string, unknown>> } }).body.messages;
      expect(resent.filter((message) => message.role === 'assistant')).toEqual([answered]);
      // Nothing of the signature or the redacted block's opaque data anywhere the plugin wrote, nor in the hooks.
      for (const written of [JSON.stringify(atif), JSON.stringify(atof), writtenFiles(recorded), JSON.stringify(recorded.log)]) {
        expect(written).not.toContain('SignatureOfThinking');
        expect(written).not.toContain('sig-mock');
        expect(written).not.toContain('RW5jcnlwdGVkVGhpbmtpbmc=');
      }
      // The LLM span's answer carries the reasoning too.
      const ends = atof.filter((event) => event.kind === 'scope' && event.category === 'llm' && event.scope_category === 'end');
      expect(ends.map((event) => JSON.stringify(event.data).includes('It printed hi.'))).toEqual([false, true]);
      // Tokens as the API reported them (output tokens count the thinking), equal to what the SDK's result says.
      expect(agent.map((step) => [step.metrics.prompt_tokens, step.metrics.completion_tokens, step.metrics.cached_tokens])).toEqual([[20, 30, 0], [70, 12, 10]]);
      expect(stepTotals(doc)).toEqual(resultTotals(messages));
      expect(stepTotals(doc)).toEqual(modelUsageTotals(messages));
      // `view` shows each call's tokens as the API reported them, under the model that answered and the one asked for.
      const llmLines = (await viewLines(recorded, 'atif')).filter((line) => /[├└]─ (✗ )?LLM /.test(line));
      expect(llmLines.map((line) => line.replace(/^.* LLM (\S+ \(asked \S+\))\s+\S+\s+(.*?)\s{2}.*$/, '$1 $2'))).toEqual([`${dated(MAIN)} (asked ${MAIN}) 20 in / 30 out`, `${dated(MAIN)} (asked ${MAIN}) 70 in (10 cached) / 12 out`]);
      await sameOnNative(recorded);
    }, 120_000);

    it(`fallbackModel: every attempt on the overloaded main model is a failed attempt with its error, the fallback's answers name their model, each request the model it was sent to, the next turn the main model again (${backend} backend)`, async () => {
      // The main model is overloaded through the first turn (its requests hold no answer yet, or the tool call's).
      const { mock, env, home } = await offlineApi((request) => {
        if (request.model === MAIN) return request.assistantTurns < 2 ? overloaded : { blocks: [{ type: 'text', text: 'The main model is back.' }], usage: { input: 70, output: 6 }, model: dated(MAIN) };
        return request.assistantTurns === 0
          ? { blocks: [{ type: 'tool_use', id: 'toolu_echo', name: 'Bash', input: { command: 'echo spare', description: 'Echo' } }], usage: { input: 25, output: 6 }, model: dated(SPARE) }
          : { blocks: [{ type: 'text', text: 'The spare model answered.' }], usage: { input: 50, output: 5, cacheRead: 8 }, model: dated(SPARE) };
      });
      const recorded = recordedPlugin(`claude-fallback-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      const messages = await turnByTurn(query, ['Echo spare.', 'Anyone else?'], { model: MAIN, fallbackModel: SPARE, cwd: home, env, settingSources: [], allowedTools: ['Bash'] });
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);

      // What the CLI did: the main model refused until the CLI switched (it says so), the spare answered the rest of the
      // turn, and the next turn went to the main model again.
      const fallback = messages.find((m) => m.type === 'system' && m.subtype === 'model_fallback');
      expect(fallback).toMatchObject({ original_model: MAIN, fallback_model: SPARE, trigger: 'overloaded' });
      const wire = onTheWire(mock);
      const refused = wire.filter(([, answer]) => answer === 'error:overloaded_error').length;
      expect(refused).toBeGreaterThan(1);
      expect(wire).toEqual([...wire.slice(0, refused).map(() => [MAIN, 'error:overloaded_error']), [SPARE, dated(SPARE)], [SPARE, dated(SPARE)], [MAIN, dated(MAIN)]]);
      expect(messages.filter((m) => m.type === 'result').map((m) => m.subtype)).toEqual(['success', 'success']);

      // Each attempt as it was: one per request on the wire, its model the one the request went to, refused or answered.
      expect(attempts(recorded.log)).toEqual(wire.map(([model, answer]) => [model, answer === 'error:overloaded_error' ? 'error:overloaded' : answer]));
      // All of the first call's attempts are one call; its LLM spans name the model of each attempt.
      const calls = [...new Set(recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => entry.payload.api_request_id))];
      expect(calls).toHaveLength(3);
      expect(llmModels(atof, calls)).toEqual([wire.slice(0, refused + 1).map(([model]) => model), [SPARE], [MAIN]]);

      const doc = onlyTrajectory(atif);
      const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
      const failed = agent.filter((step) => step.extra?.invocation?.status === 'failed');
      expect(failed).toHaveLength(refused);
      expect(failed.every((step) => step.model_name === MAIN && JSON.stringify(step.message).includes('overloaded'))).toBe(true);
      // The last refusal is the one the CLI switched on: its error says so.
      expect(JSON.stringify(failed.at(-1)!.message)).toContain(fallback.content);
      expect(agent.filter((step) => step.extra?.invocation?.status !== 'failed').map((step) => step.model_name)).toEqual([dated(SPARE), dated(SPARE), dated(MAIN)]);
      // Each turn's end names the model that answered it last.
      expect(recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => entry.payload.model)).toEqual([dated(SPARE), dated(MAIN)]);
      // Tokens as the results and modelUsage count them, per model (the refused attempts cost none).
      expect(stepTotals(doc)).toEqual(resultTotals(messages));
      const { held, reported } = tokensByModel(atif, recorded.log, messages, askedFor);
      expect(held).toEqual(reported);
      expect(recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => entry.payload.unattributed_usage)).toEqual([undefined, undefined]);
      // `view` shows each refused attempt under the model it asked for, with its error, then the spare model's answers.
      const llmLines = (await viewLines(recorded, 'atif')).filter((line) => /[├└]─ (✗ )?LLM /.test(line));
      const shown = (line: string): string => {
        const [, failed, model] = /(✗ )?LLM (\S+)/.exec(line)!;
        const what = line.includes('ERROR overloaded: HTTP 529 overloaded (retry') ? 'refused, retried' : line.includes(`ERROR overloaded: ${fallback.content}`) ? 'refused, switched' : line.slice(line.lastIndexOf('  ') + 2);
        return `${failed ?? ''}${model} ${what}`;
      };
      expect(llmLines.map(shown)).toEqual([
        ...wire.slice(1, refused).map(() => `✗ ${MAIN} refused, retried`),
        `✗ ${MAIN} refused, switched`,
        `${dated(SPARE)} → Bash`,
        `${dated(SPARE)} The spare model answered.`,
        `${dated(MAIN)} The main model is back.`,
      ]);
      await sameOnNative(recorded);
    }, 180_000);

    it(`query.setModel between turns of a streaming-input conversation: each request names the model it was sent to, each step the one that answered (${backend} backend)`, async () => {
      const [FIRST, THEN] = [MAIN, SPARE];
      const { mock, env, home } = await offlineApi((request) => ({ blocks: [{ type: 'text', text: `${request.model} here.` }], usage: { input: 30, output: 4 }, model: dated(request.model) }));
      const recorded = recordedPlugin(`claude-set-model-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      // As the SDK's docs write streaming input: the next message once the previous turn's result is read, the model
      // changed in between.
      let release: () => void = () => {};
      async function* conversation() {
        yield userMessage('Who are you?');
        await new Promise<void>((resolve) => (release = resolve));
        yield userMessage('And now?');
      }
      const q = query({ prompt: conversation(), options: { model: FIRST, cwd: home, env, settingSources: [] } });
      const messages: any[] = [];
      let results = 0;
      for await (const message of q) {
        messages.push(message);
        if (message.type !== 'result') continue;
        if (++results === 2) break;
        await q.setModel(THEN);
        release();
      }
      const { atif, atof, counters } = await recorded.finish();
      expectNothingLost(counters);

      // Before it switches, the CLI checks the model with a request of its own, not streamed: the stream never shows it,
      // and modelUsage does not count it (below).
      expect(mock.requests.map((request) => [request.model, request.body.stream === true])).toEqual([[FIRST, true], [THEN, false], [THEN, true]]);
      expect(attempts(recorded.log)).toEqual(onTheWire(mock).filter((_, index) => mock.requests[index]!.body.stream === true));
      const doc = onlyTrajectory(atif);
      const agent = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent');
      expect(agent.map((step) => [step.model_name, step.message])).toEqual([
        [dated(FIRST), `${FIRST} here.`],
        [dated(THEN), `${THEN} here.`],
      ]);
      const calls = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => entry.payload.api_request_id);
      expect(llmModels(atof, calls)).toEqual([[FIRST], [THEN]]);
      // Each turn's end names the model that answered it.
      expect(recorded.log.filter((entry) => entry.hook === 'on_session_end').map((entry) => entry.payload.model)).toEqual([dated(FIRST), dated(THEN)]);
      // Tokens per model as modelUsage counts them.
      const { held, reported } = tokensByModel(atif, recorded.log, messages, askedFor);
      expect(held).toEqual(reported);
      expect(Object.keys(reported).sort()).toEqual([FIRST, THEN]);
      await sameOnNative(recorded);
    }, 180_000);

    it(`systemPrompt (a string, or the claude_code preset with append): the CLI sends it inside its own, and the trajectory claims no system prompt; each query's model is its own (${backend} backend)`, async () => {
      const { mock, env, home } = await offlineApi((request) => ({ blocks: [{ type: 'text', text: 'Noted.' }], usage: { input: 12, output: 2 }, model: dated(request.model) }));
      const recorded = recordedPlugin(`claude-system-${backend}`, backend);
      const { query } = wrapClaudeAgentSdk(sdk, recorded.hooks);
      await drain(query({ prompt: 'Hi.', options: { model: MAIN, cwd: home, env, settingSources: [], systemPrompt: 'You are a release bot.' } }));
      await drain(query({ prompt: 'Salut.', options: { model: SPARE, cwd: home, env, settingSources: [], systemPrompt: { type: 'preset', preset: 'claude_code', append: 'Always answer in French.' } } }));
      const { atif, counters } = await recorded.finish();
      expectNothingLost(counters);

      // On the wire: each system prompt holds the program's text, and more the CLI adds around it.
      expect(mock.requests).toHaveLength(2);
      expect(mock.requests[0]!.system).toContain('You are a release bot.');
      expect(mock.requests[0]!.system).not.toBe('You are a release bot.');
      expect(mock.requests[1]!.system).toContain('Always answer in French.');
      expect(mock.requests[1]!.system.length).toBeGreaterThan(1000);
      // The trajectory says nothing it was not shown: no request holds a system message.
      const requests = recorded.log.filter((entry) => entry.hook === 'pre_api_request').map((entry) => (entry.payload.request as { body: { messages: Array<{ role: string }> } }).body.messages);
      expect(requests).toHaveLength(2);
      expect(requests.flat().map((message) => message.role)).toEqual(['user', 'user']);
      expect(atif).toHaveLength(2);
      for (const doc of atif) expect(JSON.stringify(doc)).not.toMatch(/release bot|answer in French/);
      // Each query's requests name the model it asked for, its steps the one that answered.
      expect(mock.requests.map((request) => request.model)).toEqual([MAIN, SPARE]);
      expect(attempts(recorded.log)).toEqual(onTheWire(mock));
      const bySession = new Map(atif.map((doc) => [doc.session_id, (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent').map((step) => step.model_name)]));
      const sessions = recorded.log.filter((entry) => entry.hook === 'post_api_request').map((entry) => entry.payload.session_id);
      expect(sessions.map((session) => bySession.get(session))).toEqual([[dated(MAIN)], [dated(SPARE)]]);
      await sameOnNative(recorded);
    }, 180_000);
  }
});
