// packageModuleUrl finds the package's own modules from wherever the code
// computing the URL sits: src/<layer>/ in the sources, dist/chunks/ once
// bundled (the backend choice's native retry and the ATIF worker use it). From dist/ it is
// exercised by the package consumer test, which builds ATIF on the worker.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packageModuleUrl } from '../../src/shared/package-module.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('packageModuleUrl', () => {
  it('finds a module by its path from the package root, with the sources own extension', () => {
    const url = packageModuleUrl('native/index');
    expect(url).not.toBeNull();
    expect(fileURLToPath(url!)).toBe(path.join(root, 'native', 'index.ts'));
  });

  it('answers null for a module the package does not have', () => {
    expect(packageModuleUrl('native/no-such-module')).toBeNull();
  });
});
