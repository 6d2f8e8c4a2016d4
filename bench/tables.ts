/**
 * The Markdown tables of `bench/RESULTS.md` from `bench/run.ts` runs (one
 * per runtime): goals first, then every figure, then the absolute timings,
 * then the facts, one column per runtime. Used by `report.ts` (from `--json`
 * files) and `all.ts` (the three runtimes in one command).
 *
 * @module
 */

import { formatValue, type CaseResult, type Figure, type Row } from './harness.ts';
import type { BenchRun } from './run.ts';

function goalText(fig: Figure): string {
  return fig.goal ? `${fig.goal.op === '<=' ? '≤' : '≥'} ${formatValue(fig.goal.target, fig.unit)}` : '';
}

function cell(fig: Figure | undefined): string {
  if (!fig) return '–';
  const value = formatValue(fig.value, fig.unit);
  if (fig.pass === undefined) return value;
  return `${value} ${fig.pass ? 'pass' : '**MISS**'}`;
}

interface Keyed<T> {
  caseId: string;
  id: string;
  label: string;
  byRuntime: (T | undefined)[];
}

function collect<T extends { id: string; label: string }>(runs: readonly BenchRun[], pick: (result: CaseResult) => T[]): Keyed<T>[] {
  const order: Keyed<T>[] = [];
  const index = new Map<string, Keyed<T>>();
  runs.forEach((run, r) => {
    for (const result of run.cases) {
      for (const item of pick(result)) {
        const key = `${result.id}/${item.id}`;
        let entry = index.get(key);
        if (!entry) {
          entry = { caseId: result.id, id: item.id, label: item.label, byRuntime: runs.map(() => undefined) };
          index.set(key, entry);
          order.push(entry);
        }
        entry.byRuntime[r] = item;
      }
    }
  });
  return order;
}

export function resultTables(runs: readonly BenchRun[]): string {
  const lines: string[] = [];
  const header = `| case | figure | goal | ${runs.map((run) => run.runtime.label).join(' | ')} |`;
  const rule = `|---|---|---|${runs.map(() => '---:').join('|')}|`;

  lines.push('### Machine and runs', '');
  for (const run of runs) {
    const m = run.machine;
    lines.push(`- ${run.runtime.label}: ${run.date}, ${m.cpu}, ${m.cores} cores, ${m.ramGiB} GiB RAM, ${m.os}, load ${m.load1} at start${run.scale !== 1 ? `, scale ${run.scale}` : ''}${run.failures.length ? `, FAILED: ${run.failures.map((f) => f.id).join(', ')}` : ''}`);
  }

  const figures = collect(runs, (result) => result.figures);
  lines.push('', '### Goals', '', header, rule);
  for (const entry of figures) {
    const first = entry.byRuntime.find((fig) => fig !== undefined);
    if (!first?.goal) continue;
    lines.push(`| ${entry.caseId} | ${entry.label} | ${goalText(first)} | ${entry.byRuntime.map(cell).join(' | ')} |`);
  }
  lines.push('', '### Other figures', '', `| case | figure | ${runs.map((run) => run.runtime.label).join(' | ')} |`, `|---|---|${runs.map(() => '---:').join('|')}|`);
  for (const entry of figures) {
    const first = entry.byRuntime.find((fig) => fig !== undefined);
    if (first?.goal) continue;
    lines.push(`| ${entry.caseId} | ${entry.label} | ${entry.byRuntime.map(cell).join(' | ')} |`);
  }

  const rows = collect<Row>(runs, (result) => result.rows);
  lines.push('', '### Absolute timings (ns per op, median of batches; [incl. drain])', '', `| case | subject | ${runs.map((run) => run.runtime.label).join(' | ')} |`, `|---|---|${runs.map(() => '---:').join('|')}|`);
  for (const entry of rows) {
    const cells = entry.byRuntime.map((row) => {
      if (!row) return '–';
      const base = formatValue(row.ns, 'ns').replace(/ ns$/, '');
      return row.nsDrained !== row.ns ? `${base} [${formatValue(row.nsDrained, 'ns').replace(/ ns$/, '')}]` : base;
    });
    lines.push(`| ${entry.caseId} | ${entry.label} | ${cells.join(' | ')} |`);
  }

  const facts = new Map<string, (string | number | boolean | undefined)[]>();
  runs.forEach((run, r) => {
    for (const result of run.cases) {
      for (const [key, value] of Object.entries(result.facts)) {
        const name = `${result.id}: ${key}`;
        if (!facts.has(name)) facts.set(name, runs.map(() => undefined));
        facts.get(name)![r] = value;
      }
    }
  });
  lines.push('', '### Facts', '', `| fact | ${runs.map((run) => run.runtime.label).join(' | ')} |`, `|---|${runs.map(() => '---:').join('|')}|`);
  for (const [name, values] of facts) {
    lines.push(`| ${name} | ${values.map((value) => (value === undefined ? '–' : typeof value === 'number' ? value.toLocaleString('en-US') : String(value))).join(' | ')} |`);
  }
  return `${lines.join('\n')}\n`;
}

/** A figure of one case, by id; `*.x` matches `x` under every hook kind (`mark.x`, `llm.x`, …). */
export interface FigurePick {
  caseId: string;
  figureId: string;
}

function picked(pick: FigurePick, caseId: string, figureId: string): boolean {
  if (pick.caseId !== caseId) return false;
  if (pick.figureId.startsWith('*.')) return figureId.endsWith(pick.figureId.slice(1));
  return pick.figureId === figureId;
}

/**
 * One table of chosen figures (goal or not), one column per runtime, in the
 * order of `picks`: the lines of an issue's goals, to paste into RESULTS.md.
 */
export function pickedFigures(runs: readonly BenchRun[], picks: readonly FigurePick[]): string {
  const figures = collect(runs, (result) => result.figures);
  const lines = [`| case | figure | goal | ${runs.map((run) => run.runtime.label).join(' | ')} |`, `|---|---|---|${runs.map(() => '---:').join('|')}|`];
  for (const pick of picks) {
    for (const entry of figures) {
      if (!picked(pick, entry.caseId, entry.id)) continue;
      const first = entry.byRuntime.find((fig) => fig !== undefined);
      lines.push(`| ${entry.caseId} | ${entry.label} | ${first ? goalText(first) : ''} | ${entry.byRuntime.map(cell).join(' | ')} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
