// How the test files share processes (vitest.config.ts's projects). Every
// file not listed here shares its worker's process and module graph with
// the files before it (the 'shared' project). The files listed here leave
// process-wide state behind, each of a kind only its own group can stand:
//
// - NATIVE_SHARED: the files that load nemo-relay-node. Native's plugin host,
//   configuration and scope stack are process-wide, so they share processes
//   only with one another (the 'native-shared' project), where each file
//   closes what it activated and reads only the events of its own scopes.
//   test/support/native-stays-out.ts fails a file of the 'shared' project
//   that loads native, naming it, so a new one is added here;
// - OWN_PROCESS: files that each need a fresh process:
//   - NATIVE_FRESH: native files that compare what a first activation in a
//     process writes (plugin-managed files, session headers, the response
//     cache's store), or that mock or patch what the library reads once at
//     load (a missing optional package, the clock's origin). Run after other
//     native files in one process, they failed;
//   - SETS_SDK_DEFAULTS: the OpenAI Agents SDK's global `run()` keeps the
//     first `setDefaultOpenAIClient` client in its default runner, so a
//     second such file in the same process would talk to the first file's
//     fake API.
export const NATIVE_SHARED = [
  'test/adapters/ai-sdk/chat-route.test.ts',
  'test/adapters/ai-sdk/gemini.test.ts',
  'test/adapters/claude-agent-sdk/tool-during-reply.test.ts',
  'test/adapters/claude-agent-sdk/changed-input.test.ts',
  'test/adapters/response-facts.test.ts',
  'test/adapters/ai-sdk/providers.test.ts',
  'test/adapters/ai-sdk/misbehave.test.ts',
  'test/adapters/openai-agents/misbehave.test.ts',
  'test/adapters/openai-agents/same-behaviour.test.ts',
  'test/adapters/langchain-misbehave.test.ts',
  'test/adapters/ai-sdk/random-wire.test.ts',
  'test/adapters/ai-sdk/telemetry.test.ts',
  'test/adapters/hosted-tools.test.ts',
  'test/adapters/hosted-kinds.test.ts',
  'test/adapters/media.test.ts',
  'test/adapters/hosted-mcp-approval.test.ts',
  'test/adapters/ai-sdk/subagent-timing.test.ts',
  'test/adapters/ai-sdk/timing.test.ts',
  'test/adapters/langchain-random-wire.test.ts',
  'test/adapters/langchain-subagent-timing.test.ts',
  'test/adapters/langchain-timing.test.ts',
  'test/adapters/replay-timing.test.ts',
  'test/adapters/langchain.test.ts',
  'test/adapters/langchain-middleware.test.ts',
  'test/adapters/langgraph-programs.test.ts',
  'test/adapters/langgraph-send.test.ts',
  'test/adapters/mcp/agents-is-error.test.ts',
  'test/adapters/mcp/random-cross-process.test.ts',
  'test/adapters/mcp/rerun-same-folder.test.ts',
  'test/adapters/mcp/timing.test.ts',
  'test/adapters/mcp/ai-sdk-http.test.ts',
  'test/adapters/openai-agents/custom-model.test.ts',
  'test/adapters/openai-agents/handoffs.test.ts',
  'test/adapters/openai-agents/random-wire.test.ts',
  'test/adapters/openai-agents/subagent-timing.test.ts',
  'test/adapters/openai-agents/run-control.test.ts',
  'test/backends/atif-builder-loader.test.ts',
  'test/backends/bounded-payloads.test.ts',
  'test/backends/memory/atif-exporter.test.ts',
  'test/backends/memory/credential-headers.test.ts',
  'test/backends/memory/plugin-config.test.ts',
  'test/backends/memory/plugin-host.test.ts',
  'test/backends/memory/remote-destinations.test.ts',
  'test/backends/select.test.ts',
  'test/backends/trajectory-files.test.ts',
  'test/backends/transient-start.test.ts',
  'test/cli/doctor-demo.test.ts',
  'test/cli/replay.test.ts',
  'test/cli/scripting.test.ts',
  'test/components/adaptive-parity.test.ts',
  'test/components/configurations.test.ts',
  'test/components/genai-prices.test.ts',
  'test/components/leak.test.ts',
  'test/components/operator-docs.test.ts',
  'test/components/plugins-toml-components.test.ts',
  'test/components/pricing-parity.test.ts',
  'test/components/random-pricing.test.ts',
  'test/components/redaction-engine.test.ts',
  'test/components/redaction-parity.test.ts',
  'test/components/redaction-random.test.ts',
  'test/components/redaction-streams-random.test.ts',
  'test/components/whitespace-parity.test.ts',
  'test/contract/plugin-contract.test.ts',
  'test/contract/relay-contract.test.ts',
  'test/differential/atif-incremental.test.ts',
  'test/differential/corpus.test.ts',
  'test/differential/exit.test.ts',
  'test/differential/interleaved-sessions.test.ts',
  'test/differential/key-order.test.ts',
  'test/differential/odd-input.test.ts',
  'test/differential/random-managed.test.ts',
  'test/differential/random-streams.test.ts',
  'test/export/host-exit.test.ts',
  'test/export/otlp-config-values.test.ts',
  'test/export/otlp-delivery.test.ts',
  'test/export/otlp-env.test.ts',
  'test/export/otlp-gemini-parity.test.ts',
  'test/export/otlp-native-leftovers.test.ts',
  'test/export/otlp-native-parity.test.ts',
  'test/export/otlp-request-shapes.test.ts',
  'test/export/otlp-size-cap.test.ts',
  'test/export/random-llm-shapes.test.ts',
  'test/export/random-tool-values.test.ts',
  'test/export/storage.test.ts',
  'test/formats/atif-builder-native-differential.test.ts',
  'test/formats/atif-differential.test.ts',
  'test/formats/plugins-toml-document.test.ts',
  'test/formats/propagation.test.ts',
  'test/native/atif-exit.test.ts',
  'test/native/credential-headers.test.ts',
  'test/native/disk-faults.test.ts',
  'test/native/exporters.test.ts',
  'test/native/load.test.ts',
  'test/native/managed.test.ts',
  'test/native/payload-keys.test.ts',
  'test/native/plugin-host.test.ts',
  'test/native/probe.test.ts',
  'test/native/scopes.test.ts',
  'test/native/spans.test.ts',
  'test/native/torn-line.test.ts',
  'test/plugin/activation-once.test.ts',
  'test/plugin/bounded.test.ts',
  'test/plugin/default-outputs.test.ts',
  'test/plugin/egress.test.ts',
  'test/plugin/exit-without-shutdown.test.ts',
  'test/plugin/file-modes.test.ts',
  'test/plugin/secrets.test.ts',
  'test/plugin/shared-session-files.test.ts',
  'test/plugin/startup.test.ts',
  'test/plugin/subagent-agent.test.ts',
];

export const NATIVE_FRESH = [
  'test/backends/memory/native-parity.test.ts',
  'test/components/adaptive-random.test.ts',
  'test/components/genai-prices-missing.test.ts',
  'test/formats/atif-plugin-host.test.ts',
  'test/export/otlp-size-cap-native.test.ts',
];

export const SETS_SDK_DEFAULTS = [
  'test/adapters/openai-agents/approvals.test.ts',
  'test/adapters/openai-agents/failures.test.ts',
  'test/adapters/openai-agents/finish-reason.test.ts',
  'test/adapters/openai-agents/openai-models.test.ts',
  'test/adapters/openai-agents/openinference.test.ts',
  'test/adapters/openai-agents/programs.test.ts',
  'test/adapters/openai-agents/timing.test.ts',
  'test/adapters/openai-agents/tool-errors.test.ts',
];

export const OWN_PROCESS = [...NATIVE_FRESH, ...SETS_SDK_DEFAULTS];
