// A host that emits the hooks itself (docs/hosts/emitting-hooks.md) with an
// image in its requests, as a multimodal agent loop does: the bytes it read
// from disk (a Buffer, a Uint8Array, an ArrayBuffer) or the image as a data
// URL or bare base64. Each model call's request repeats the conversation, so
// the image is in every `pre_api_request`; a tool's result carries it too.
// The relay's one copy of each payload (docs/contributing/payload-journey.md)
// leaves the bytes out by the adapters' rule, on memory and on native alike:
// the ATOF lines, the ATIF trajectory and the OTLP spans say what was sent and
// how big it was, and hold neither its base64 nor its bytes as numbers. The
// host's own objects keep their image.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { outputFiles } from '../cli/support.ts';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookRegistry, TurnIds } from '../../src/hooks/index.ts';
import { createNemoRelayPlugin } from '../../src/index.ts';
import type { RedactableEvent } from '../../src/plugin/egress.ts';
import { createHookRecorder } from '../../src/hook-log/hook-recorder.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import { startHttpReceiver, type Receiver } from '../support/otlp-receiver.ts';
import { backends, expectNothingLost, recordedPlugin, viewLines, type AtofEvent } from '../adapters/support.ts';

/** A 100 KB PNG, as a host reads one from disk. */
const IMAGE = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), randomBytes(100 * 1024 - 16)]);
const BASE64 = IMAGE.toString('base64');
const QUESTION = 'What is in this picture? Reply to ada@example.com';
const LEFT_OUT_BYTES = `[left out: ${IMAGE.byteLength} bytes]`;
const LEFT_OUT_BASE64 = `[left out: ${BASE64.length} characters of base64]`;

type Part = Record<string, any>;

interface ImageKind {
  readonly what: string;
  /** A fresh copy of the image for one run, as the host holds it. */
  image(): unknown;
  /** What the image becomes in every recorded copy. */
  readonly recorded: string;
}

const KINDS: readonly ImageKind[] = [
  { what: 'a Buffer', image: () => Buffer.from(IMAGE), recorded: LEFT_OUT_BYTES },
  { what: 'a Uint8Array', image: () => new Uint8Array(IMAGE), recorded: LEFT_OUT_BYTES },
  { what: 'an ArrayBuffer', image: () => new Uint8Array(IMAGE).buffer, recorded: LEFT_OUT_BYTES },
  { what: 'a data URL', image: () => `data:image/png;base64,${BASE64}`, recorded: `data:image/png;base64,${LEFT_OUT_BASE64}` },
  { what: 'a long base64 string', image: () => BASE64, recorded: LEFT_OUT_BASE64 },
];

/** The user's message as the host sends it: its text and the image part. */
function userMessage(image: unknown): Part {
  return { role: 'user', content: [{ type: 'text', text: QUESTION }, { type: 'image', media_type: 'image/png', image }] };
}

/** Neither the image's base64 nor its bytes as JSON numbers (a Buffer's `data` array, a typed array's elements). */
function expectNoImage(text: string, what: string): void {
  expect(text.includes(BASE64.slice(BASE64.length / 2, BASE64.length / 2 + 64)), `${what} holds the image's base64`).toBe(false);
  expect(/(\d{1,3},){256}/.test(text), `${what} holds bytes as numbers`).toBe(false);
  expect(/("\d+":\d{1,3},){256}/.test(text), `${what} holds bytes as an object of numbers`).toBe(false);
}

/** The bytes of a Buffer, a typed array or an ArrayBuffer, without a copy. */
function bytesOf(value: unknown): Buffer {
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  const view = value as Uint8Array;
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

/**
 * The image as the host gave it: the same type, and the same text or bytes. Compared as bytes: `toEqual` walks a
 * 100 KB array element by element, which was most of this file's time (bench/RESULTS.md, "npm test's time: checks
 * that cost more than what they check").
 */
function expectSameImage(actual: unknown, expected: unknown): void {
  if (typeof expected === 'string') return void expect(actual).toBe(expected);
  expect((actual as object).constructor).toBe((expected as object).constructor);
  expect(Buffer.compare(bytesOf(actual), bytesOf(expected))).toBe(0);
}

/**
 * The host program of docs/hosts/emitting-hooks.md with a picture: three model calls, each request repeating the
 * conversation with the image; the first asks for a tool whose result is the image again. Returns the host's
 * request objects, to check they were not changed.
 */
function hostRun(hooks: HookRegistry, sessionId: string, kind: ImageKind): Part[] {
  const image = kind.image();
  const turn = new TurnIds({ sessionId });
  hooks.emit('on_session_start', { session_id: sessionId, model: 'gpt-4o', platform: 'cli' });
  hooks.emit('pre_llm_call', { ...turn, user_message: QUESTION });
  const messages: Part[] = [userMessage(image)];
  const sent: Part[] = [];
  for (let call = 1; call <= 3; call++) {
    const api = turn.nextApiCall();
    const request = { body: { model: 'gpt-4o', messages: [...messages] } };
    sent.push(request);
    hooks.emit('pre_api_request', { ...turn, ...api, provider: 'openai', model: 'gpt-4o', request });
    if (call === 1) {
      const toolCall = { id: 'call_crop', type: 'function', function: { name: 'crop', arguments: '{"box":[0,0,10,10]}' } };
      hooks.emit('post_api_request', { ...turn, ...api, response: { choices: [{ message: { role: 'assistant', content: null, tool_calls: [toolCall] } }] }, usage: { prompt_tokens: 900, completion_tokens: 9 } });
      messages.push({ role: 'assistant', content: null, tool_calls: [toolCall] });
      hooks.emit('pre_tool_call', { ...turn, ...api, tool_call_id: 'call_crop', tool_name: 'crop', args: { box: [0, 0, 10, 10] } });
      hooks.emit('post_tool_call', { ...turn, ...api, tool_call_id: 'call_crop', tool_name: 'crop', result: { cropped: image } });
      messages.push({ role: 'tool', tool_call_id: 'call_crop', content: [{ type: 'image', media_type: 'image/png', image }] });
    } else {
      const text = call === 2 ? 'Looking closer.' : 'A cat on a roof.';
      hooks.emit('post_api_request', { ...turn, ...api, response: { choices: [{ message: { role: 'assistant', content: text } }] }, usage: { prompt_tokens: 900, completion_tokens: 5 } });
      messages.push({ role: 'assistant', content: text });
    }
  }
  hooks.emit('post_llm_call', { ...turn, assistant_response: 'A cat on a roof.' });
  hooks.emit('on_session_end', { ...turn, completed: true });
  hooks.emit('on_session_finalize', { session_id: sessionId });
  return sent;
}

/** The image part of the first user message of an LLM start's request, and its text part. */
function recordedUserParts(event: AtofEvent): Part[] {
  const messages = (event.data as Part).content.messages as Part[];
  return messages.find((message) => message.role === 'user')!.content as Part[];
}

describe('media in hooks a host emits: recorded as what it was, its bytes left out', () => {
  let collector: Receiver;
  beforeAll(async () => {
    collector = await startHttpReceiver();
  });
  afterAll(async () => {
    await collector.close();
  });

  for (const backend of backends()) {
    for (const kind of KINDS) {
      it(`${kind.what} in three requests and a tool result (${backend}, ATOF, ATIF, OTLP)`, async () => {
        collector.requests.length = 0;
        const recorded = recordedPlugin(`host-media-${backend}`, backend, { otlpEnabled: true, otlpType: 'full', otlpEndpoint: `${collector.url}/v1/traces` });
        const sent = hostRun(recorded.hooks, `host-media-${backend}`, kind);
        const { atif, atof, counters } = await recorded.finish();
        expectNothingLost(counters);

        // The host's objects are read, never changed: its requests still hold the image as it gave it.
        for (const request of sent) expectSameImage((request.body.messages[0] as Part).content[1].image, kind.image());

        const files = outputFiles(recorded.dir);
        expect(files.length).toBeGreaterThanOrEqual(2);
        for (const file of files) {
          const text = readFileSync(file, 'utf8');
          expectNoImage(text, path.relative(recorded.dir, file));
          expect(text, path.relative(recorded.dir, file)).toContain(kind.recorded);
          expect(text.length, `${path.relative(recorded.dir, file)} is no smaller than the image`).toBeLessThan(IMAGE.byteLength / 4);
        }

        // Every model call's request: the text as the host sent it, the image part with its bytes left out.
        const starts = atof.filter((event) => event.category === 'llm' && event.scope_category === 'start');
        expect(starts).toHaveLength(3);
        for (const start of starts) {
          expect(recordedUserParts(start)).toEqual([{ type: 'text', text: QUESTION }, { type: 'image', media_type: 'image/png', image: kind.recorded }]);
        }
        const third = (starts[2]!.data as Part).content.messages as Part[];
        expect(third.find((message) => message.role === 'tool')!.content).toEqual([{ type: 'image', media_type: 'image/png', image: kind.recorded }]);
        const toolEnd = atof.find((event) => event.category === 'tool' && event.scope_category === 'end')!;
        expect(toolEnd.data).toEqual({ cropped: kind.recorded });

        // The trajectory: one, valid, its steps' requests with the image left out.
        expect(atif).toHaveLength(1);
        const trajectory = JSON.stringify(atif[0]);
        expect(trajectory).toContain(QUESTION);
        expect(trajectory).toContain(JSON.stringify(kind.recorded));

        // OTLP: the spans say what was sent, not the bytes.
        const spans = JSON.stringify(collector.spans());
        expect(collector.spans().length).toBeGreaterThanOrEqual(3);
        expectNoImage(spans, 'the OTLP spans');
        expect(spans).toContain('left out: ');
        expect(spans.length).toBeLessThan(IMAGE.byteLength);

        // `view` reads the files in lines a person reads.
        for (const of of ['atif', 'atof'] as const) {
          for (const line of await viewLines(recorded, of)) expect(line.length, `view ${of}: ${line.slice(0, 120)}`).toBeLessThan(200);
        }
      }, 60_000);
    }
  }

  it('the ATOF byte path (ATOF files the only output, memory) leaves the bytes out as the copy does', async () => {
    for (const kind of KINDS) {
      const recorded = recordedPlugin('host-media-lines', 'memory', { atifEnabled: false });
      hostRun(recorded.hooks, 'host-media-lines', kind);
      const { atof, counters } = await recorded.finish();
      expectNothingLost(counters);
      for (const file of outputFiles(recorded.dir)) expectNoImage(readFileSync(file, 'utf8'), `${kind.what}: ${file}`);
      const starts = atof.filter((event) => event.category === 'llm' && event.scope_category === 'start');
      expect(starts, kind.what).toHaveLength(3);
      for (const start of starts) expect(recordedUserParts(start)[1], kind.what).toEqual({ type: 'image', media_type: 'image/png', image: kind.recorded });
      expect(atof.find((event) => event.category === 'tool' && event.scope_category === 'end')!.data, kind.what).toEqual({ cropped: kind.recorded });
    }
  }, 60_000);
  for (const backend of backends()) {
    it(`a redact hook sees the request's text as sent and its image left out, and redacts as before (${backend})`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), `nrh-host-media-redact-${backend}-`));
      const seen: string[] = [];
      const hooks = new HookRegistry({ logger: silentLogger });
      const plugin = createNemoRelayPlugin({
        backend,
        logger: silentLogger,
        env: {},
        settings: { atofEnabled: true, atofOutputDirectory: path.join(dir, 'atof'), atifEnabled: false },
        redact: (event: RedactableEvent) => {
          if (event.category === 'llm' && event.phase === 'start') seen.push(JSON.stringify(event.data));
          return { data: JSON.parse(JSON.stringify(event.data).replaceAll('ada@example.com', '<email>')) };
        },
      });
      plugin.register(hooks);
      hostRun(hooks, `host-media-redact-${backend}`, KINDS[0]!);
      await plugin.shutdown({ timeoutMs: 60_000 });
      expect(seen).toHaveLength(3);
      for (const data of seen) {
        expect(data).toContain(QUESTION);
        expect(data).toContain(LEFT_OUT_BYTES);
        expectNoImage(data, 'what the redact hook saw');
      }
      const lines = outputFiles(dir).map((file) => readFileSync(file, 'utf8')).join('');
      expect(lines).not.toContain('ada@example.com');
      expect(lines).toContain('Reply to <email>');
      expect(lines).toContain(LEFT_OUT_BYTES);
    }, 60_000);
  }

  it('a hook recording leaves the media out as the relay does, so its replay writes the same', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'nrh-host-media-recording-')), 'run.hooks.jsonl');
    const hooks = new HookRegistry({ logger: silentLogger });
    const recorder = createHookRecorder(hooks, file);
    hostRun(hooks, 'host-media-recording', KINDS[0]!);
    recorder.close();
    const text = readFileSync(file, 'utf8');
    expectNoImage(text, 'the recording');
    const request = text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Part).find((line) => line.hook === 'pre_api_request')!;
    expect(request.payload.request.body.messages[0].content).toEqual([{ type: 'text', text: QUESTION }, { type: 'image', media_type: 'image/png', image: LEFT_OUT_BYTES }]);
  });
});
