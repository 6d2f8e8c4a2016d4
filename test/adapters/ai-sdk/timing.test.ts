// When things happened in an AI SDK run, checked against what the program
// really did (test/adapters/timing-checks.ts): generateText and streamText
// with a tool and stopWhen, as docs/adapters/ai-sdk.md sets them up, on the
// real OpenAI provider against a loopback Responses API that holds each
// answer (streamed: paced over the hold), and a tool that takes its time
// (test/adapters/timing-programs.ts). On the memory backend, and the native
// one where it loads, with the spans also exported over OTLP to a loopback
// collector.
import { describeTimes, aiSdkProgram } from '../timing-programs.ts';

describeTimes('AI SDK', 'ai-timing', ['generateText', 'streamText'], aiSdkProgram);
