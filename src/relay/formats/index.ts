/**
 * ATOF/ATIF formats: event and document types, the ATIF builder and the
 * validators.
 *
 * @module
 */

export * from './atof.ts';
export * from './atif.ts';
export { AtifBuilder, createSubtreeFilter, serializeTrajectory } from './atif-builder.ts';
export type { AtifBuilderOptions, AtifBuilderStyle } from './atif-builder.ts';
export type { ValidationError } from './validation.ts';
export { validateAtif } from './validate-atif.ts';
export type { ValidateAtifOptions } from './validate-atif.ts';
export { validateAtofEvents, parseAtofJsonl } from './validate-atof.ts';
export type { AtofParseResult, AtofLineError } from './validate-atof.ts';
