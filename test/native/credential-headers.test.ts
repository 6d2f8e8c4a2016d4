// `dropCredentialHeaders()` on the native relay: while held, every payload is
// recorded as the plugin's walk (`withoutSensitiveHeaders`) would have handed
// it over, credential headers gone in every form, in the copy native gets
// anyway; once removed, payloads are recorded as given again (a direct user of
// the relay keeps what it records).
import { describe, expect, it } from 'vitest';
import { withoutSensitiveHeaders } from '../../src/shared/credential-headers.ts';
import type { NativeRelay } from '../../native/index.ts';
import { available, NativeFixture, type RecordedEvent } from './support.ts';

/** A payload with credentials under `headers` keys in every form, nested and at the top. */
function payload(): Record<string, unknown> {
  return {
    request: { method: 'POST', headers: { Authorization: 'Bearer SECRET-a', accept: 'json' } },
    forms: [
      { headers: [['x-api-key', 'SECRET-k'], ['accept', 'json']] },
      { headers: ['cookie', 'SECRET-c', 'accept', 'json'] },
      { headers: [{ name: 'Set-Cookie', value: 'SECRET-s' }, { name: 'accept', value: 'json' }] },
      { HEADERS: new Map([['proxy-authorization', 'SECRET-p'], ['accept', 'json']]) },
      { headers: 'anthropic-api-key: SECRET-a\r\naccept: json\r\n' },
      { headers: new Headers({ 'x-goog-api-key': 'SECRET-g', accept: 'json' }) },
    ],
    note: 'authorization: text outside a headers key is kept',
  };
}

/** Every payload kind the contract has, with `clean` applied to each payload first. */
function calls(r: NativeRelay, clean: (value: unknown) => unknown): void {
  const s = r.pushScope({ name: 's', category: 'agent', input: clean(payload()), metadata: clean(payload()) as never });
  r.mark({ name: 'm', parent: s, data: clean(payload()), metadata: clean(payload()) as never });
  const llm = r.llmStart({ name: 'llm', parent: s, request: { headers: clean({ headers: { cookie: 'SECRET-nested' } }) as never, content: clean(payload()) }, metadata: clean(payload()) as never });
  r.llmEnd(llm, { response: clean(payload()), metadata: clean(payload()) as never });
  const tool = r.toolStart({ name: 'tool', parent: s, args: clean(payload()), metadata: clean(payload()) as never });
  r.toolEnd(tool, { result: clean(payload()), annotation: clean(payload()), metadata: clean(payload()) as never });
  const failing = r.toolStart({ name: 'failing', parent: s, args: {} });
  r.toolEnd(failing, { result: clean(payload()), status: 'error', metadata: clean(payload()) as never });
  r.popScope(s, { output: clean(payload()), metadata: clean(payload()) as never });
}

/** What an event recorded of the caller's values (ids and times differ from run to run). */
const recorded = (events: RecordedEvent[]) => events.map((e) => ({ name: e.name, kind: e.kind, data: e.data, metadata: e.metadata, profile: (e as { category_profile?: unknown }).category_profile }));

describe.skipIf(!available)('native dropCredentialHeaders', () => {
  const fixture = new NativeFixture('credentials');

  it('records every payload as the walk would hand it over while held, and as given once removed', async () => {
    const walked = recorded(await fixture.recorded((r) => calls(r, withoutSensitiveHeaders)));
    let removal: (() => void) | undefined;
    const dropped = recorded(
      await fixture.recorded((r) => {
        removal = r.dropCredentialHeaders();
        calls(r, (value) => value);
      }),
    );
    expect(dropped).toEqual(walked);
    const text = JSON.stringify(dropped);
    expect(text).not.toContain('SECRET');
    expect(text).toContain('text outside a headers key is kept');
    // Removed (twice: the second does nothing), payloads are recorded as given.
    removal!();
    removal!();
    const given = JSON.stringify(await fixture.recorded((r) => calls(r, (value) => value)));
    expect(given.match(/SECRET-[a-z]+/g)?.length).toBeGreaterThan(50);
    expect(given).toContain('SECRET-nested');
  });
});
