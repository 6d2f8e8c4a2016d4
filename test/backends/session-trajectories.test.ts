// The per-session ATIF router both backends use: which trajectory gets which
// event, and that events kept as ATOF line bytes build what the objects build.
import { describe, expect, it } from 'vitest';
import { SessionTrajectories } from '../../src/backends/session-trajectories.ts';
import type { AtofEvent } from '../../src/formats/atof/types.ts';

let clock = 1_800_000_000_000_000;
function scope(uuid: string, parent: string | null, phase: 'start' | 'end', category = 'agent', data: unknown = null): AtofEvent {
  clock += 10;
  return {
    atof_version: '0.1',
    attributes: [],
    category,
    category_profile: null,
    data,
    data_schema: null,
    kind: 'scope',
    metadata: null,
    name: uuid,
    parent_uuid: parent,
    propagation_root_uuid: parent ?? uuid,
    scope_category: phase,
    timestamp: new Date(clock / 1000).toISOString().replace('Z', '+00:00'),
    uuid,
  } as unknown as AtofEvent;
}
function mark(uuid: string, parent: string): AtofEvent {
  clock += 10;
  return {
    atof_version: '0.1',
    category: null,
    category_profile: null,
    data: { n: uuid },
    data_schema: null,
    kind: 'mark',
    metadata: null,
    name: 'm',
    parent_uuid: parent,
    propagation_root_uuid: parent,
    timestamp: new Date(clock / 1000).toISOString().replace('Z', '+00:00'),
    uuid,
  } as unknown as AtofEvent;
}
const options = (id: string) => ({ sessionId: id, agentName: 'a', agentVersion: '1' });
const uuidsOf = (json: string) => [...json.matchAll(/"uuid": ?"([^"]+)"/g)].map((m) => m[1]);

describe('session trajectories', () => {
  it('gives each session only its own subtree, nested sessions included, and skips a replayed root start', () => {
    const router = new SessionTrajectories();
    const startA = scope('A', null, 'start');
    const a = router.open('A', options('A'), startA);
    const b = router.open('B', options('B'));
    const events = [startA, scope('B', null, 'start'), scope('A1', 'A', 'start', 'custom'), mark('mA', 'A1'), mark('mB', 'B')];
    for (const event of events) router.route(event);
    // A subagent session registered inside A before its start arrives (native delivers late).
    const startC = scope('C', 'A1', 'start');
    const c = router.open('C', options('C'), startC);
    router.route(startC);
    router.route(mark('mC', 'C'));
    router.route(scope('C', 'A1', 'end'));
    router.route(scope('A1', 'A', 'end', 'custom'));
    expect(a.size).toBe(7); // A start once, A1, mA, C start, mC, C end, A1 end
    expect(b.size).toBe(2);
    expect(c.size).toBe(3);
    router.close(a);
    router.route(mark('late', 'A'));
    expect(a.size).toBe(7);
    expect(router.size).toBe(2);
    router.closeAll();
    expect(router.size).toBe(0);
  });

  it('keeps routing a subtree to the sessions still open when a nested one closes, either way round', () => {
    const router = new SessionTrajectories();
    const startA = scope('A', null, 'start');
    const a = router.open('A', options('A'), startA);
    router.route(scope('A1', 'A', 'start', 'custom'));
    const startC = scope('C', 'A1', 'start');
    const c = router.open('C', options('C'), startC);
    router.route(startC);
    router.route(scope('C1', 'C', 'start', 'custom'));
    expect([a.size, c.size]).toEqual([4, 2]); // A: A, A1, C, C1; C: C (once), C1
    // The nested session ends first: its scopes stay the parent's.
    router.close(c);
    router.route(mark('m1', 'C1'));
    router.route(scope('C1', 'C', 'end', 'custom'));
    expect([a.size, c.size]).toEqual([6, 2]);
    // A second nested session outlives its parent: it keeps its own subtree.
    const startD = scope('D', 'A1', 'start');
    const d = router.open('D', options('D'), startD);
    router.route(startD);
    router.close(a);
    router.route(mark('m2', 'D'));
    router.route(scope('D', 'A1', 'end'));
    expect([a.size, d.size]).toEqual([7, 3]);
    expect(router.size).toBe(1);
  });

  it('gives a session of its own under another session\'s tool span (a linked MCP call) only its own subtree, whenever it registers', () => {
    /** The plugin's own session scope (not an embedded sub-agent's). */
    const sessionScope = (uuid: string, parent: string, phase: 'start' | 'end'): AtofEvent => ({ ...scope(uuid, parent, phase), metadata: { nemo_relay_scope_role: 'session' } }) as AtofEvent;
    const router = new SessionTrajectories();
    const startA = scope('A', null, 'start');
    const a = router.open('A', options('A'), startA);
    router.route(scope('T', 'A', 'start', 'tool'));
    // Registered after its start was emitted (the memory relay), or before its start arrives (native delivers late).
    const startS = sessionScope('S', 'T', 'start');
    router.route(startS);
    const s = router.open('S', options('S'), startS);
    const startR = sessionScope('R', 'T', 'start');
    const r = router.open('R', options('R'), startR);
    router.route(startR);
    for (const [root, child] of [['S', 'S1'], ['R', 'R1']] as const) {
      router.route(scope(child, root, 'start', 'tool'));
      router.route(mark(`m${child}`, child));
      router.route(scope(child, root, 'end', 'tool'));
    }
    router.route(sessionScope('S', 'T', 'end'));
    router.route(sessionScope('R', 'T', 'end'));
    router.route(scope('T', 'A', 'end', 'tool'));
    expect(a.size).toBe(3); // A, T start, T end
    expect([s.size, r.size]).toEqual([5, 5]); // the root once, its call's start, mark and end, the root's end
  });
});
