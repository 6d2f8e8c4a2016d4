/**
 * The fields that differ between marks and scopes: a mark has no
 * `scope_category` or `attributes`; a scope has both, and a category.
 *
 * What the spec tells consumers to tolerate is a warning: a category this
 * reader does not know (consumers SHOULD NOT reject them), attributes out of
 * order or repeated (consumers treat them as a set), and a `custom` event
 * without `category_profile.subtype` (native writes none) unless `strict`.
 *
 * @module
 */

import { SCOPE_CATEGORIES, isScopeCategory } from '../types.ts';
import { childPath } from '../../validation-result.ts';
import { describe, isObject, type Findings, type ValidateAtofOptions } from './common.ts';

const FLAG_RE = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

export function checkMarkFields(event: Record<string, unknown>, path: string, findings: Findings, options: ValidateAtofOptions): void {
  const at = (key: string): string => childPath(path, key);
  if ('scope_category' in event) findings.error(at('scope_category'), 'atof.mark_field', 'marks have no scope_category');
  if ('attributes' in event) findings.error(at('attributes'), 'atof.mark_field', 'marks have no attributes');
  const category = event.category;
  if (category === null || category === undefined) return;
  checkCategory(event, path, findings, options);
}

export function checkScopeFields(event: Record<string, unknown>, path: string, findings: Findings, options: ValidateAtofOptions): void {
  const at = (key: string): string => childPath(path, key);
  const phase = event.scope_category;
  if (phase !== 'start' && phase !== 'end') {
    findings.error(at('scope_category'), 'atof.scope_category', `scope_category must be "start" or "end", got ${describe(phase)}`);
  }
  checkAttributes(event.attributes, at('attributes'), findings);
  if (!('category' in event)) findings.error(at('category'), 'atof.required', 'category is required on scope events');
  else checkCategory(event, path, findings, options);
}

function checkCategory(event: Record<string, unknown>, path: string, findings: Findings, options: ValidateAtofOptions): void {
  const at = (key: string): string => childPath(path, key);
  const category = event.category;
  const profile = event.category_profile;
  if (typeof category !== 'string' || category === '') {
    findings.error(at('category'), 'atof.category', `category must be a non-empty string, got ${describe(category)}`);
  } else if (!isScopeCategory(category)) {
    findings.warn(at('category'), 'atof.unknown_category', `category ${JSON.stringify(category)} is not one of ${SCOPE_CATEGORIES.join(', ')} (accepted: consumers should not reject new categories)`);
  } else if (category === 'custom') {
    const subtype = isObject(profile) ? profile.subtype : undefined;
    if (subtype !== undefined && (typeof subtype !== 'string' || subtype === '')) {
      findings.error(childPath(at('category_profile'), 'subtype'), 'atof.custom_subtype', 'category_profile.subtype must be a non-empty string');
    } else if (subtype === undefined) {
      const message = 'a custom event needs category_profile.subtype';
      if (options.requireCustomSubtype === true || options.strict === true) findings.error(at('category_profile'), 'atof.custom_subtype', message);
      else findings.warn(at('category_profile'), 'atof.custom_subtype', `${message} (accepted: native writes none; an error under --strict)`);
    }
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
        const problem = previous === flag ? `attribute "${flag}" is repeated` : 'attributes are not sorted';
        findings.warn(childPath(path, i), 'atof.attributes_set', `${problem} (accepted: attributes are a set)`);
      }
    }
  });
}
