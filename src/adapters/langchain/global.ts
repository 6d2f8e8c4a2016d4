/**
 * Puts one callback handler in every LangChain run started from here on, the way LangChain lets a tracer attach
 * itself: a configure hook (`registerConfigureHook` in `@langchain/core/context`) that names a context variable
 * holding the handler. Each time LangChain configures a run's callbacks (`CallbackManager._configureSync`) it adds the
 * handler the variable holds, as inheritable, unless a handler of the same `name` is already there: a run given the
 * handler in `callbacks` keeps that one alone, and a run's children inherit it instead of getting a second. It is
 * added to a run made with `callbacks: []` too (`llmToolSelectorMiddleware`'s selection).
 *
 * LangChain keeps both the hooks and the variables in its AsyncLocalStorage (`setContextVariable` is an
 * `enterWith`): they hold for the async context this is called in and every context it starts afterwards, not for
 * one started before that does not descend from it.
 *
 * @module
 */

import type { BaseCallbackHandler } from '@langchain/core/callbacks/base';
// Importing the entry point, not the singleton, is what gives LangChain its AsyncLocalStorage on every runtime.
import { getContextVariable, registerConfigureHook, setContextVariable } from '@langchain/core/context';

/** The context variable the configure hook reads the handler from. */
const HANDLER = 'nemo_relay_hooks:handler';
/**
 * Set next to the hook: the hook list is a context variable too, so where this is set the list already holds the
 * hook, and registering it again would only lengthen it.
 */
const HOOK_REGISTERED = 'nemo_relay_hooks:configure_hook';

/**
 * Adds `handler` to every run started from the current async context; the function returned stops adding it there
 * (it leaves a handler a later call put in its place).
 */
export function addToEveryRun(handler: BaseCallbackHandler): () => void {
  if (getContextVariable(HOOK_REGISTERED) !== true) {
    registerConfigureHook({ contextVar: HANDLER, inheritable: true });
    setContextVariable(HOOK_REGISTERED, true);
  }
  setContextVariable(HANDLER, handler);
  return () => {
    if (getContextVariable(HANDLER) === handler) setContextVariable(HANDLER, undefined);
  };
}
