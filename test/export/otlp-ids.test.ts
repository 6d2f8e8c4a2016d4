// Native's ids and times, from ATOF uuids and timestamps.
import { describe, expect, it } from 'vitest';
import { hrTimeOf, spanIdOf, traceIdOf } from '../../src/export/otlp/ids.ts';

describe('OTLP ids and times', () => {
  it('takes the trace id from the whole uuid and the span id from its low 64 bits', () => {
    expect(traceIdOf('01A2307E-6C26-7B21-B8F6-C45210D5B294')).toBe('01a2307e6c267b21b8f6c45210d5b294');
    expect(spanIdOf('01a2307e-6c26-7b21-b8f6-c45210d5b294')).toBe('b8f6c45210d5b294');
    expect(spanIdOf('01a2307e6c267b21b8f6c45210d5b294')).toBe('b8f6c45210d5b294');
  });

  it('reads RFC 3339 stamps (any precision, any offset) and integer microseconds to the same nanoseconds', () => {
    expect(hrTimeOf('2026-12-01T07:25:21.610781+00:00')).toEqual([1796109921, 610781000]);
    expect(hrTimeOf('2026-12-01T07:25:21.610781+00:00')).toEqual(hrTimeOf('2026-12-01T07:25:21.610781Z'));
    expect(hrTimeOf('2026-12-01T08:25:21.610781+01:00')).toEqual([1796109921, 610781000]);
    expect(hrTimeOf('2026-12-01T07:25:21+00:00')).toEqual([1796109921, 0]);
    expect(hrTimeOf('2026-12-01T07:25:21.6+00:00')).toEqual([1796109921, 600000000]);
    expect(hrTimeOf('2026-12-01T07:25:21.123456789+00:00')).toEqual([1796109921, 123456789]);
    expect(hrTimeOf(1796109921610781)).toEqual([1796109921, 610781000]);
    expect(hrTimeOf('yesterday')).toBeNull();
  });

  it('reads consecutive relay stamps within one second and across seconds alike', () => {
    expect(hrTimeOf('2026-12-01T07:25:21.000001+00:00')).toEqual([1796109921, 1000]);
    expect(hrTimeOf('2026-12-01T07:25:21.999999+00:00')).toEqual([1796109921, 999999000]);
    expect(hrTimeOf('2026-12-01T07:25:22.000000+00:00')).toEqual([1796109922, 0]);
    expect(hrTimeOf('2026-12-01T07:25:21.5e3000+00:00')).toBeNull();
    expect(hrTimeOf('2026-12-01T07:25:22. 12345+00:00')).toBeNull();
  });
});
