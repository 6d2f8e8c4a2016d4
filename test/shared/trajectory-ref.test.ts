import { describe, expect, it } from 'vitest';
import { callerRefOf, trajectoryRefOf } from '../../src/shared/trajectory-ref.ts';

describe('trajectoryRefOf', () => {
  it('keeps the non-blank string fields, in the order a trajectory writes them', () => {
    const ref = trajectoryRefOf({ trajectory_path: 'child.json', session_id: 's-1', trajectory_id: 't-1', extra: 1 });
    expect(ref).toEqual({ trajectory_id: 't-1', session_id: 's-1', trajectory_path: 'child.json' });
    expect(Object.keys(ref ?? {})).toEqual(['trajectory_id', 'session_id', 'trajectory_path']);
  });

  it('drops blank text as native trims it, and values that are not strings', () => {
    // U+0085 is white space to Rust's trim, U+FEFF is not.
    expect(trajectoryRefOf({ trajectory_id: ' \u0085 ', session_id: 7, trajectory_path: '\ufeff' })).toEqual({ trajectory_path: '\ufeff' });
  });

  it('needs a trajectory_id or a trajectory_path', () => {
    expect(trajectoryRefOf({ session_id: 's-1' })).toBeUndefined();
    expect(trajectoryRefOf({ trajectory_id: '  ', session_id: 's-1' })).toBeUndefined();
    expect(trajectoryRefOf(['t-1'])).toBeUndefined();
    expect(trajectoryRefOf(null)).toBeUndefined();
    expect(trajectoryRefOf('t-1')).toBeUndefined();
  });
});

describe('callerRefOf', () => {
  it('keeps any of the caller fields, session first as extra.caller writes it', () => {
    const caller = callerRefOf({ tool_call_id: 'c-1', session_id: 's-1', other: 'x' });
    expect(Object.keys(caller ?? {})).toEqual(['session_id', 'tool_call_id']);
    expect(callerRefOf({ tool_call_id: 'c-1' })).toEqual({ tool_call_id: 'c-1' });
  });

  it('is undefined for a caller with no usable field', () => {
    expect(callerRefOf({ session_id: '', tool_call_id: 3 })).toBeUndefined();
    expect(callerRefOf(undefined)).toBeUndefined();
  });
});
