/** The projection for each endpoint `type`. @module */

import type { OtlpType } from '../../../formats/plugins-toml/opentelemetry.ts';
import { fullProjection } from './full.ts';
import { genAiProjection } from './gen-ai.ts';
import { openInferenceProjection } from './openinference.ts';
import type { Projection } from './types.ts';

export function projectionFor(type: OtlpType): Projection {
  if (type === 'gen_ai') return genAiProjection;
  if (type === 'openinference') return openInferenceProjection;
  return fullProjection;
}
