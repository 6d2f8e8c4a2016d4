// The providers' APIs (OpenAI's and Anthropic's) on one loopback server for a test file, found by the clients a
// framework builds itself (a model named by a string, a client made without options) through the environment, as in
// a user's deployment: OPENAI_BASE_URL, ANTHROPIC_BASE_URL and their keys.
import { afterAll, beforeAll } from 'vitest';
import { loopbackApi } from './doc-snippets.ts';
import { withProcessEnv } from './process-env.ts';
import { scriptedFetch, type WireReply } from './provider-wire.ts';

export interface ProvidersOnLoopback {
  /** The next requests are answered with `replies`, in order; the environment points the clients at the server. */
  serve(replies: WireReply[]): ReturnType<typeof scriptedFetch>;
  /** The server's base URL (once the file's `beforeAll` ran). */
  readonly url: string;
}

/** Starts the server before the file's tests and closes it after them. */
export function providersOnLoopback(): ProvidersOnLoopback {
  let api = scriptedFetch([]);
  let server: { url: string; close(): Promise<void> } | undefined;
  beforeAll(async () => {
    server = await loopbackApi((url, init) => api.fetch(url, init as RequestInit));
  });
  afterAll(() => server?.close());
  return {
    serve(replies) {
      api = scriptedFetch(replies);
      withProcessEnv({ OPENAI_API_KEY: 'sk-test-not-a-key', OPENAI_BASE_URL: `${server!.url}/v1`, ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key', ANTHROPIC_BASE_URL: server!.url });
      return api;
    },
    get url() {
      return server!.url;
    },
  };
}
