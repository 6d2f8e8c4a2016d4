// The order `npm test` starts its files in. Vitest runs a project's files
// longest first once its cache (node_modules/.vite/vitest) has their
// durations, and largest first before that, as in a fresh clone. The files
// below are short but slow: they mostly wait, on child processes (agents,
// MCP servers, the CLI, the runtimes) or on answers a test holds back, so
// ordered by size they came last and ran on their own at the end while the
// other workers had finished (bench/RESULTS.md, "npm test's time: the files
// that wait start first"). Here they start first within their project, so
// their waiting overlaps the files that compute. Only the order changes:
// every file still runs in its own project, as vitest.config.ts puts it.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The suite's longest files by wall time, longest first. A file missing from here only starts later. */
export const STARTED_FIRST = [
  'test/adapters/mcp/agents.test.ts',
  'test/adapters/openai-agents/subagent-timing.test.ts',
  'test/adapters/openai-agents/memory.test.ts',
  'test/adapters/mcp/docs.test.ts',
  'test/cli/serve.test.ts',
  'test/adapters/ai-sdk/gemini.test.ts',
  'test/adapters/openai-agents/timing.test.ts',
  'test/adapters/langchain-subagent-timing.test.ts',
  'test/adapters/ai-sdk/subagent-timing.test.ts',
  'test/adapters/mcp/random-cross-process.test.ts',
  'test/docs/reference.test.ts',
  'test/adapters/openai-agents/aisdk.test.ts',
  'test/adapters/replay-timing.test.ts',
  'test/adapters/examples.test.ts',
  'test/adapters/openai-agents/docs.test.ts',
];

export class WaitingFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const at = STARTED_FIRST.indexOf(spec.moduleId.slice(spec.project.config.root.length + 1));
      return at === -1 ? STARTED_FIRST.length : at;
    };
    // Within each project's run of files (vitest reuses a process only while the next file is of the same
    // project), the listed files first, in the list's order; the rest as vitest ordered them.
    const out: TestSpecification[] = [];
    for (let start = 0; start < sorted.length; ) {
      let end = start;
      while (end < sorted.length && sorted[end]!.project === sorted[start]!.project) end++;
      const block = sorted.slice(start, end);
      out.push(...block.map((spec, index) => ({ spec, index })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.index - b.index).map(({ spec }) => spec));
      start = end;
    }
    return out;
  }
}
