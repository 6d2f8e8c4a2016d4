/**
 * Two runs compared: the aligned pairs, the totals of each run and their
 * difference, and whether the runs are equivalent. The shape `compare
 * --json` prints (camelCase like the other commands' reports).
 *
 * @module
 */

import type { ViewNode } from '../view/model.ts';
import { rollupOf } from '../view/rollup.ts';
import { alignSteps, runTotals, totalsDelta, type Difference, type Pair, type PairStatus, type RunTotals, type StepDelta } from './align.ts';
import { stepsOf, type StepKind } from './steps.ts';

export interface RunRef {
  file: string;
  session: string;
}

export interface JsonPair {
  a: string | null;
  b: string | null;
  kind: StepKind;
  title: string;
  status: PairStatus;
  differences: Difference[];
  delta: StepDelta;
}

export interface Comparison {
  command: 'compare';
  equivalent: boolean;
  a: RunRef;
  b: RunRef;
  summary: { same: number; changed: number; onlyA: number; onlyB: number };
  pairs: JsonPair[];
  totals: { a: RunTotals; b: RunTotals; delta: RunTotals };
}

export interface ComparedRuns {
  report: Comparison;
  /** The pairs with the steps they hold (for the HTML page's detail pane). */
  pairs: Pair[];
}

export function compareRuns(a: { ref: RunRef; root: ViewNode }, b: { ref: RunRef; root: ViewNode }): ComparedRuns {
  const stepsA = stepsOf(a.root);
  const stepsB = stepsOf(b.root);
  const pairs = alignSteps(stepsA, stepsB);
  const totalsA = runTotals(stepsA, rollupOf(a.root).totals);
  const totalsB = runTotals(stepsB, rollupOf(b.root).totals);
  const count = (status: PairStatus) => pairs.filter((pair) => pair.status === status).length;
  const summary = { same: count('same'), changed: count('changed'), onlyA: count('only-a'), onlyB: count('only-b') };
  return {
    pairs,
    report: {
      command: 'compare',
      equivalent: summary.changed + summary.onlyA + summary.onlyB === 0,
      a: a.ref,
      b: b.ref,
      summary,
      pairs: pairs.map((pair) => {
        const step = (pair.b ?? pair.a)!;
        return { a: pair.a?.id ?? null, b: pair.b?.id ?? null, kind: step.kind, title: step.title, status: pair.status, differences: pair.differences, delta: pair.delta };
      }),
      totals: { a: totalsA, b: totalsB, delta: totalsDelta(totalsA, totalsB) },
    },
  };
}
