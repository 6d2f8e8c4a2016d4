/**
 * ATOF/ATIF formats: event and document types, the ATIF builder and the
 * validators.
 *
 * @module
 */

export * from './atof/types.ts';
export * from './atif/types.ts';
export { AtifBuilder } from './atif/builder.ts';
export type { AtifBuilderOptions } from './atif/builder.ts';
export { serializeTrajectory } from './atif/serialize.ts';
export type { AtifBuilderStyle } from './atif/serialize.ts';
export { createSubtreeFilter } from './atif/subtree.ts';
export type { ValidationError, ValidationResult } from './validation-result.ts';
export { validateAtif } from './atif/validate.ts';
export type { ValidateAtifOptions } from './atif/validate.ts';
export { validateAtofEvents, parseAtofJsonl } from './atof/validate.ts';
export type { AtofParseResult, AtofLineError, ValidateAtofOptions } from './atof/validate.ts';
