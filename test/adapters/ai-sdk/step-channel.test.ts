// The channel the AI SDK adapter follows a run's steps on (src/adapters/ai-sdk/step-context.ts) stays the SDK's
// after the runtime collects an earlier channel of the same name. Bun's node:diagnostics_channel holds channels weakly
// and a collected channel's finalizer deletes its name even after a new channel took it; misbehave.test.ts checks an
// uninstall and a second install; here, in a fresh process, a program that looked the SDK's channel up before it
// instrumented (as the SDK does when it traces a run) and let it go. The program's prepareStep asks a model: that call
// must be the sub-agent of the step it ran in. Bun collects on demand (`Bun.gc`); Node and Deno run the same order.
import { describe, expect, it } from 'vitest';
import { dist, runChild } from '../../support/child.ts';
import { repoRoot } from '../../support/doc-snippets.ts';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const module = (file: string): string => JSON.stringify(pathToFileURL(path.join(repoRoot, 'node_modules', file)).href);

const program = `
import * as dc from 'node:diagnostics_channel';
import { HookRegistry } from ${dist('src/index.js')};
import { instrumentAiSdk } from ${dist('src/adapters/ai-sdk/index.js')};
const { generateText, jsonSchema, stepCountIs, tool } = await import(${module('ai/dist/index.js')});
const { MockLanguageModelV4 } = await import(${module('ai/dist/test/index.js')});

const collect = () => globalThis.Bun?.gc(true);
// A lookup of the SDK's channel before the install, let go: collected now, finalized after the install binds.
dc.tracingChannel('ai:telemetry');
collect();
const hooks = new HookRegistry();
const sessions = new Set();
const roles = [];
hooks.on('on_session_start', (p) => sessions.add(p.session_id));
hooks.on('subagent_start', (p) => roles.push(p.child_role));
const uninstall = instrumentAiSdk(hooks);
for (let i = 0; i < 3; i++) {
  collect();
  await new Promise((resolve) => setTimeout(resolve, 5));
}

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const answer = (content, finish) => ({ content, finishReason: { unified: finish, raw: finish }, usage, warnings: [] });
let calls = 0;
const model = new MockLanguageModelV4({
  doGenerate: async () => (++calls === 1 ? answer([{ type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', input: '{"city":"Paris"}' }], 'tool-calls') : answer([{ type: 'text', text: 'Sunny in Paris.' }], 'stop')),
});
const planner = new MockLanguageModelV4({ doGenerate: async () => answer([{ type: 'text', text: 'Use the weather tool.' }], 'stop') });
const texts = [];
// Two runs, the runtime collecting between them: a channel the adapter moved off must not take the name again.
for (let run = 0; run < 2; run++) {
  calls = 0;
  const result = await generateText({
    model,
    prompt: 'Weather in Paris?',
    tools: { weather: tool({ inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } } }), execute: async ({ city }) => 'sunny in ' + city }) },
    stopWhen: stepCountIs(5),
    prepareStep: async ({ stepNumber }) => {
      if (stepNumber > 0) return undefined;
      const plan = await generateText({ model: planner, prompt: 'Plan the first step.' });
      return { instructions: plan.text };
    },
  });
  texts.push(result.text);
  for (let i = 0; i < 3; i++) {
    collect();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
uninstall();
console.log(JSON.stringify({ texts, sessions: sessions.size, roles }));
`;

describe('AI SDK: the step channel after an earlier channel of its name was collected', () => {
  it("a model call in prepareStep is the sub-agent of the step it ran in, in its run's session, run after run", () => {
    const child = runChild(program);
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(JSON.parse(child.stdout.trim().split('\n').at(-1)!)).toEqual({ texts: ['Sunny in Paris.', 'Sunny in Paris.'], sessions: 2, roles: ['generateText in step 1', 'generateText in step 1'] });
  });

  it("on Bun, the channel the adapter moves off is kept: its finalizer never takes the name from the one it moved to", () => {
    // The adapter's module run by Bun (a dev dependency, whatever runtime runs this suite): spans opened on the
    // registry's channel reach the adapter's store after each collection (the SDK looks the channel up between runs,
    // and a run's start binds again where the registry gave another).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nrh-step-channel-'));
    const script = path.join(dir, 'script.ts');
    fs.writeFileSync(script, `
import * as dc from 'node:diagnostics_channel';
import { enclosingStep, trackSteps } from ${JSON.stringify(path.join(repoRoot, 'src/adapters/ai-sdk/step-context.ts'))};
const collect = () => Bun.gc(true);
dc.tracingChannel('ai:telemetry');
collect();
const stop = trackSteps();
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    collect();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};
await settle();
const seen: Array<number | null> = [];
for (let round = 0; round < 4; round++) {
  dc.tracingChannel('ai:telemetry');
  enclosingStep('run-' + round);
  await settle();
  const step = dc.tracingChannel('ai:telemetry').start.runStores({ type: 'step', event: { callId: 'parent', stepNumber: round } }, () => enclosingStep('child'));
  seen.push(step?.stepNumber ?? null);
}
stop();
console.log(JSON.stringify(seen));
`);
    const child = spawnSync(path.join(repoRoot, 'node_modules', '.bin', 'bun'), [script], { encoding: 'utf8', timeout: 60_000 });
    fs.rmSync(dir, { recursive: true, force: true });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout.trim().split('\n').at(-1)!)).toEqual([0, 1, 2, 3]);
  });
});
