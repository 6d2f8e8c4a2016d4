// The Claude Agent SDK adapter with a `sessionStore` (the SDK's
// InMemorySessionStore, as its docs use it), on the real SDK and its bundled
// CLI against a loopback Anthropic API. The store is the only copy of the
// session when it is resumed: the CLI's local transcripts are removed first,
// as on a machine that never ran the earlier query. What the tests hold the
// trajectory to is what the CLI sent (the loopback server's requests) and
// what the SDK returned.
//
// Slow (each query spawns the CLI), so it runs in `npm run test:slow`, on
// Node, Bun and Deno (.ci/run).
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as sdk from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { wrapClaudeAgentSdk } from '../../src/adapters/claude-agent-sdk/index.ts';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { expectNothingLost, recordedPlugin, type AtifDoc } from '../adapters/support.ts';
import { offlineClaudeEnv, startAnthropicMock, type MockRequest } from '../support/anthropic-mock.ts';
import { recordedConversation, sentConversation } from '../support/claude-conversation.ts';

const MAIN_MODEL = 'claude-main-2026-01-01';
const SUB_MODEL = 'claude-sub-2026-01-01';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Whether a request's last user message is this prompt (a text block of its own; the CLI adds reminders beside it). */
function asks(request: MockRequest, prompt: string): boolean {
  const last = (request.body.messages as any[]).filter((m) => m.role === 'user').at(-1);
  if (last === undefined) return false;
  return typeof last.content === 'string' ? last.content === prompt : (last.content as any[]).some((b) => b.type === 'text' && b.text === prompt);
}

/** An offline CLI home and a loopback API; 'research Paris' sends a researcher that reads a file, in the foreground or (the CLI's default) in the background. */
async function setUp(label: string, agentRuns: 'foreground' | 'background' = 'foreground') {
  const recorded = recordedPlugin(label);
  let notes = '';
  const mock = await startAnthropicMock((request) => {
    if (request.system.includes('You are the researcher')) {
      return request.assistantTurns === 0
        ? { blocks: [{ type: 'tool_use', id: 'toolu_read_1', name: 'Read', input: { file_path: notes } }], usage: { input: 7, output: 3 }, model: SUB_MODEL }
        : { blocks: [{ type: 'text', text: 'Founded by the Parisii.' }], usage: { input: 15, output: 8 }, model: SUB_MODEL };
    }
    if (request.toolResults.some((result) => result.tool_use_id === 'toolu_task_1')) return { blocks: [{ type: 'text', text: 'The Parisii founded it.' }], usage: { input: 40, output: 6 }, model: MAIN_MODEL };
    if (asks(request, 'research Paris')) {
      return {
        blocks: [{ type: 'tool_use', id: 'toolu_task_1', name: 'Agent', input: { description: 'research Paris', prompt: 'Find how Paris was founded.', subagent_type: 'researcher', ...(agentRuns === 'foreground' ? { run_in_background: false } : {}) } }],
        usage: { input: 30, output: 6 },
        model: MAIN_MODEL,
      };
    }
    return { blocks: [{ type: 'text', text: `answer ${request.assistantTurns}` }], usage: { input: 5 + request.assistantTurns, output: 2 }, model: MAIN_MODEL };
  });
  const offline = offlineClaudeEnv(mock.url);
  cleanups.push(() => mock.close(), () => rmSync(offline.home, { recursive: true, force: true }));
  notes = path.join(offline.home, 'notes.txt');
  writeFileSync(notes, 'Paris was founded by the Parisii.\n');
  const store = new sdk.InMemorySessionStore();
  const options = {
    model: 'claude-main',
    cwd: offline.home,
    env: offline.env,
    settingSources: [],
    allowedTools: ['Read', 'Agent'],
    agents: { researcher: { description: 'Researches history', prompt: 'You are the researcher.', tools: ['Read'], model: 'claude-sub' } },
    sessionStore: store,
  };
  // The earlier queries, with the store mirroring what the CLI writes; then the local copies go, and only the store has the session.
  const history = async (prompts: string[]): Promise<{ sessionId: string; firstAnswer: string }> => {
    let sessionId = '';
    let firstAnswer = '';
    for (const prompt of prompts) {
      for await (const message of sdk.query({ prompt, options: sessionId === '' ? options : { ...options, resume: sessionId } })) {
        if (message.type === 'system' && message.subtype === 'init') sessionId = message.session_id;
        if (message.type === 'assistant' && firstAnswer === '') firstAnswer = message.uuid;
      }
    }
    expect(store.size, 'the store holds the session').toBe(1);
    rmSync(path.join(offline.home, '.claude', 'projects'), { recursive: true, force: true });
    return { sessionId, firstAnswer };
  };
  return { recorded, mock, offline, store, options, history };
}

describe('wrapClaudeAgentSdk with a sessionStore: the real SDK and CLI against a loopback Anthropic API', () => {
  for (const agentRuns of ['foreground', 'background'] as const) {
  it(`records a query resumed from the store (no local transcript) with the conversation the CLI sent, and its ${agentRuns} sub-agent from the copy the CLI resumed in`, async () => {
    const { recorded, mock, offline, options, history } = await setUp(`claude-store-resume-${agentRuns}`, agentRuns);
    const { sessionId } = await history(['first question', 'second question']);
    const earlier = mock.requests.length;
    // The caller's own hook sees which transcript the CLI resumes from.
    const transcriptPaths: string[] = [];
    const hooks = { UserPromptSubmit: [{ hooks: [async (input: any) => (transcriptPaths.push(input.transcript_path), {})] }] };
    const claude = wrapClaudeAgentSdk(sdk, recorded.hooks);
    const messages: any[] = [];
    for await (const message of claude.query({ prompt: 'research Paris', options: { ...options, hooks, resume: sessionId } })) messages.push(message);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(messages.find((m) => m.type === 'system' && m.subtype === 'init').session_id, 'the SDK resumed the session').toBe(sessionId);
    // The CLI resumed from a copy the SDK made from the store, outside the CLI's config folder (which no longer has the session).
    // (A background agent's notification starts a turn of the CLI's own, in the same session.)
    expect(new Set(transcriptPaths).size).toBe(1);
    expect(transcriptPaths[0]!.startsWith(offline.env.CLAUDE_CONFIG_DIR!)).toBe(false);
    expect(path.basename(transcriptPaths[0]!)).toBe(`${sessionId}.jsonl`);
    expect(existsSync(path.join(offline.env.CLAUDE_CONFIG_DIR!, 'projects'))).toBe(false);

    // The main agent's requests are the ones the CLI sent, the earlier conversation included.
    const sent = mock.requests.slice(earlier);
    const mainSent = sent.filter((request) => !request.system.includes('You are the researcher'));
    expect(sentConversation(mainSent[0]!.body.messages)).toEqual(['user:first question', 'assistant:answer 0', 'user:second question', 'assistant:answer 1', 'user:research Paris']);
    const ofSession = (hook: string, id: string) => recorded.log.filter((e) => e.hook === hook && e.payload.session_id === id).map((e) => e.payload);
    expect(ofSession('pre_api_request', sessionId).map((p) => recordedConversation((p.request as any).body.messages))).toEqual(mainSent.map((request) => sentConversation(request.body.messages)));
    expect(ofSession('pre_llm_call', sessionId).map((p) => [p.is_first_turn, recordedConversation(p.conversation_history as any[])])[0]).toEqual([
      false,
      ['user:first question', 'assistant:answer 0', 'user:second question', 'assistant:answer 1'],
    ]);

    // The sub-agent's steps are read from its transcript in the same copy: each reply of the model, with its usage.
    expect(atif).toHaveLength(1);
    const doc = atif[0]!;
    expect(validateAtif(doc)).toEqual([]);
    expect(doc.session_id).toBe(sessionId);
    const children = doc.subagent_trajectories as AtifDoc[];
    expect(children).toHaveLength(1);
    const subReplies = mock.replies.slice(mock.replies.length - sent.length).filter((entry) => entry.model === SUB_MODEL).map((entry) => entry.reply as any);
    expect(subReplies).toHaveLength(2);
    const childSteps = (children[0]!.steps as AtifDoc[]).filter((step) => step.source === 'agent');
    expect(childSteps.map((step) => [step.message, (step.tool_calls ?? []).map((call: AtifDoc) => call.tool_call_id), step.metrics?.prompt_tokens, step.metrics?.completion_tokens])).toEqual(
      subReplies.map((reply) => [reply.blocks.filter((b: any) => b.type === 'text').map((b: any) => b.text).join(''), reply.blocks.filter((b: any) => b.type === 'tool_use').map((b: any) => b.id), reply.usage.input, reply.usage.output]),
    );
    // And the main agent's token counts are the SDK's result usage.
    const results = messages.filter((m) => m.type === 'result');
    const mainSteps = (doc.steps as AtifDoc[]).filter((step) => step.source === 'agent' && step.llm_call_count !== 0);
    expect(mainSteps.reduce((sum, step) => sum + step.metrics.prompt_tokens, 0)).toBe(results.reduce((sum, m) => sum + m.usage.input_tokens + m.usage.cache_read_input_tokens + m.usage.cache_creation_input_tokens, 0));
    // The CLI starts modelUsage from what the stored session spent before (its cost-state record, in the copy it resumed
    // from); every request of this query is a step: no turn states tokens beyond them.
    expect(recorded.log.filter((e) => e.hook === 'on_session_end').map((e) => e.payload.unattributed_usage).filter((u) => u !== undefined)).toEqual([]);
  }, 180_000);
  }

  for (const how of ['continue', 'fork'] as const) {
    it(`records the conversation a query sent that ${how === 'continue' ? 'continues the store\'s latest session (continue: true)' : 'forks a stored session (forkSession, resumeSessionAt)'}`, async () => {
      const { recorded, mock, options, history } = await setUp(`claude-store-${how}`);
      const { sessionId, firstAnswer } = await history(['first question', 'second question']);
      const claude = wrapClaudeAgentSdk(sdk, recorded.hooks);
      let newId = '';
      const resumeOptions = how === 'continue' ? { continue: true } : { resume: sessionId, forkSession: true, resumeSessionAt: firstAnswer };
      for await (const message of claude.query({ prompt: 'third question', options: { ...options, ...resumeOptions } })) {
        if (message.type === 'system' && message.subtype === 'init') newId = message.session_id;
      }
      const { counters } = await recorded.finish();
      expectNothingLost(counters);
      if (how === 'continue') expect(newId).toBe(sessionId);
      else expect(newId).not.toBe(sessionId);
      const sent = sentConversation(mock.requests.at(-1)!.body.messages);
      expect(sent).toEqual(how === 'continue' ? ['user:first question', 'assistant:answer 0', 'user:second question', 'assistant:answer 1', 'user:third question'] : ['user:first question', 'assistant:answer 0', 'user:third question']);
      expect(recorded.log.filter((e) => e.hook === 'pre_api_request').map((e) => recordedConversation((e.payload.request as any).body.messages))).toEqual([sent]);
      expect(recorded.log.filter((e) => e.hook === 'on_session_end').map((e) => e.payload.unattributed_usage)).toEqual([undefined]);
    }, 180_000);
  }

  for (const failure of ['rejects', 'never answers'] as const) {
    it(`passes on the SDK's own error when the store's load ${failure}, and records nothing: no session started`, async () => {
      const { recorded, mock, store, options, history } = await setUp(`claude-store-load-${failure.replace(' ', '-')}`);
      const { sessionId } = await history(['first question']);
      const earlier = mock.requests.length;
      const broken = {
        append: (key: sdk.SessionKey, entries: sdk.SessionStoreEntry[]) => store.append(key, entries),
        load: failure === 'rejects' ? async (): Promise<never> => Promise.reject(new Error('store unreachable')) : (): Promise<never> => new Promise<never>(() => {}),
      };
      const run = async (claude: typeof sdk): Promise<{ messages: unknown[]; thrown: unknown }> => {
        const messages: unknown[] = [];
        try {
          for await (const message of claude.query({ prompt: 'second question', options: { ...options, sessionStore: broken, resume: sessionId, loadTimeoutMs: 500 } })) messages.push(message);
        } catch (error) {
          return { messages, thrown: error };
        }
        return { messages, thrown: undefined };
      };
      const bare = await run(sdk);
      const wrapped = await run(wrapClaudeAgentSdk(sdk, recorded.hooks));
      const { atif, atof, counters } = await recorded.finish();
      // The caller gets what the SDK alone gives: no message, the same error.
      expect(bare.thrown, 'the SDK itself throws').toBeInstanceOf(Error);
      expect(String(bare.thrown)).toContain(failure === 'rejects' ? 'store unreachable' : 'SessionStore.load() timed out after 500ms');
      expect(wrapped.messages).toEqual(bare.messages);
      expect(String(wrapped.thrown)).toBe(String(bare.thrown));
      // The CLI never started: no request, no session, nothing counted as lost.
      expect(mock.requests.length).toBe(earlier);
      expectNothingLost(counters);
      expect(recorded.log).toEqual([]);
      expect(atif).toEqual([]);
      expect(atof).toEqual([]);
    }, 180_000);
  }

  it('records the whole query when the store drops what the CLI mirrors (append rejects): the SDK reports it, the trajectory does not depend on it', async () => {
    const { recorded, mock, options } = await setUp('claude-store-append');
    const failing = { append: async (): Promise<never> => Promise.reject(new Error('store full')), load: async () => null };
    const claude = wrapClaudeAgentSdk(sdk, recorded.hooks);
    const messages: any[] = [];
    for await (const message of claude.query({ prompt: 'research Paris', options: { ...options, sessionStore: failing } })) messages.push(message);
    const { atif, counters } = await recorded.finish();
    expectNothingLost(counters);
    expect(messages.some((m) => m.type === 'system' && m.subtype === 'mirror_error'), 'the SDK said the store failed').toBe(true);
    expect(messages.find((m) => m.type === 'result').subtype).toBe('success');
    expect(atif).toHaveLength(1);
    expect(validateAtif(atif[0]!)).toEqual([]);
    const mainSent = mock.requests.filter((request) => !request.system.includes('You are the researcher'));
    const sessionId = atif[0]!.session_id as string;
    expect(recorded.log.filter((e) => e.hook === 'pre_api_request' && e.payload.session_id === sessionId).map((e) => recordedConversation((e.payload.request as any).body.messages))).toEqual(mainSent.map((request) => sentConversation(request.body.messages)));
    expect((atif[0]!.subagent_trajectories as AtifDoc[]).map((child) => (child.steps as AtifDoc[]).filter((step) => step.source === 'agent').length)).toEqual([2]);
  }, 180_000);
});
