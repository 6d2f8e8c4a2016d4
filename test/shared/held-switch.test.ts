import { describe, expect, it } from 'vitest';
import { HeldSwitch } from '../../src/shared/held-switch.ts';

describe('HeldSwitch', () => {
  it('is on from the first hold to the last release, tells only those two moments, and ignores a second release', () => {
    const heard: boolean[] = [];
    const held = new HeldSwitch((on) => heard.push(on));
    expect(held.on).toBe(false);
    const first = held.hold();
    const second = held.hold();
    expect([held.on, heard]).toEqual([true, [true]]);
    first();
    first();
    expect([held.on, heard]).toEqual([true, [true]]);
    second();
    expect([held.on, heard]).toEqual([false, [true, false]]);
    held.hold();
    expect([held.on, heard]).toEqual([true, [true, false, true]]);
  });
});
