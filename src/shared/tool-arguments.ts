/**
 * A tool call's arguments as an object, the one form ATIF allows
 * (`tool_calls[].arguments`) and the one the adapters emit. Hosts and
 * frameworks hand them over in other forms too: the JSON text a model's
 * tool call carries, or a command line (`"ls -la"`) a shell tool takes.
 *
 * @module
 */

import { jsonIfReadable } from './json.ts';

/**
 * Arguments as an object: a JSON object's text is that object; text that is
 * not JSON is `{ raw: text }`; any other value that is not an object (JSON
 * text of an array, a number, a boolean, or such a value itself) is
 * `{ value }`; `null` and `undefined` are `{}`. The trajectory reads a
 * model's requested tool call by the same rule
 * (`formats/atif/payload/tool-calls.ts`, as native's converter), so a call
 * and its execution carry equal arguments. The caller's own object is passed
 * on as it is: the relay makes the one plain-JSON copy of every payload it
 * records (docs/contributing/payload-journey.md).
 */
export function argumentsObject(args: unknown): Record<string, unknown> {
  let value = args;
  if (typeof value === 'string') {
    const read = jsonIfReadable(value);
    if (read === undefined) return { raw: args };
    value = read.value;
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  return value === undefined || value === null ? {} : { value };
}
