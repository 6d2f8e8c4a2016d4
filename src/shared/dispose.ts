/**
 * The well-known symbols of explicit resource management (`using`,
 * `await using`). Node 20 before 20.4 has neither on `Symbol`; there the
 * registered symbols TypeScript's downlevel helpers look up are used, so an
 * object still carries a dispose method instead of a property named
 * "undefined".
 *
 * @module
 */

const symbols = Symbol as unknown as { dispose?: symbol; asyncDispose?: symbol };

/** `Symbol.dispose`, or `Symbol.for('Symbol.dispose')` where the runtime lacks it. */
export function disposeSymbol(): typeof Symbol.dispose {
  return (symbols.dispose ?? Symbol.for('Symbol.dispose')) as typeof Symbol.dispose;
}

/** `Symbol.asyncDispose`, or `Symbol.for('Symbol.asyncDispose')` where the runtime lacks it. */
export function asyncDisposeSymbol(): typeof Symbol.asyncDispose {
  return (symbols.asyncDispose ?? Symbol.for('Symbol.asyncDispose')) as typeof Symbol.asyncDispose;
}
