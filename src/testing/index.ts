/**
 * Test helpers for hosts and for this library's own suite.
 *
 * @module
 */

export { createFakeRelay } from './fake-relay.ts';
export type { FakeCall, FakeHandle, FakeOperation, FakeRelay, FakeRelayOptions } from './fake-relay.ts';
