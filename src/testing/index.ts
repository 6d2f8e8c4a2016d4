/**
 * Test helpers for hosts and for this library's own suite: `createFakeRelay`,
 * a `RelayBackend` that records every call (`{ op, args }`) in order, to pass
 * as `createNemoRelayPlugin({ backend })`. The contract it implements is in
 * `nemo-relay-hooks/backend`.
 *
 * @module
 */

export { createFakeRelay } from './fake-relay.ts';
export type { FakeCall, FakeHandle, FakeOperation, FakeRelay, FakeRelayOptions } from './fake-relay.ts';
