import { describe, expectTypeOf, it } from 'vitest';
import type { HookName } from '../../src/hooks/names.ts';
import type {
  HookPayloads,
  PreApiRequestPayload,
  PreToolCallPayload,
  SubagentStartPayload,
} from '../../src/hooks/payloads.ts';
import type { HOOK_FIELD_NAMES } from '../../src/shared/snapshot.ts';

// Type-level tests: they fail under `tsc -p tsconfig.test.json`, not at run time.
describe('hook payload types', () => {
  it('maps every hook name to a payload type', () => {
    expectTypeOf<keyof HookPayloads>().toEqualTypeOf<HookName>();
  });

  it('lists every payload field among the names a payload that cannot list its fields is read by', () => {
    // The named fields: the payloads' index signature (extra fields are allowed) names none.
    type Named<T> = keyof { [F in keyof T as string extends F ? never : number extends F ? never : F]: true };
    type PayloadField = { [K in HookName]: Named<HookPayloads[K]> }[HookName];
    expectTypeOf<'tool_call_id'>().toExtend<PayloadField>();
    expectTypeOf<Exclude<PayloadField, (typeof HOOK_FIELD_NAMES)[number]>>().toEqualTypeOf<never>();
  });

  it('accepts unknown extra fields so hosts can add context', () => {
    const payload: PreApiRequestPayload = { api_request_id: 't:api:1', host_specific: { anything: true } };
    expectTypeOf(payload.host_specific).toEqualTypeOf<unknown>();
  });

  it('types the catalogue fields and keeps them optional', () => {
    const empty: PreApiRequestPayload = {};
    expectTypeOf(empty.retry_count).toEqualTypeOf<number | undefined>();
    // @ts-expect-error api_call_count is a number
    const wrong: PreApiRequestPayload = { api_call_count: '1' };
    void wrong;
  });

  it('requires tool_name on tool hooks', () => {
    // @ts-expect-error tool_name is required
    const missing: PreToolCallPayload = { tool_call_id: 'c1' };
    void missing;
    expectTypeOf<PreToolCallPayload['tool_name']>().toEqualTypeOf<string>();
  });

  it('gives subagent hooks parent and child ids rather than a session_id of their own', () => {
    expectTypeOf<SubagentStartPayload['child_session_id']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<SubagentStartPayload['parent_session_id']>().toEqualTypeOf<string | undefined>();
  });
});
