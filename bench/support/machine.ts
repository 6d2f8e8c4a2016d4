/**
 * The machine a run happened on, for the results file: CPU model (from
 * `/proc/cpuinfo` where it exists), cores, RAM, OS and the load at start.
 *
 * @module
 */

import { readFileSync } from 'node:fs';
import os from 'node:os';

export interface MachineInfo {
  cpu: string;
  cores: number;
  ramGiB: number;
  os: string;
  /** 1-minute load average when the run started. */
  load1: number;
}

export function machineInfo(): MachineInfo {
  return {
    cpu: cpuModel(),
    cores: safe(() => os.cpus().length, 0) || safe(() => os.availableParallelism(), 0),
    ramGiB: Math.round((safe(() => os.totalmem(), 0) / 2 ** 30) * 10) / 10,
    os: `${safe(() => os.type(), '?')} ${safe(() => os.release(), '?')} ${safe(() => os.arch(), '?')}`,
    load1: Math.round(safe(() => os.loadavg()[0] ?? 0, 0) * 100) / 100,
  };
}

function cpuModel(): string {
  const fromProc = safe(() => /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? '', '');
  if (fromProc) return fromProc;
  return safe(() => os.cpus()[0]?.model ?? 'unknown', 'unknown');
}

function safe<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}
