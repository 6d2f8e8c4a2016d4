// The response cache with media in managed calls (docs/operators/cache.md,
// "Media in managed calls"): a managed call's request and answer are the
// cache's key and value, so they keep their media whole on both backends,
// while everything observed has its media left out
// (docs/contributing/payload-journey.md). Two requests that differ only in
// the bytes of equally large images must not share an answer, and a cached
// answer that holds an image must come back with its bytes, as the miss did.
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FILE_BACKENDS } from '../contract/backends.ts';
import { runComponents, type Script } from '../support/component-run.ts';
import type { RedactableEvent } from '../../src/plugin/egress.ts';

const cacheToml = [
  '[[components]]',
  'kind = "adaptive"',
  '[components.config.response_cache]',
  'namespace = "media"',
  '[components.config.response_cache.tools]',
  'enabled = true',
  '[components.config.response_cache.tools.classes.ro]',
  'cacheable = true',
  'members = ["describe_*"]',
  '',
].join('\n');

/** Two PNG images of the same size, different bytes. */
function pngs(): [Buffer, Buffer] {
  const head = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  return [Buffer.concat([head, randomBytes(4096)]), Buffer.concat([head, randomBytes(4096)])];
}

interface ImageKind {
  readonly what: string;
  /** The image as the host holds it. */
  as(bytes: Buffer): unknown;
  /** The bytes back from what the provider (or the tool) was handed. */
  bytesOf(image: unknown): Buffer;
}

const KINDS: readonly ImageKind[] = [
  { what: 'a Buffer', as: (bytes) => Buffer.from(bytes), bytesOf: (image) => image as Buffer },
  {
    what: 'a data URL',
    as: (bytes) => `data:image/png;base64,${bytes.toString('base64')}`,
    bytesOf: (image) => Buffer.from((image as string).slice('data:image/png;base64,'.length), 'base64'),
  },
];

/** A chat completion, as the provider's API returns it. */
function completion(content: unknown): Record<string, unknown> {
  return { id: 'chatcmpl-1', object: 'chat.completion', model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 800, completion_tokens: 4 } };
}

/** A value with each long string as its length and hash: equal exactly when the value is, and short to read in a failure. */
function brief(value: unknown): unknown {
  if (typeof value === 'string') return value.length < 200 ? value : `${value.length} characters, sha256 ${createHash('sha256').update(value).digest('hex').slice(0, 16)}`;
  if (Array.isArray(value)) return value.map(brief);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, brief(item)]));
  return value;
}

const ids = (i: number) => ({ session_id: 's', turn_id: 't', api_request_id: `a${i}` });

const redactions: { what: string; redact?: (event: RedactableEvent) => void }[] = [
  { what: 'no redact hook' },
  // A hook that changes nothing: native's managed call is handed what the hook gives back.
  { what: 'a redact hook', redact: () => undefined },
];

describe('the response cache keys and answers managed calls with their media whole', () => {
  for (const backend of FILE_BACKENDS.filter((b) => b.available)) {
    for (const kind of KINDS) {
      for (const { what, redact } of redactions) {
        it(`two calls that differ only in the bytes of equally large images each get their own answer (${backend.name}, ${kind.what}, ${what})`, async () => {
          const images = pngs();
          const answers: string[] = [];
          const toolResults: unknown[] = [];
          let sent = 0;
          let ran = 0;
          /** The provider tells the images apart by their bytes, as a model would by what they show. */
          const which = (image: unknown): string => (kind.bytesOf(image).equals(images[0]) ? 'the first picture' : kind.bytesOf(image).equals(images[1]) ? 'the second picture' : 'neither');
          const script: Script = async ({ hooks }) => {
            hooks.emit('on_session_start', { session_id: 's', model: 'gpt-4o' } as never);
            for (const [i, bytes] of images.entries()) {
              const request = { model: 'gpt-4o', temperature: 0, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image', media_type: 'image/png', image: kind.as(bytes) }] }] };
              const result = (await hooks.execute('llm_execution', { ...ids(i), provider: 'openai', model: 'gpt-4o', request } as never, ((payload: { request: typeof request }) => {
                sent += 1;
                return completion(`It is ${which(payload.request.messages[0]!.content[1]!.image)}.`);
              }) as never)) as { choices?: { message: { content: string } }[]; assistant_message?: { content: string } };
              answers.push(result.choices?.[0]!.message.content ?? result.assistant_message!.content);
              toolResults.push(
                await hooks.execute('tool_execution', { ...ids(i), tool_name: 'describe_image', tool_call_id: `c${i}`, args: { image: kind.as(bytes) } } as never, ((payload: { args: { image: unknown } }) => {
                  ran += 1;
                  return { description: which(payload.args.image) };
                }) as never),
              );
            }
            hooks.emit('on_session_finalize', { session_id: 's' } as never);
          };
          const run = await runComponents(backend.create(), { components: cacheToml, script, ...(redact !== undefined ? { plugin: { redact } } : {}) });
          expect(run.problems).toEqual([]);
          expect(sent, 'the provider is asked about each image').toBe(2);
          expect(answers).toEqual(['It is the first picture.', 'It is the second picture.']);
          expect(ran, 'the tool runs for each image').toBe(2);
          expect(toolResults).toEqual([{ description: 'the first picture' }, { description: 'the second picture' }]);
          const statuses = run.events.filter((event) => event.name === 'response_cache').map((event) => (event.data as { status: string }).status);
          expect(statuses).toEqual(['miss', 'miss', 'miss', 'miss']);
          // What a managed call records is its key and answer: the image whole, not left out.
          expect(run.atofText).not.toContain('[left out:');
          if (typeof kind.as(images[0]) === 'string') expect(run.atofText.includes(kind.as(images[1]) as string), 'the second image, whole, in the recorded request').toBe(true);
        }, 60_000);
      }
    }

    it(`a cached answer that holds an image comes back with its bytes, as the miss did (${backend.name})`, async () => {
      const [image] = pngs();
      const dataUrl = `data:image/png;base64,${image.toString('base64')}`;
      const base64 = image.toString('base64');
      const results: unknown[] = [];
      let sent = 0;
      const script: Script = async ({ hooks }) => {
        hooks.emit('on_session_start', { session_id: 's', model: 'gpt-4o' } as never);
        // Its own prompt per run: native's store is the process's, which other files of native-shared share.
        const request = { model: 'gpt-4o', temperature: 0, messages: [{ role: 'user', content: `Draw a cat (${image.subarray(16, 24).toString('hex')}).` }] };
        for (const i of [0, 1]) {
          results.push(
            await hooks.execute('llm_execution', { ...ids(i), provider: 'openai', model: 'gpt-4o', request } as never, (() => {
              sent += 1;
              return completion([{ type: 'text', text: 'Here it is.' }, { type: 'image_url', image_url: { url: dataUrl } }, { type: 'image', data: base64 }]);
            }) as never),
          );
        }
        hooks.emit('on_session_finalize', { session_id: 's' } as never);
      };
      const run = await runComponents(backend.create(), { components: cacheToml, script });
      expect(run.problems).toEqual([]);
      expect(sent, 'the second call is answered from the cache').toBe(1);
      const statuses = run.events.filter((event) => event.name === 'response_cache').map((event) => (event.data as { status: string }).status);
      expect(statuses).toEqual(['miss', 'hit']);
      // The miss is the provider's own object; the hit is the stored answer in the shape the plugin records.
      const miss = results[0] as { choices: { message: { content: unknown[] } }[] };
      const hit = results[1] as { assistant_message: { content: unknown[] } };
      expect(brief(miss.choices[0]!.message.content)).toEqual(brief([{ type: 'text', text: 'Here it is.' }, { type: 'image_url', image_url: { url: dataUrl } }, { type: 'image', data: base64 }]));
      expect(brief(hit.assistant_message.content), 'the hit holds the image bytes the miss held').toEqual(brief(miss.choices[0]!.message.content));
    }, 60_000);
  }
});
