import { fullProjection } from './full.ts';
import type { Projection } from './types.ts';
export const openInferenceProjection: Projection = fullProjection;
