// When things happened across processes (docs/adapters/mcp.md): the AI SDK
// program of the timing tests (test/adapters/timing-programs.ts), whole and
// streamed, its model
// answers held by the loopback provider, runs its tool by calling an
// instrumented MCP server, a child process over stdio (cross-process-server.ts,
// whose `echo` tool takes TOOL_MS), through an instrumented client. The
// caller's files must pass checkTimes as an in-process tool's do, and the
// server's own files (read on the same machine clock) must place its session
// and tool call inside the caller's tool call, its tool call as long as the
// work, and its trajectory's steps at those times. On the memory backend, and
// native where it loads (both processes on the same one).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrumentMcpClient } from '../../../src/adapters/mcp/index.ts';
import { validateAtif } from '../../../src/formats/atif/validate.ts';
import { parseTimestamp } from '../../../src/shared/clock.ts';
import { silentLogger } from '../../../src/shared/logger.ts';
import { loopbackApi, wallMs } from '../../support/doc-snippets.ts';
import { FakeProvider } from '../ai-sdk/wire.ts';
import { expectNothingLost, processBackends, recordedPlugin, type AtifDoc, type AtofEvent } from '../support.ts';
import { checkTimes, TOOL_MS } from '../timing-checks.ts';
import { aiSdkProgram } from '../timing-programs.ts';
import type { ServerConfig } from './cross-process-server.ts';
import { writeServer } from './random-cross-process.ts';

/**
 * What two processes' readings of the one wall clock may disagree by (ms): each process's clock settles on the wall
 * clock from millisecond readings (src/shared/clock.ts), so a fresh one may be off by up to a tick either way.
 */
const CLOCK_MS = 2;
/** A span must last at least this share of the work it covers (timers fire late, never early). */
const SHARE = 0.8;

const runtimeArgs = process.versions.deno ? ['run', '-A'] : [];

interface Span {
  name: string;
  startMs: number;
  endMs: number;
}

/** The scope spans of `category` in `events`, each paired with its end by uuid. */
function spans(events: readonly AtofEvent[], category: string): Span[] {
  const ends = new Map(events.filter((e) => e.kind === 'scope' && e.scope_category === 'end').map((e) => [e.uuid as string, e]));
  return events
    .filter((e) => e.kind === 'scope' && e.category === category && e.scope_category === 'start')
    .map((start) => {
      const end = ends.get(start.uuid);
      expect(end, `${category} ${start.name} ends`).toBeDefined();
      return { name: String(start.name), startMs: parseTimestamp(start.timestamp) / 1000, endMs: parseTimestamp(end!.timestamp) / 1000 };
    });
}

function readOutput(dir: string): { atof: AtofEvent[]; atif: AtifDoc[] } {
  const list = (sub: string) => (existsSync(path.join(dir, sub)) ? readdirSync(path.join(dir, sub)).sort() : []);
  const atof = list('atof').flatMap((file) =>
    readFileSync(path.join(dir, 'atof', file), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as AtofEvent),
  );
  return { atof, atif: list('atif').map((file) => JSON.parse(readFileSync(path.join(dir, 'atif', file), 'utf8')) as AtifDoc) };
}

/** The server writes status.json last, once its plugin shut down; Deno's server sees no stdin close (docs/adapters/mcp.md). */
async function serverDone(dir: string): Promise<void> {
  const until = Date.now() + (process.versions.deno ? 0 : 30_000);
  while (!existsSync(path.join(dir, 'status.json')) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
}

let api = new FakeProvider();
let server: Awaited<ReturnType<typeof loopbackApi>>;
let script: ReturnType<typeof writeServer>;
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
  script = writeServer();
});
afterAll(async () => {
  await server.close();
  script.remove();
});

describe('MCP across processes: the server’s times sit inside the caller’s tool call', () => {
  for (const backend of processBackends()) {
    for (const streamed of [false, true]) {
      it(`AI SDK ${streamed ? 'streamText' : 'generateText'} calling a stdio MCP server on ${backend}`, async () => {
        api = new FakeProvider();
        server.exchanges.length = 0;
        const dir = mkdtempSync(path.join(tmpdir(), 'nrh-mcp-timing-'));
        try {
          const config: ServerConfig = { name: 'weather-server', transport: 'stdio', instrument: true, backend, outDir: path.join(dir, 'server') };
          const recorded = recordedPlugin(`mcp-timing-${backend}`, backend);
          const mcp = instrumentMcpClient(new Client({ name: 'weather-agent', version: '1.0.0' }), recorded.hooks, { logger: silentLogger });
          let stderr = '';
          const transport = new StdioClientTransport({ command: process.execPath, args: [...runtimeArgs, script.script, JSON.stringify(config)], env: process.env as Record<string, string>, cwd: dir, stderr: 'pipe' });
          transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          await mcp.connect(transport);
          // Around the request: the server's work can only happen between these.
          const call = { sentMs: 0, answeredMs: 0 };
          const run = await aiSdkProgram({
            hooks: recorded.hooks,
            api,
            serverUrl: server.url,
            streamed,
            work: async () => {
              call.sentMs = wallMs();
              const result = await mcp.callTool({ name: 'echo', arguments: { text: 'Paris', delay_ms: TOOL_MS } });
              call.answeredMs = wallMs();
              return result.content;
            },
          });
          await mcp.close();
          await serverDone(config.outDir);

          const { atof, atif, counters } = await recorded.finish();
          expectNothingLost(counters);
          expect(atif).toHaveLength(1);
          expect(validateAtif(atif[0]!)).toEqual([]);
          // The caller's run reads as an in-process tool's does: the tool span covers execute, which covers the request.
          checkTimes(atof, atif[0]!, { ...run, exchanges: server.exchanges });

          const served = readOutput(config.outDir);
          expect(served.atif, `the server wrote its trajectory (its stderr: ${stderr})`).toHaveLength(1);
          const trajectory = served.atif[0]!;
          expect(validateAtif(trajectory)).toEqual([]);
          const callerTool = spans(atof, 'tool')[0]!;
          const sessions = spans(served.atof, 'agent');
          const tools = spans(served.atof, 'tool');
          expect(sessions, "the server's session").toHaveLength(1);
          expect(tools, "the server's tool call").toHaveLength(1);
          const [session, tool] = [sessions[0]!, tools[0]!];

          // The server's session holds its tool call, which took the work's time.
          expect(session.startMs).toBeLessThanOrEqual(tool.startMs);
          expect(tool.endMs).toBeLessThanOrEqual(session.endMs);
          expect(tool.endMs - tool.startMs, "the server's tool call lasts as long as its work").toBeGreaterThanOrEqual(SHARE * TOOL_MS);
          // Both sit inside the request, so inside the caller's tool call: the caller's span covers the server's work.
          expect(session.startMs + CLOCK_MS, 'the server session starts after the request was sent').toBeGreaterThanOrEqual(call.sentMs);
          expect(session.endMs - CLOCK_MS, 'the server session ends before its answer arrived').toBeLessThanOrEqual(call.answeredMs);
          expect(session.startMs + CLOCK_MS, "the server session starts inside the caller's tool call").toBeGreaterThanOrEqual(callerTool.startMs);
          expect(session.endMs - CLOCK_MS, "the server session ends inside the caller's tool call").toBeLessThanOrEqual(callerTool.endMs);
          expect(callerTool.endMs - callerTool.startMs).toBeGreaterThanOrEqual(session.endMs - session.startMs);

          // The server's trajectory (a tool that asks no model): its one step is the tool's result, stamped when the
          // tool call ended. It carries no start: the memory backend writes a standalone result as native does, without
          // the tool's invocation times, so the tool span's start is the ATOF file's alone.
          const steps = trajectory.steps as AtifDoc[];
          expect(steps.map((step) => [step.source, step.observation?.results?.[0]?.extra?.metadata?.tool_call_id])).toEqual([['system', 'call_paris']]);
          expect(parseTimestamp(steps[0]!.timestamp) / 1000, "the server's step is stamped at its tool call's end").toBeCloseTo(tool.endMs, 3);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }, 60_000);
    }
  }
});
