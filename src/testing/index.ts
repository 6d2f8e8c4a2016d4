/**
 * Test helpers for hosts and for this library's own suite.
 *
 * @module
 */

export { createFakeRelay } from './fake-relay.ts';
export type { FakeCall, FakeHandle, FakeOperation, FakeRelay, FakeRelayOptions } from './fake-relay.ts';
/** The contract a fake relay implements, and the report its plugins.toml activation returns. */
export type { PluginConfigReport, RelayBackend } from '../relay/contract.ts';
