/**
 * What a tool call returned, read from an ATIF observation result. The
 * trajectory keeps a result that is text (or content parts) as `content`
 * and any other value (an object, a number, an `{error}` a failed call
 * returned) as `extra.tool_result`: both are the call's result, as an ATOF
 * tool end's `data` is, so the viewer and `compare` read either.
 *
 * @module
 */

import { isRecord } from '../../shared/record.ts';

/**
 * The call's result: `content`, else `extra.tool_result`; undefined when the trajectory recorded none, or when the
 * result only says the call was cut short (`extra.cut_short`): the call returned nothing, as its ATOF end says.
 */
export function atifToolResult(result: unknown): unknown {
  if (!isRecord(result) || (isRecord(result.extra) && result.extra.cut_short !== undefined)) return undefined;
  if (result.content !== undefined) return result.content;
  return isRecord(result.extra) ? result.extra.tool_result : undefined;
}
