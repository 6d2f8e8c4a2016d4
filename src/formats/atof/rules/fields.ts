/**
 * The fields that differ between marks and scopes: a mark has no
 * `scope_category` or `attributes`; a scope has both, and a category.
 *
 * @module
 */

import { SCOPE_CATEGORIES, isScopeCategory } from '../types.ts';
import { childPath } from '../../validation.ts';
import { describe, isObject, type Findings, type ValidateAtofOptions } from './common.ts';

const FLAG_RE = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

export function checkMarkFields(event: Record<string, unknown>, path: string, findings: Findings): void {
  const at = (key: string): string => childPath(path, key);
  if ('scope_category' in event) findings.error(at('scope_category'), 'atof.mark_field', 'marks have no scope_category');
  if ('attributes' in event) findings.error(at('attributes'), 'atof.mark_field', 'marks have no attributes');
  const category = event.category;
  if (category !== null && category !== undefined && !isScopeCategory(category)) {
    findings.error(at('category'), 'atof.category', `category must be null or one of ${SCOPE_CATEGORIES.join(', ')}, got ${describe(category)}`);
  }
}

export function checkScopeFields(
  event: Record<string, unknown>,
  path: string,
  findings: Findings,
  options: ValidateAtofOptions,
): void {
  const at = (key: string): string => childPath(path, key);
  const phase = event.scope_category;
  if (phase !== 'start' && phase !== 'end') {
    findings.error(at('scope_category'), 'atof.scope_category', `scope_category must be "start" or "end", got ${describe(phase)}`);
  }
  checkAttributes(event.attributes, at('attributes'), findings);
  const category = event.category;
  const profile = event.category_profile;
  if (!('category' in event)) findings.error(at('category'), 'atof.required', 'category is required on scope events');
  else if (!isScopeCategory(category)) {
    findings.error(at('category'), 'atof.category', `category must be one of ${SCOPE_CATEGORIES.join(', ')}, got ${describe(category)}`);
  } else if (category === 'custom' && isObject(profile) && 'subtype' in profile) {
    if (typeof profile.subtype !== 'string' || profile.subtype === '') {
      findings.error(childPath(at('category_profile'), 'subtype'), 'atof.custom_subtype', 'category_profile.subtype must be a non-empty string');
    }
  } else if (category === 'custom' && options.requireCustomSubtype === true) {
    findings.error(at('category_profile'), 'atof.custom_subtype', 'custom scopes need category_profile.subtype');
  }
}

function checkAttributes(attributes: unknown, path: string, findings: Findings): void {
  if (!Array.isArray(attributes)) {
    findings.error(path, 'atof.attributes', `attributes must be an array of flags ([] when none), got ${describe(attributes)}`);
    return;
  }
  attributes.forEach((flag, i) => {
    if (typeof flag !== 'string' || !FLAG_RE.test(flag)) {
      findings.error(childPath(path, i), 'atof.attributes', `attribute flags are lowercase strings, got ${describe(flag)}`);
    } else if (i > 0) {
      const previous = attributes[i - 1];
      if (typeof previous === 'string' && previous >= flag) {
        findings.error(childPath(path, i), 'atof.attributes', previous === flag ? `attribute "${flag}" is repeated` : 'attributes must be sorted');
      }
    }
  });
}
