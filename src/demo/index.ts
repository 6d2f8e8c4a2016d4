/**
 * The bundled scripted sessions and the helpers they are written with.
 * `nemo-relay-hooks demo` runs `agentSession`; `.ci/record-examples.ts`
 * records all of `SCENARIOS`.
 *
 * @module
 */

export { agentSession, SCENARIOS } from './scenarios.ts';
export { realClock, virtualClock } from './script.ts';
