import { describe, expect, it } from 'vitest';
import { apiRequestId, newSessionId, newTaskId, newToolCallId, newTurnId, TurnIds } from '../../src/hooks/ids.ts';

const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('correlation ids', () => {
  it('mints distinct random UUIDs for sessions, tasks, turns and tool calls', () => {
    const minted = [newSessionId(), newTaskId(), newTurnId(), newToolCallId(), newSessionId()];
    for (const id of minted) expect(id).toMatch(uuidV4);
    expect(new Set(minted).size).toBe(minted.length);
  });

  it('formats api_request_id as `${turn_id}:api:${api_call_count}`', () => {
    expect(apiRequestId('turn-1', 3)).toBe('turn-1:api:3');
  });

  it('counts API calls per turn from 1, one id per call', () => {
    const turn = new TurnIds({ sessionId: 's1', taskId: 't1', turnId: 'turn-1' });
    expect(turn.apiCallCount).toBe(0);
    expect(turn.nextApiCall()).toEqual({ api_request_id: 'turn-1:api:1', api_call_count: 1 });
    expect(turn.nextApiCall()).toEqual({ api_request_id: 'turn-1:api:2', api_call_count: 2 });
    expect(turn.apiCallCount).toBe(2);
  });

  it('keeps one api_request_id across the retries of a call', () => {
    const turn = new TurnIds({ sessionId: 's1' });
    const call = turn.nextApiCall();
    const attempts = [0, 1, 2].map((retry_count) => ({ ...turn, ...call, retry_count }));
    expect(new Set(attempts.map((attempt) => attempt.api_request_id)).size).toBe(1);
    expect(attempts.map((attempt) => attempt.retry_count)).toEqual([0, 1, 2]);
  });

  it('spreads exactly the wire ids of a turn into a payload', () => {
    const turn = new TurnIds({ sessionId: 's1', taskId: 't1', turnId: 'turn-1' });
    expect({ ...turn }).toEqual({ session_id: 's1', task_id: 't1', turn_id: 'turn-1' });
  });

  it('mints task and turn ids when the host does not supply them', () => {
    const a = new TurnIds({ sessionId: 's1' });
    const b = new TurnIds({ sessionId: 's1' });
    expect(a.turn_id).toMatch(uuidV4);
    expect(a.task_id).toMatch(uuidV4);
    expect(a.turn_id).not.toBe(b.turn_id);
  });
});
