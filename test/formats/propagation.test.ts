// NeMo Relay's propagation context on the wire: ours writes native's exact
// text and reads what native reads. Every case runs through both: our
// functions and nemo-relay-node 0.9.2's own (`propagationContextToJson`,
// `propagationContextFromJson`, `propagationContextToTraceparent`); the
// outputs must be equal, and an input one refuses the other refuses too.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  PropagationContextError,
  propagationContextFromJson,
  propagationContextFromTraceparent,
  propagationContextToJson,
  propagationContextToTraceparent,
  type PropagationContext,
} from '../../src/formats/propagation.ts';
import * as memory from '../../src/backends/memory/index.ts';
import { nativeAvailable, nativeLoadError } from '../contract/backends.ts';

interface NativePropagation {
  propagationContextToJson(context: unknown): string;
  propagationContextFromJson(text: string): unknown;
  propagationContextToTraceparent(context: unknown): string;
}

const native: NativePropagation | null = nativeAvailable ? (createRequire(import.meta.url)('nemo-relay-node') as NativePropagation) : null;
if (native === null) console.warn(`propagation differential against native skipped: nemo-relay-node cannot load here (${nativeLoadError})`);

const P = '0190a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5c';
const R = '01a233c5-c139-7351-afa7-20703b2a920f';
const S = P.replaceAll('-', '');
const NIL = '00000000-0000-0000-0000-000000000000';

/** JSON texts, valid and not, each read by both. */
const TEXTS: string[] = [
  `{"version":1,"root_uuid":"${R}","parent_uuid":"${P}"}`,
  `{"version":1,"parent_uuid":"${P}"}`,
  `{"parent_uuid":"${P}","version":1,"root_uuid":"${R}"}`,
  ` {"parent_uuid":"${P}", "version":1} \n\t`,
  `{"version":1,"parent_uuid":"${P.toUpperCase()}","root_uuid":null,"extra":1}`,
  `{"version":1,"parent_uuid":"${S}"}`,
  `{"version":1,"parent_uuid":"urn:uuid:${P}"}`,
  `{"version":1,"parent_uuid":"urn:uuid:${P.toUpperCase()}"}`,
  `{"version":1,"parent_uuid":"URN:UUID:${P}"}`,
  `{"version":1,"parent_uuid":"{${P}}"}`,
  `{"version":1,"parent_uuid":"{${S}}"}`,
  `{"version":1,"parent_uuid":"urn:uuid:${S}"}`,
  `{"version":1,"parent_uuid":"ffffffff-ffff-ffff-ffff-ffffffffffff"}`,
  `{"version":1,"par\\u0065nt_uuid":"${P}"}`,
  `{"version":1,"parent_uuid":"\\u0030${P.slice(1)}"}`,
  `{"version":1,"parent_uuid":"${P}","x":1,"x":2}`,
  `{"version":1,"parent_uuid":"${P}","extra":{"a":[1,{"b":"}"}]},"big":1e999}`,
  `[1,null,"${P}"]`,
  `[1,"${R}","${P}"]`,
  `[1]`,
  `[1,null,"${P}",4]`,
  `[]`,
  `{"version":2,"parent_uuid":"${P}"}`,
  `{"version":0,"parent_uuid":"${P}"}`,
  `{"version":65535,"parent_uuid":"${P}"}`,
  `{"version":65536,"parent_uuid":"${P}"}`,
  `{"version":-1,"parent_uuid":"${P}"}`,
  `{"version":-0,"parent_uuid":"${P}"}`,
  `{"version":"1","parent_uuid":"${P}"}`,
  `{"version":1.0,"parent_uuid":"${P}"}`,
  `{"version":1e0,"parent_uuid":"${P}"}`,
  `{"version":01,"parent_uuid":"${P}"}`,
  `{"version":true,"parent_uuid":"${P}"}`,
  `{"version":null,"parent_uuid":"${P}"}`,
  `{"version":1,"parent_uuid":"${P}","parent_uuid":"${P}"}`,
  `{"version":1,"parent_uuid":"${P}","version":1}`,
  `{"version":1,"parent_uuid":"${P}","root_uuid":null,"root_uuid":null}`,
  `{"version":1,"parent_uuid":"${NIL}"}`,
  `{"version":1,"parent_uuid":"${P}","root_uuid":"${NIL}"}`,
  `{"version":2,"parent_uuid":"${NIL}"}`,
  `{"version":1,"parent_uuid":"${P.slice(0, 35)}"}`,
  `{"version":1,"parent_uuid":"${P} "}`,
  `{"version":1,"parent_uuid":"${S}x"}`,
  `{"version":1,"parent_uuid":"0190a2b3c4d5-7e6f-8a9b-0c1d2e3f4a5c"}`,
  `{"version":1,"parent_uuid":"nope"}`,
  `{"version":1,"parent_uuid":1}`,
  `{"version":1,"parent_uuid":null}`,
  `{"version":1,"parent_uuid":"${P}","root_uuid":5}`,
  `{"version":1,"parent_uuid":"${P}","root_uuid":""}`,
  `{"version":1,"root_uuid":"${R}"}`,
  `{"version":2}`,
  `{}`,
  `{"version":1,"parent_uuid":"${P}",}`,
  `{"version":1,"parent_uuid":"${P}"} x`,
  `{"version":1,"parent_uuid":"${P}"}{`,
  `{"version":1,"parent_uuid":"\\ud800"}`,
  `\ufeff{"version":1,"parent_uuid":"${P}"}`,
  `null`,
  `"x"`,
  ``,
  `  `,
];

/** Context objects, valid and not, each written by both. */
const CONTEXTS: unknown[] = [
  { version: 1, rootUuid: R, parentUuid: P },
  { version: 1, parentUuid: P },
  { version: 1, parentUuid: P.toUpperCase(), rootUuid: R.toUpperCase() },
  { version: 1, parentUuid: S },
  { version: 1, parentUuid: `{${P}}` },
  { version: 1, parentUuid: `urn:uuid:${P}` },
  { version: 1, parentUuid: P, extra: 1 },
  { version: 1.5, parentUuid: P },
  { version: 2, parentUuid: P },
  { version: 300, parentUuid: P },
  { version: -1, parentUuid: P },
  { version: null, parentUuid: P },
  { version: '1', parentUuid: P },
  { parentUuid: P },
  { version: 1, parentUuid: 'nope' },
  { version: 1, parentUuid: 5 },
  { version: 1, parentUuid: NIL },
  { version: 1, parentUuid: P, rootUuid: NIL },
  { version: 1, parentUuid: P, rootUuid: '' },
  { version: 1, parentUuid: P, rootUuid: null },
];

function outcome(run: () => string): { ok: string } | { error: true } {
  try {
    return { ok: run() };
  } catch {
    return { error: true };
  }
}

describe('propagation context wire format', () => {
  it('writes the JSON native writes, root first when there is one', () => {
    expect(propagationContextToJson({ version: 1, rootUuid: R, parentUuid: P })).toBe(`{"version":1,"root_uuid":"${R}","parent_uuid":"${P}"}`);
    expect(propagationContextToJson({ version: 1, parentUuid: P.toUpperCase() })).toBe(`{"version":1,"parent_uuid":"${P}"}`);
  });

  it('reads it back to the same context, any accepted uuid form made canonical', () => {
    expect(propagationContextFromJson(`{"version":1,"root_uuid":"${R}","parent_uuid":"${P}"}`)).toEqual({ version: 1, rootUuid: R, parentUuid: P });
    expect(propagationContextFromJson(`{"version":1,"parent_uuid":"urn:uuid:${P.toUpperCase()}","root_uuid":null}`)).toEqual({ version: 1, parentUuid: P });
  });

  it('refuses bad input with a typed error that names the field', () => {
    const refused = (text: string) => {
      try {
        propagationContextFromJson(text);
      } catch (error) {
        expect(error).toBeInstanceOf(PropagationContextError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${text}`);
    };
    expect(refused(`{"version":2,"parent_uuid":"${P}"}`)).toMatch(/unsupported propagation context version 2; expected 1/);
    expect(refused(`{"version":1,"parent_uuid":"${NIL}"}`)).toMatch(/parent_uuid is not a usable Relay identifier/);
    expect(refused(`{"version":1,"parent_uuid":"${P}","parent_uuid":"${P}"}`)).toMatch(/duplicate field `parent_uuid`/);
    expect(refused(`{"version":1.0,"parent_uuid":"${P}"}`)).toMatch(/floating point `1.0`/);
    expect(refused(`{"version":1}`)).toMatch(/missing field `parent_uuid`/);
    expect(refused(`{"version":1,"parent_uuid":"nope"}`)).toMatch(/parent_uuid is not a UUID/);
    expect(() => propagationContextToTraceparent({ version: 1, parentUuid: P })).toThrow(/rootless/);
  });

  it('gives the W3C traceparent of a rooted context: the root as trace id, the parent low 64 bits as span id', () => {
    expect(propagationContextToTraceparent({ version: 1, rootUuid: R, parentUuid: P })).toBe(`00-${R.replaceAll('-', '')}-${S.slice(16)}-01`);
  });

  it('continues a bare W3C traceparent: trace id as root, a parent uuid whose low 64 bits are the span id', () => {
    const context = propagationContextFromTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01') as PropagationContext;
    expect(context).toEqual({ version: 1, rootUuid: '0af76519-16cd-43dd-8448-eb211c80319c', parentUuid: '00000000-0000-0000-b7ad-6b7169203331' });
    // Written as native writes it, and back to the same traceparent.
    expect(propagationContextToTraceparent(context)).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    for (const bad of ['', 'nope', '00-00000000000000000000000000000000-b7ad6b7169203331-01', '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01', 'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra', '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01']) {
      expect(propagationContextFromTraceparent(bad), bad).toBeUndefined();
    }
    // A later version may add fields after the four it shares with 00.
    expect(propagationContextFromTraceparent('01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-more')).toBeDefined();
  });

  it('is exported from nemo-relay-hooks/memory', () => {
    expect(memory.propagationContextToJson).toBe(propagationContextToJson);
    expect(memory.propagationContextFromJson).toBe(propagationContextFromJson);
    expect(memory.PropagationContextError).toBe(PropagationContextError);
  });
});

describe.skipIf(native === null)('propagation context: the same as nemo-relay-node 0.9.2', () => {
  it.each(TEXTS.map((text) => [JSON.stringify(text), text]))('reads %s as native does', (_label, text) => {
    const theirs = outcome(() => native!.propagationContextToJson(native!.propagationContextFromJson(text)));
    const ours = outcome(() => propagationContextToJson(propagationContextFromJson(text)));
    expect(ours).toEqual(theirs);
  });

  it.each(CONTEXTS.map((context) => [JSON.stringify(context), context]))('writes %s as native does', (_label, context) => {
    const version = typeof context === 'object' && context !== null ? (context as { version?: unknown }).version : undefined;
    if (process.versions.deno !== undefined && typeof version === 'string') {
      // Deno's N-API layer turns the string "1" into the number native asks for, so native
      // accepts there what it rejects on Node; ours rejects it on every runtime, as native on Node.
      console.log(`skipped on Deno: native reads version ${JSON.stringify(version)} as a number through Deno's N-API; ours rejects it as native on Node does`);
      expect(outcome(() => propagationContextToJson(context as PropagationContext))).toEqual({ error: true });
      return;
    }
    expect(outcome(() => propagationContextToJson(context as PropagationContext))).toEqual(outcome(() => native!.propagationContextToJson(context)));
    const rooted = typeof context === 'object' && context !== null && !('rootUuid' in context) ? { ...context, rootUuid: R } : context;
    expect(outcome(() => propagationContextToTraceparent(rooted as PropagationContext))).toEqual(outcome(() => native!.propagationContextToTraceparent(rooted)));
  });

  it('reads every context it writes, for two hundred random ones', () => {
    for (let i = 0; i < 200; i++) {
      const hex = () => crypto.randomUUID();
      const context: PropagationContext = i % 3 === 0 ? { version: 1, parentUuid: hex() } : { version: 1, rootUuid: hex(), parentUuid: hex() };
      const text = propagationContextToJson(context);
      expect(text).toBe(native!.propagationContextToJson(context));
      expect(propagationContextFromJson(text)).toEqual(native!.propagationContextFromJson(text));
    }
  });
});
