// Work in slices on the host's thread: one slice per turn of the event loop, done in a turn of its own,
// and with a backlog as many as the host's own time since the last turn (up to MAX_TURN_MS);
// finishAll() at once, idle() once nothing is left, a throw reported to its own job only.
import { describe, expect, it } from 'vitest';
import { BACKLOG_JOBS, finishSlices, MAX_TURN_MS, SliceClock, SliceRunner, SLICE_UNITS, type Slices } from '../../src/shared/slices.ts';

function* counting(log: string[], name: string, slices: number): Slices<string> {
  for (let i = 0; i < slices; i++) {
    log.push(`${name}${i}`);
    yield;
  }
  log.push(`${name} end`);
  return `${name} result`;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('slices', () => {
  it('finishSlices runs the work to its end; SliceClock says when to yield', () => {
    const log: string[] = [];
    expect(finishSlices(counting(log, 'a', 3))).toBe('a result');
    expect(log).toEqual(['a0', 'a1', 'a2', 'a end']);
    const clock = new SliceClock();
    let yields = 0;
    for (let i = 0; i < 3 * SLICE_UNITS; i++) if (clock.tick()) yields++;
    expect(yields).toBe(3);
  });

  it('runs one slice per turn of the event loop, jobs in order, each done in a turn of its own', async () => {
    const runner = new SliceRunner();
    const log: string[] = [];
    runner.run(counting(log, 'a', 2), (result) => log.push(result), () => log.push('failed'));
    runner.run(counting(log, 'b', 1), (result) => log.push(result), () => log.push('failed'));
    expect(log).toEqual([]);
    await turn();
    expect(log).toEqual(['a0']);
    const idle = runner.idle();
    let settled = false;
    void idle.then(() => (settled = true));
    await turn();
    await turn();
    // The last slice returned; its done waits for the next turn.
    expect(log).toEqual(['a0', 'a1', 'a end']);
    await turn();
    expect(log.at(-1)).toBe('a result');
    await idle;
    expect(settled).toBe(true);
    expect(log).toEqual(['a0', 'a1', 'a end', 'a result', 'b0', 'b end', 'b result']);
    expect(runner.pending).toBe(0);
  });

  it('with a backlog, a turn works as long as the host did since the last one, up to MAX_TURN_MS', async () => {
    // A clock the test moves: each slice takes 1 ms, and the host's work between turns whatever the test says.
    let clock = 0;
    const runner = new SliceRunner({ now: () => clock });
    const log: string[] = [];
    function* timed(name: string, slices: number): Slices<string> {
      for (let i = 0; i < slices; i++) {
        clock += 1;
        log.push(`${name}${i}`);
        yield;
      }
      return name;
    }
    const jobs = BACKLOG_JOBS + 100;
    for (let j = 0; j < jobs; j++) runner.run(timed(`j${j}-`, 4), () => {}, () => log.push('failed'));
    // Queued within the host's turn, which goes on for 10 ms after the first job: the first turn matches it.
    clock += 10;
    await turn();
    expect(log).toHaveLength(10);
    // An idle host (no time between turns): one step a turn, even with a backlog.
    await turn();
    expect(log).toHaveLength(11);
    // A host busy for longer than MAX_TURN_MS: the runner stops at MAX_TURN_MS.
    clock += 10 * MAX_TURN_MS;
    await turn();
    expect(log.length - 11).toBeLessThanOrEqual(MAX_TURN_MS);
    expect(log.length - 11).toBeGreaterThanOrEqual(MAX_TURN_MS * (4 / 5));
    // Once the backlog is gone, one step per turn again.
    runner.finishAll();
    runner.run(timed('last-', 3), () => {}, () => {});
    clock += 10;
    await turn();
    expect(log.at(-1)).toBe('last-0');
    await runner.idle();
    expect(log).not.toContain('failed');
  });

  it('a job that yields a promise gets no slice until it settles, however many turns pass; finishSlices goes on at once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const log: string[] = [];
    function* waiting(): Slices<string> {
      log.push('before');
      yield gate;
      log.push('after');
      return 'done';
    }
    const runner = new SliceRunner();
    runner.run(waiting(), (result) => log.push(result), () => log.push('failed'));
    runner.run(counting(log, 'b', 1), (result) => log.push(result), () => log.push('failed'));
    for (let i = 0; i < 200; i++) await turn();
    expect(log).toEqual(['before']);
    release();
    await runner.idle();
    expect(log).toEqual(['before', 'after', 'done', 'b0', 'b end', 'b result']);
    // The synchronous path does not wait: the work must be able to go on without the promise.
    const now: string[] = [];
    function* alone(): Slices<string> {
      now.push('before');
      yield new Promise(() => {});
      now.push('after');
      return 'done';
    }
    expect(finishSlices(alone())).toBe('done');
    expect(now).toEqual(['before', 'after']);
  });

  it('finishAll runs what is left at once; a throwing job fails alone', async () => {
    const runner = new SliceRunner();
    const log: string[] = [];
    function* throwing(): Slices<string> {
      yield;
      throw new Error('boom');
    }
    runner.run(throwing(), (result) => log.push(result), (error) => log.push(`failed: ${(error as Error).message}`));
    runner.run(counting(log, 'c', 5), (result) => log.push(result), () => log.push('failed'));
    runner.finishAll();
    expect(log).toEqual(['failed: boom', 'c0', 'c1', 'c2', 'c3', 'c4', 'c end', 'c result']);
    expect(runner.pending).toBe(0);
    await runner.idle();
  });
});
