/**
 * The pieces the converter builds steps from, where their shape is the
 * contract: a re-created step lists its fields in native's struct order.
 */
import { describe, expect, it } from 'vitest';
import { reorderStep } from '../../src/formats/atif/convert/step-builders.ts';
import { ATIF_STEP_FIELDS, type AtifStep } from '../../src/formats/atif/types.ts';

describe('reorderStep', () => {
  it('lists every present field in ATIF_STEP_FIELDS order whatever order it was added in', () => {
    const values: Record<string, unknown> = {
      step_id: 3,
      source: 'agent',
      message: 'm',
      timestamp: 't',
      model_name: 'gpt',
      reasoning_effort: 'high',
      reasoning_content: 'r',
      tool_calls: [],
      observation: { results: [] },
      metrics: { prompt_tokens: 1 },
      llm_call_count: 1,
      is_copied_context: false,
      extra: { a: 1 },
    };
    expect(Object.keys(values).sort()).toEqual([...ATIF_STEP_FIELDS].sort());
    const reversed: Record<string, unknown> = {};
    for (const key of [...ATIF_STEP_FIELDS].reverse()) reversed[key] = values[key];
    const step = reorderStep(reversed as unknown as AtifStep);
    expect(Object.keys(step)).toEqual([...ATIF_STEP_FIELDS]);
    expect(step).toStrictEqual(values);
  });

  it('leaves out fields that are undefined, message included', () => {
    const step = reorderStep({ extra: { a: 1 }, observation: undefined, source: 'user', step_id: 1, message: undefined } as unknown as AtifStep);
    expect(Object.keys(step)).toEqual(['step_id', 'source', 'extra']);
  });
});
