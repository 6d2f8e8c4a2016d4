// "Did you mean" for names typed by hand: close enough to help, never a guess.
import { describe, expect, it } from 'vitest';
import { nearMiss } from '../../src/shared/near-miss.ts';

describe('nearMiss', () => {
  const keys = ['output_directory', 'filename', 'mode'];
  it('finds the name meant: another case, a prefix either way, or up to two edits', () => {
    expect(nearMiss('sessionIdleTTLMs', ['sessionIdleTtlMs', 'maxSessions'])).toBe('sessionIdleTtlMs');
    expect(nearMiss('output_dir', keys)).toBe('output_directory');
    expect(nearMiss('setting', ['settings', 'env'])).toBe('settings');
    expect(nearMiss('filname', keys)).toBe('filename');
    expect(nearMiss('mdoe', keys)).toBe('mode');
  });

  it('names nothing when nothing is close', () => {
    expect(nearMiss('timeout_millis', keys)).toBeUndefined();
    expect(nearMiss('x', keys)).toBeUndefined();
    expect(nearMiss('out', keys)).toBeUndefined();
  });
});
