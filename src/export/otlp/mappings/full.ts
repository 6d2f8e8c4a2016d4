/**
 * `type = "full"`: every span carries the raw relay event, flattened
 * (`nemo_relay.start.*`, `nemo_relay.end.*`, metadata included); marks are
 * span events with their data and metadata.
 *
 * @module
 */

import { spread, put } from '../attributes.ts';
import { SpanKind, type Attributes } from '../model.ts';
import type { Projection } from './types.ts';
import { readRequest } from './llm-shapes.ts';
import { endData, errorType, handleAttributes, identity, markAttributes, markSpan, answeringModelName, session, startData, toolCallId } from './relay-attributes.ts';

export const fullProjection: Projection = {
  span(scope) {
    const { start, end } = scope;
    const out: Attributes = {};
    identity(out, start);
    if (start.category === 'tool') put(out, 'nemo_relay.tool_call_id', toolCallId(scope));
    handleAttributes(out, start);
    startData(out, start);
    spread(out, 'nemo_relay.start.metadata', start.metadata);
    session(out, scope);
    endData(out, end);
    spread(out, 'nemo_relay.end.metadata', end.metadata);
    // The answering model, else the requested one (the hook's, else the request body's), as native names it.
    if (start.category === 'llm') put(out, 'nemo_relay.model_name', answeringModelName(scope) ?? readRequest(start.data).model);
    if (scope.cost !== undefined) {
      out['nemo_relay.llm.cost.total'] = scope.cost.total;
      out['nemo_relay.llm.cost.currency'] = scope.cost.currency;
    }
    if (start.category === 'tool') put(out, 'error.type', errorType(end));
    const kind = start.category === 'llm' || start.category === 'tool' ? SpanKind.CLIENT : SpanKind.INTERNAL;
    return { name: start.name, kind, attributes: out };
  },
  markEvent: (mark) => markAttributes(mark),
  markSpan,
  mapsAttributes: true,
};
