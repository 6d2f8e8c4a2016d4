import { describe, expect, it } from 'vitest';
import * as hooks from '../../src/hooks/index.ts';

describe('hooks public surface', () => {
  it('exports the runtime API and nothing internal', () => {
    expect(Object.keys(hooks).sort()).toEqual(
      [
        'BoundHook',
        'EXECUTION_MIDDLEWARE_KINDS',
        'ExecutionBlocked',
        'HOOK_NAMES',
        'HookError',
        'HookRegistry',
        'InvalidArgumentError',
        'InvalidCallbackError',
        'InvalidMiddlewareKindError',
        'MIDDLEWARE_KINDS',
        'MIDDLEWARE_SCHEMA_VERSION',
        'NextCalledTwiceError',
        'REQUEST_MIDDLEWARE_KINDS',
        'TELEMETRY_SCHEMA_VERSION',
        'TurnIds',
        'UnknownHookError',
        'apiRequestId',
        'consoleLogger',
        'isExecutionBlocked',
        'isHookName',
        'isMiddlewareKind',
        'newSessionId',
        'newTaskId',
        'newToolCallId',
        'newTurnId',
        'silentLogger',
      ].sort(),
    );
  });

  it('wires a host and a plugin end to end through the public surface', async () => {
    const registry = new hooks.HookRegistry({ logger: hooks.silentLogger });
    const events: string[] = [];
    registry.on('pre_api_request', (p) => events.push(`pre ${p.api_request_id} retry=${p.retry_count}`));
    registry.on('post_api_request', (p) => events.push(`post ${p.api_request_id}`));
    registry.use('llm_request', ({ request }) => ({ request: { ...request, max_tokens: 100 }, source: 'limits' }));
    registry.use('llm_execution', (payload, next) => {
      events.push(`exec ${payload.api_request_id}`);
      return next();
    });

    const turn = new hooks.TurnIds({ sessionId: hooks.newSessionId() });
    const call = turn.nextApiCall();
    const request = registry.applyRequest('llm_request', { model: 'm', messages: [] }, { ...turn, ...call });
    registry.emit('pre_api_request', () => ({
      ...turn,
      ...call,
      retry_count: 0,
      request: { body: request },
      middleware_trace: registry.requestTrace(request),
    }));
    const response = await registry.execute('llm_execution', { ...turn, ...call, request }, async (p) => ({
      echoed: p.request,
    }));
    registry.emit('post_api_request', { ...turn, ...call, response });

    expect(response).toEqual({ echoed: { model: 'm', messages: [], max_tokens: 100 } });
    expect(registry.requestTrace(request)).toEqual([{ source: 'limits' }]);
    expect(events).toEqual([
      `pre ${call.api_request_id} retry=0`,
      `exec ${call.api_request_id}`,
      `post ${call.api_request_id}`,
    ]);
  });
});
