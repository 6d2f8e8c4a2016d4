// The LangChain adapter against random provider replies
// (langchain-random-run.ts): a few seeds per wire here, named by what their
// plan adds (between them: approvals, in a supervisor graph too; a handoff
// to a worker agent, tasks sent to it with `Send`; a tool that
// throws; an aborted run; a sub-agent run from a tool; a worker node retried
// by its retryPolicy; the handler put in every run by `instrumentLangChain`
// instead of `callbacks`, or beside them); test/slow/random-wire-adapters.test.ts runs more.
import { describe, expect, it } from 'vitest';
import { backends, comparable, type AtifDoc, type Recorded } from './support.ts';
import { LANGCHAIN_WIRES, runLangChainSeed, seedFeatures, type Attach } from './langchain-random-run.ts';

const onNative = backends().includes('native');

describe('LangChain on random provider replies', () => {
  for (const wire of LANGCHAIN_WIRES) {
    // Each seed here adds what the others here do not (seeds 3, 4 and 10 ran here too: a plain run, and features
    // seeds 1 and 13 have); the slow file runs seeds 5-28 on each wire.
    for (const seed of [1, 5, 13, 22, 38]) {
      const features = seedFeatures(seed, wire);
      it(`${wire}, seed ${seed}${features === '' ? '' : ` (${features})`}`, () => runLangChainSeed(seed, wire, onNative), 30_000);
    }
  }
});

// One seed's program run three ways: the handler in `callbacks`, from `instrumentLangChain` alone, and from both (the
// run keeps the handler it was given). Each run passes the seed's checks; the hooks and the trajectory are the same.
// Seed 25: approvals, and approvals inside the agent a tool runs; 37: approvals in the run and in a worker sent a task,
// its node retried.
describe('LangChain on random provider replies: instrumentLangChain writes what the explicit handler writes', () => {
  for (const seed of [25, 37]) {
    it(`chat, seed ${seed} (${seedFeatures(seed, 'chat', { attach: 'callbacks' })})`, async () => {
      const kept = new Map<Attach, { doc: unknown; hooks: unknown }>();
      for (const attach of ['callbacks', 'instrumentLangChain', 'both'] as const) {
        const keep = (doc: AtifDoc, log: Recorded['log']) => void kept.set(attach, { doc: comparable(doc), hooks: comparable(log) });
        await runLangChainSeed(seed, 'chat', onNative, { attach }, { keep });
      }
      const explicit = kept.get('callbacks')!;
      for (const attach of ['instrumentLangChain', 'both'] as const) {
        expect(kept.get(attach)!.hooks, `seed ${seed}: the hooks with ${attach}`).toEqual(explicit.hooks);
        expect(kept.get(attach)!.doc, `seed ${seed}: the trajectory with ${attach}`).toEqual(explicit.doc);
      }
    }, 60_000);
  }
});
