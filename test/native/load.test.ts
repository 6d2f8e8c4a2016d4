import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/shared/logger.ts';
import { platformPackageName } from '../../native/binding.ts';
import { resolveBackend } from '../../src/backends/select.ts';
import { NativeRelayError, NativeUnavailableError, SUPPORTED_VERSION_RANGE, loadNativeRelay, type NativeRelay } from '../../native/index.ts';
import { available, recordingLogger, relay, tempDir } from './support.ts';

function unavailable(options: Parameters<typeof loadNativeRelay>[0]): NativeUnavailableError {
  try {
    loadNativeRelay({ logger: silentLogger, ...options });
  } catch (error) {
    expect(error).toBeInstanceOf(NativeUnavailableError);
    expect(error).toBeInstanceOf(NativeRelayError);
    return error as NativeUnavailableError;
  }
  throw new Error('loadNativeRelay did not throw');
}

/** A module file that throws `error` when required. */
function throwingModule(body: string): string {
  const file = path.join(tempDir('module'), 'index.cjs');
  fs.writeFileSync(file, body);
  return file;
}

if (platformPackageName() === undefined) console.log(`skipping the platform-package tests: napi-rs has no platform package name for ${process.platform}`);

describe('loadNativeRelay failures', () => {
  it('reports a missing package as module-missing', () => {
    const error = unavailable({ moduleId: 'nemo-relay-node-that-does-not-exist' });
    expect(error.reason).toBe('module-missing');
    expect(error.name).toBe('NativeUnavailableError');
    expect(error.message).toBe('nemo-relay-node-that-does-not-exist, an optional peer dependency, is not installed');
    expect((error.cause as { code?: string }).code).toBe('MODULE_NOT_FOUND');
  });

  it('reports a package without its platform binary as binary-missing, with the load error as cause', () => {
    const file = throwingModule(`require('nemo-relay-node-linux-sparc-gnu');`);
    const error = unavailable({ moduleId: file });
    expect(error.reason).toBe('binary-missing');
    expect(error.message).toContain(`no prebuilt binary for ${process.platform}-${process.arch}`);
    expect(error.cause).toBeInstanceOf(Error);
  });

  /** An installed nemo-relay-node whose platform package npm skipped: requiring it fails as napi-rs's loader does. */
  function packageWithoutPlatformBinary(engines: string): string {
    const dir = tempDir('skipped-platform');
    const platformPackage = platformPackageName()!;
    fs.writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'nemo-relay-node', version: '0.9.2', engines: { node: engines }, optionalDependencies: { [platformPackage]: '0.9.2' } }),
    );
    // napi-rs's loader requires the platform package; a name no resolver can find stands for it
    // (Bun resolves packages from the working directory too, where the real one is installed).
    fs.writeFileSync(path.join(dir, 'index.js'), `require('nemo-relay-node-platform-package-that-npm-skipped');`);
    return path.join(dir, 'index.js');
  }

  it.skipIf(platformPackageName() === undefined)('names the platform package npm skipped because of its engines, and the command that installs it', () => {
    const error = unavailable({ moduleId: packageWithoutPlatformBinary('>=999.0.0') });
    expect(error.reason).toBe('binary-missing');
    expect(error.message).toContain(`no prebuilt binary for ${process.platform}-${process.arch}`);
    expect(error.message).toContain(`declares engines node >=999.0.0`);
    expect(error.message).toContain(`"npm install ${platformPackageName()}@0.9.2"`);
    expect(error.message).toContain('or use Node >= 999');
    // One line: no "Require stack" from Node's MODULE_NOT_FOUND message.
    expect(error.message).not.toContain('\n');
    expect(error.message).not.toContain('Require stack');
  });

  it.skipIf(platformPackageName() === undefined)('puts the cause and the fix into status().backend.reason, in one line, when auto falls back to memory', async () => {
    const moduleId = packageWithoutPlatformBinary('>=999.0.0');
    const resolved = await resolveBackend('auto', { env: {}, runtime: 'node', logger: silentLogger, nativeLoader: (logger) => loadNativeRelay({ moduleId, logger }) });
    await resolved.backend.shutdown?.();
    expect(resolved.kind).toBe('memory');
    expect(resolved.reason).toMatch(/^auto on node: native relay unavailable \(.* has no prebuilt binary for .*: its platform package nemo-relay-node-[\w-]+ is not installed, because it declares engines node >=999\.0\.0/);
    expect(resolved.reason).toContain(`fix: "npm install ${platformPackageName()}@0.9.2"`);
    expect(resolved.reason).toMatch(/; using the in-memory relay$/);
    expect(resolved.reason).not.toContain('\n');
  });

  it.skipIf(platformPackageName() === undefined)('gives the install command when the platform package is missing on a Node its engines accept', () => {
    const error = unavailable({ moduleId: packageWithoutPlatformBinary('>=1.0.0') });
    expect(error.reason).toBe('binary-missing');
    expect(error.message).toContain(`its platform package ${platformPackageName()} is not installed`);
    expect(error.message).toContain(`fix: "npm install ${platformPackageName()}@0.9.2"`);
    expect(error.message).not.toContain('\n');
  });

  it('reports a Deno permission refusal with the flags to add', () => {
    const file = throwingModule(
      `const e = new Error('Requires sys access to "cpus", run again with the --allow-sys flag'); e.name = 'NotCapable'; throw e;`,
    );
    const error = unavailable({ moduleId: file });
    expect(error.reason).toBe('permission-denied');
    expect(error.message).toContain('--allow-ffi --allow-read --allow-env --allow-sys=cpus,networkInterfaces,hostname');
  });

  it('reports any other load failure as load-failed', () => {
    const error = unavailable({ moduleId: throwingModule(`throw new Error('glibc too old');`) });
    expect(error.reason).toBe('load-failed');
    expect(error.message).toContain('glibc too old');
  });

  it('refuses a version outside 0.9.x and a module lacking functions', () => {
    const wrong = unavailable({ module: {}, version: '1.0.0' });
    expect(wrong.reason).toBe('version-mismatch');
    expect(wrong.message).toBe(`nemo-relay-node@1.0.0 is not supported (this adapter needs ${SUPPORTED_VERSION_RANGE})`);
    const bare = unavailable({ module: { pushScope() {} }, version: '0.9.2' });
    expect(bare.reason).toBe('missing-features');
    expect(bare.message).toMatch(/^nemo-relay-node@0\.9\.2 lacks createScopeStack, withScopeStack, getHandle, popScope/);
    expect(bare.message).toMatch(/, ScopeType$/);
    expect(unavailable({ module: {} }).reason).toBe('version-mismatch');
  });
});

describe.skipIf(!available)('loadNativeRelay', () => {
  let backend: NativeRelay | undefined;
  afterEach(async () => {
    await backend?.shutdown();
    backend = undefined;
  });

  it('is a native backend carrying the installed nemo-relay-node version', () => {
    backend = relay();
    const require = createRequire(import.meta.url);
    const packageJson = path.join(path.dirname(require.resolve('nemo-relay-node')), 'package.json');
    const version = (JSON.parse(fs.readFileSync(packageJson, 'utf8')) as { version: string }).version;
    expect(backend.kind).toBe('native');
    expect(backend.version).toBe(version);
    expect(backend.stats()).toEqual({ events: 0, errors: 0, dropped: 0, pendingPops: 0 });
    expect(backend.outputs()).toEqual([]);
  });

  it('accepts an already-loaded module (e.g. a Deno npm: import) with its version', async () => {
    const mod = createRequire(import.meta.url)('nemo-relay-node') as unknown;
    backend = loadNativeRelay({ module: mod, version: '0.9.2', logger: silentLogger });
    const scope = backend.pushScope({ name: 's', category: 'agent' });
    backend.popScope(scope);
    expect(backend.stats().events).toBe(2);
  });

  it('flushes and shuts down idempotently, never rejecting, and stays usable for calls after shutdown', async () => {
    const logger = recordingLogger();
    backend = relay(logger);
    const sink = backend.registerAtofExporter({ outputDirectory: tempDir('lifecycle'), filename: 'e.jsonl', mode: 'overwrite' });
    const activation = await backend.initializePluginConfig({ version: 1, components: [] });
    const s = backend.pushScope({ name: 's', category: 'agent' });
    const atif = backend.registerAtifExporter({ scope: s, sessionId: 'sid', agentName: 'n', agentVersion: 'v' });
    await Promise.all([backend.flush(), backend.flush()]);
    const first = backend.shutdown();
    expect(backend.shutdown()).toBe(first);
    await first;
    await backend.flush();
    // Shutdown closed the activation, so the process-wide plugin host is free again.
    const next = await backend.initializePluginConfig({ version: 1, components: [] });
    await next.close();
    await activation.close();
    await sink.close();
    backend.popScope(s);
    expect(JSON.parse(await atif.exportJson())).toMatchObject({ session_id: 'sid', steps: [] });
    expect(backend.stats().errors).toBe(0);
    expect(logger.lines).toEqual([]);
  });
});
