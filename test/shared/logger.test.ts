// The library's logger: the common loggers as they are, Error details kept,
// one place to set it, and the DEBUG conventions.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createRequire } from 'node:module';
import pino from 'pino';
import winston from 'winston';
import { afterEach, describe, expect, it } from 'vitest';
import { HookRegistry } from '../../src/hooks/registry.ts';
import { createNemoRelayPlugin } from '../../src/plugin/plugin.ts';
import { createHookRecorder } from '../../src/hook-log/hook-recorder.ts';
import { environmentVariables } from '../../src/plugin/config/settings.ts';
import { adaptLogger, consoleLogger, debugEnabled, setLogger, type Logger } from '../../src/shared/logger.ts';
import { createFakeRelay } from '../../src/testing/index.ts';
import { tempDir } from '../cli/support.ts';

function sink(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

/** A registry whose only subscriber throws `boom`: the registry reports it to its logger with the Error. */
function failingEmit(options: ConstructorParameters<typeof HookRegistry>[0]): void {
  const hooks = new HookRegistry(options);
  hooks.on('on_session_start', () => {
    throw new TypeError('boom');
  });
  hooks.emit('on_session_start', { session_id: 's' });
}

afterEach(() => setLogger(undefined));

// The `debug` package (CommonJS, no bundled types): only the part the test uses.
type DebugFunction = ((format: string, ...args: unknown[]) => void) & { enabled: boolean; log: (...args: unknown[]) => void };
const createDebug = createRequire(import.meta.url)('debug') as (namespace: string) => DebugFunction;

describe('the logger option accepts the common loggers as they are, keeping Error details', () => {
  it('pino: the error lands under err with its type, message and stack', () => {
    const { stream, lines } = sink();
    failingEmit({ logger: pino({ base: null }, stream) });
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!) as { level: number; msg: string; err: { type: string; message: string; stack: string } };
    expect(entry.level).toBe(40);
    // The error's text is in the message too: pino's pretty printers and many transports print only `msg`.
    expect(entry.msg).toMatch(/^hook "on_session_start" callback .* failed: boom$/);
    expect(entry.err.type).toBe('TypeError');
    expect(entry.err.message).toBe('boom');
    expect(entry.err.stack).toContain('TypeError: boom');
  });

  it('winston: the error is spelled out under error', () => {
    const { stream, lines } = sink();
    const logger = winston.createLogger({ level: 'debug', format: winston.format.json(), transports: [new winston.transports.Stream({ stream })] });
    failingEmit({ logger });
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!) as { level: string; message: string; error: { name: string; message: string; stack: string } };
    expect(entry.level).toBe('warn');
    expect(entry.message).toMatch(/callback .* failed: boom$/);
    expect(entry.error).toMatchObject({ name: 'TypeError', message: 'boom' });
    expect(entry.error.stack).toContain('TypeError: boom');
  });

  it('a debug-style function: each line names its level, the error follows', () => {
    const debug = createDebug('nemo-relay-hooks-test');
    const seen: string[] = [];
    debug.enabled = true;
    debug.log = (...args: unknown[]) => seen.push(args.map(String).join(' '));
    failingEmit({ logger: debug });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/warn: hook "on_session_start" callback .* failed/);
    expect(seen[0]).toContain('boom');
  });

  it('console is used as it is; other Logger objects keep the error in the message; partial ones are completed', () => {
    expect(adaptLogger(console)).toBe(console);
    // A logger that prints only its first argument still shows what failed.
    const printed: string[] = [];
    const firstArgumentOnly: Logger = { debug() {}, info() {}, warn: (message: string) => void printed.push(message), error() {} };
    failingEmit({ logger: firstArgumentOnly });
    expect(printed).toEqual([expect.stringMatching(/^hook "on_session_start" callback .* failed: boom$/)]);
    const warnings: unknown[][] = [];
    const partial = adaptLogger({ warn: (...args: unknown[]) => warnings.push(args) });
    partial.error('e');
    partial.debug('d');
    expect(warnings).toEqual([['e']]);
    expect(adaptLogger(undefined)).toBe(consoleLogger);
    // A logger that throws never reaches the host.
    expect(() => adaptLogger(() => { throw new Error('broken'); }).warn('x')).not.toThrow();
  });
});

describe('one place to set the library\'s logger', () => {
  it('setLogger() reaches every object created without a logger option, and undefined restores the console', () => {
    const { stream, lines } = sink();
    setLogger(pino({ base: null }, stream));
    failingEmit({});
    expect(lines).toHaveLength(1);
    expect((JSON.parse(lines[0]!) as { err: { message: string } }).err.message).toBe('boom');
    setLogger(undefined);
    const captured: string[] = [];
    const original = console.warn;
    console.warn = (...args: unknown[]) => captured.push(String(args[0]));
    try {
      failingEmit({});
    } finally {
      console.warn = original;
    }
    expect(captured[0]).toMatch(/^\[nemo-relay-hooks\] hook "on_session_start"/);
    expect(lines).toHaveLength(1);
  });
});

describe('debug output', () => {
  it('follows NEMO_RELAY_HOOKS_DEBUG (false, 0, no, off stay off) and DEBUG=nemo-relay-hooks', () => {
    expect(debugEnabled({})).toBe(false);
    for (const off of ['false', 'FALSE', '0', 'no', 'off', '']) expect(debugEnabled({ NEMO_RELAY_HOOKS_DEBUG: off }), off).toBe(false);
    for (const on of ['1', 'true', 'yes', 'on']) expect(debugEnabled({ NEMO_RELAY_HOOKS_DEBUG: on }), on).toBe(true);
    expect(debugEnabled({ DEBUG: 'nemo-relay-hooks' })).toBe(true);
    expect(debugEnabled({ DEBUG: 'express,nemo-relay-hooks' })).toBe(true);
    expect(debugEnabled({ DEBUG: 'nemo-relay-*' })).toBe(true);
    expect(debugEnabled({ DEBUG: '*' })).toBe(true);
    expect(debugEnabled({ DEBUG: '*,-nemo-relay-hooks' })).toBe(false);
    expect(debugEnabled({ DEBUG: 'express' })).toBe(false);
    // The library's own variable decides when both are set.
    expect(debugEnabled({ DEBUG: 'nemo-relay-hooks', NEMO_RELAY_HOOKS_DEBUG: 'false' })).toBe(false);
  });

  it('the console default prints debug lines only when debug is on', () => {
    const captured: string[] = [];
    const original = console.debug;
    const previous = { debug: process.env.DEBUG, own: process.env.NEMO_RELAY_HOOKS_DEBUG };
    console.debug = (...args: unknown[]) => captured.push(String(args[0]));
    try {
      delete process.env.DEBUG;
      process.env.NEMO_RELAY_HOOKS_DEBUG = 'false';
      consoleLogger.debug('quiet');
      delete process.env.NEMO_RELAY_HOOKS_DEBUG;
      process.env.DEBUG = 'nemo-relay-hooks';
      consoleLogger.debug('loud');
    } finally {
      console.debug = original;
      if (previous.debug === undefined) delete process.env.DEBUG;
      else process.env.DEBUG = previous.debug;
      if (previous.own === undefined) delete process.env.NEMO_RELAY_HOOKS_DEBUG;
      else process.env.NEMO_RELAY_HOOKS_DEBUG = previous.own;
    }
    expect(captured).toEqual(['[nemo-relay-hooks] loud']);
  });

  it('environmentVariables() lists NEMO_RELAY_HOOKS_DEBUG', () => {
    expect(environmentVariables().map((variable) => variable.name)).toContain('NEMO_RELAY_HOOKS_DEBUG');
  });
});

describe('explicit resource management', () => {
  it('the plugin shuts down on Symbol.asyncDispose', async () => {
    const relay = createFakeRelay();
    const plugin = createNemoRelayPlugin({ backend: relay, env: {} });
    const hooks = new HookRegistry();
    plugin.register(hooks);
    hooks.emit('on_session_start', { session_id: 's' });
    await plugin.flush({ timeoutMs: 1000 });
    expect(plugin.status().state).toBe('ready');
    await plugin[Symbol.asyncDispose]();
    expect(plugin.status().state).toBe('shutdown');
  });

  it('the recorder closes on Symbol.dispose and Symbol.asyncDispose', async () => {
    const dir = tempDir();
    for (const dispose of ['sync', 'async'] as const) {
      const hooks = new HookRegistry();
      const file = path.join(dir, `${dispose}.jsonl`);
      const recorder = createHookRecorder(hooks, file);
      hooks.emit('on_session_start', { session_id: dispose });
      if (dispose === 'sync') recorder[Symbol.dispose]();
      else await recorder[Symbol.asyncDispose]();
      hooks.emit('on_session_start', { session_id: 'after' });
      const lines = readFileSync(file, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { payload: { session_id: string } });
      expect(lines.map((line) => line.payload.session_id)).toEqual([dispose]);
    }
  });
});
