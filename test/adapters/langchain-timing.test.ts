// When things happened in a LangChain run, checked against what the program
// really did (test/adapters/timing-checks.ts): createAgent with a tool on the
// real ChatOpenAI client, invoked and streamed (`streamMode: "messages"`, so
// the model streams on the wire), with the handler as
// docs/adapters/langchain.md passes it, against a loopback Chat Completions
// API that holds each answer (streamed: paced over the hold), and a tool that
// takes its time (test/adapters/timing-programs.ts). On the memory backend,
// and the native one where it loads, with the spans also exported over OTLP
// to a loopback collector.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAtif } from '../../src/formats/atif/validate.ts';
import { loopbackApi } from '../support/doc-snippets.ts';
import { FakeProvider } from './ai-sdk/wire.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { backends, expectNothingLost, recordedPlugin } from './support.ts';
import { checkTimes } from './timing-checks.ts';
import { langchainProgram } from './timing-programs.ts';

let api = new FakeProvider();
let server: Awaited<ReturnType<typeof loopbackApi>>;
let collector: Receiver;
beforeAll(async () => {
  server = await loopbackApi((url, init) => api.fetch(url, init));
  collector = await startHttpReceiver();
});
afterAll(async () => {
  await server.close();
  await collector.close();
});

describe('LangChain: the recorded times are when the program did each thing', () => {
  for (const backend of backends()) {
    for (const streamed of [false, true]) {
      it(`createAgent ${streamed ? '.stream (messages)' : '.invoke'} on ${backend}: each model call spans its exchange, the tool its run`, async () => {
        api = new FakeProvider();
        server.exchanges.length = 0;
        collector.requests.length = 0;
        const recorded = recordedPlugin(`lc-timing-${streamed ? 'stream' : 'invoke'}`, backend, { otlpEnabled: true, otlpType: 'full', otlpEndpoint: `${collector.url}/v1/traces` });
        const run = await langchainProgram({ hooks: recorded.hooks, api, serverUrl: server.url, streamed });

        const { atof, atif, counters } = await recorded.finish();
        expectNothingLost(counters);
        expect(atif).toHaveLength(1);
        expect(validateAtif(atif[0]!)).toEqual([]);
        checkTimes(atof, atif[0]!, { ...run, exchanges: server.exchanges, otlp: collector.spans() });
      }, 60_000);
    }
  }
});
