// Where a streamText repair's model call is the run's sub-agent, and where it is a session of its own.
//
// streamText parses the model's stream, and repairs its tool calls, as the stream is read. On Node 20 and 22 that
// code runs in the SDK's step span (its `ai:telemetry` tracing channel), so the repair's run finds the step it is
// part of (src/adapters/ai-sdk/step-context.ts). On Node 26 it runs in the streamText run's own span, which names no
// step: the repair's model call is then a session of its own, as it was before the step binding
// (docs/adapters/ai-sdk.md). Bun and Deno keep the step. Node 24 is not tested here.

const bun = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined';
const deno = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined';

/** Node 26 and later: a streamText repair's model call is a session of its own. */
export const STREAM_REPAIR_OUTSIDE_STEP = !bun && !deno && Number(process.versions.node.split('.')[0]) >= 26;
