/**
 * The host-side hook core: observer hooks, request and execution middleware,
 * typed payloads, errors and correlation-id helpers. No dependencies and no
 * relay knowledge; the NeMo Relay plugin is one subscriber among others.
 *
 * @module
 */

export {
  EXECUTION_MIDDLEWARE_KINDS,
  HOOK_NAMES,
  isHookName,
  isMiddlewareKind,
  MIDDLEWARE_KINDS,
  MIDDLEWARE_SCHEMA_VERSION,
  REQUEST_MIDDLEWARE_KINDS,
  TELEMETRY_SCHEMA_VERSION,
  type ExecutionMiddlewareKind,
  type HookName,
  type MiddlewareKind,
  type RequestMiddlewareKind,
} from './names.ts';

export type {
  ApiRequestErrorPayload,
  ApiRequestIds,
  ApprovalSurface,
  CallerRef,
  ConversationMessage,
  HookPayloads,
  MiddlewareTraceEntry,
  Observed,
  ObserverPayload,
  PostApiRequestPayload,
  PostApprovalResponsePayload,
  PostLlmCallPayload,
  PostToolCallPayload,
  PreApiRequestPayload,
  PreApprovalRequestPayload,
  PreLlmCallPayload,
  PreToolCallPayload,
  SessionEndPayload,
  SessionFinalizePayload,
  SessionResetPayload,
  SessionStartPayload,
  SubagentStartPayload,
  SubagentStopPayload,
  ToolCallIds,
} from './payloads.ts';

export type {
  ExecutionMiddleware,
  ExecutionPayloads,
  LlmExecutionMiddleware,
  LlmExecutionPayload,
  LlmRequestMiddleware,
  LlmRequestMiddlewarePayload,
  LlmRequestRewrite,
  MiddlewareContext,
  MiddlewareFunctions,
  MiddlewareStamp,
  Next,
  RequestHeaders,
  RequestObject,
  RewriteLabels,
  ToolExecutionMiddleware,
  ToolExecutionPayload,
  ToolRequestMiddleware,
  ToolRequestMiddlewarePayload,
  ToolRequestRewrite,
  UseOptions,
} from './middleware.ts';

export type { TraceContext, TraceContextProvider, TraceContextRequest, TrajectoryRef } from './trace-context.ts';

export { BoundHook, HookRegistry, type HookCallback, type HookRegistryOptions, type PayloadFailures, type PayloadOrThunk } from './registry.ts';

export {
  ExecutionBlocked,
  HookError,
  InvalidArgumentError,
  InvalidCallbackError,
  InvalidMiddlewareKindError,
  isExecutionBlocked,
  NextCalledTwiceError,
  UnknownHookError,
  type ExecutionBlockedOptions,
} from './errors.ts';

export {
  apiRequestId,
  newSessionId,
  newTaskId,
  newToolCallId,
  newTurnId,
  TurnIds,
  type ApiCallIds,
  type TurnIdsOptions,
} from './ids.ts';

export { consoleLogger, silentLogger, type LogFunction, type Logger, type LoggerLike } from '../shared/logger.ts';
