// When things happened in a LangChain run, checked against what the program
// really did (test/adapters/timing-checks.ts): createAgent with a tool on the
// real ChatOpenAI client, invoked and streamed (`streamMode: "messages"`, so
// the model streams on the wire), with the handler as
// docs/adapters/langchain.md passes it, against a loopback Chat Completions
// API that holds each answer (streamed: paced over the hold), and a tool that
// takes its time (test/adapters/timing-programs.ts). On the memory backend,
// and the native one where it loads, with the spans also exported over OTLP
// to a loopback collector.
import { describeTimes, langchainProgram } from './timing-programs.ts';

describeTimes('LangChain', 'lc-timing', ['createAgent .invoke', 'createAgent .stream (messages)'], langchainProgram);
