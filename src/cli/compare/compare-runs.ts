/**
 * Two runs compared: the aligned pairs, the totals of each run and their
 * difference, and whether the runs are equivalent. The shape `compare
 * --json` prints (camelCase like the other commands' reports).
 *
 * @module
 */

import type { ViewNode } from '../view/model.ts';
import { rollupOf } from '../view/rollup.ts';
import { alignSteps, pairedCalls, runTotals, totalsDelta, type Difference, type Pair, type PairStatus, type RunTotals, type StepDelta } from './align.ts';
import { preview } from '../view/model.ts';
import { listSome } from '../../shared/text.ts';
import { isUnfinishedEnd, stepsOf, type RunStep, type StepKind } from './steps.ts';

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

/**
 * A fact one run's file records and the other's cannot (a trajectory as the exporter writes it records no approval
 * decision and no turn's end): not compared, and said, so that runs found equivalent are not read as the same there.
 */
export interface OnlyRecorded {
  /**
   * `approval`: tool calls' approval decisions; `turn`: how user turns ended (paused, resumed, failed); `input`: what
   * calls ran with, edited from what the model asked; `error`: that a call which ran a sub-agent failed (a trajectory
   * keeps the sub-agent's link as such a call's result, not whether it failed); `remote`: another process's sessions
   * (an MCP server's) the other run references and does not hold (`remote-sessions.ts`); `tokens`, `cost`: the token
   * counts, the cost, of steps whose counterpart records none (one run priced, the other not), left out of the deltas.
   */
  fact: 'approval' | 'turn' | 'input' | 'error' | 'remote' | 'tokens' | 'cost';
  /** The run whose file records it. */
  run: 'a' | 'b';
  /** What it recorded: `issue_refund: once`, `“Refund INV-7”: interrupted, resumed, completed`; for `tokens` and `cost`, the step ids. */
  values: string[];
}

export interface Comparison {
  command: 'compare';
  equivalent: boolean;
  a: RunRef;
  b: RunRef;
  summary: { same: number; changed: number; onlyA: number; onlyB: number };
  pairs: JsonPair[];
  onlyRecorded: OnlyRecorded[];
  totals: { a: RunTotals; b: RunTotals; delta: RunTotals };
}

export interface ComparedRuns {
  report: Comparison;
  /** The pairs with the steps they hold (for the HTML page's detail pane). */
  pairs: Pair[];
}

/** `notes`: facts the caller found one run alone records (`remote`), said with the others. */
export function compareRuns(a: { ref: RunRef; root: ViewNode }, b: { ref: RunRef; root: ViewNode }, notes: readonly OnlyRecorded[] = []): ComparedRuns {
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
      onlyRecorded: [...onlyRecorded(stepsA, stepsB, pairs), ...notes],
      totals: { a: totalsA, b: totalsB, delta: totalsDelta(totalsA, totalsB, pairs) },
    },
  };
}

const recordsApprovals = (steps: readonly RunStep[]) => steps.some((step) => step.toolCalls.some((call) => call.approval !== undefined));
const recordsTurnEnds = (steps: readonly RunStep[]) => steps.some((step) => step.turnEnds !== undefined);
/** Records every turn's end (an ATOF file), not only those that did not complete (a trajectory's). */
const recordsAllTurnEnds = (steps: readonly RunStep[]) => steps.some((step) => step.turnEnds !== undefined && step.turnEndsUnfinishedOnly !== true);
const recordsInputs = (steps: readonly RunStep[]) => steps.some((step) => step.toolCalls.some((call) => call.input !== undefined));

/** What one run recorded that the other's file cannot hold, and that says something (a decision, a turn not simply completed, a failure). */
function onlyRecorded(a: readonly RunStep[], b: readonly RunStep[], pairs: readonly Pair[]): OnlyRecorded[] {
  const out: OnlyRecorded[] = [];
  const calls = pairs.flatMap((pair) => (pair.a !== null && pair.b !== null ? pairedCalls(pair.a, pair.b) : []));
  for (const [run, mine, other] of [['a', a, b], ['b', b, a]] as const) {
    if (recordsApprovals(mine) && !recordsApprovals(other)) {
      const values = mine.flatMap((step) => step.toolCalls).filter((call) => call.approval !== undefined && call.approval !== 'none').map((call) => `${call.name}: ${call.approval!}`);
      if (values.length > 0) out.push({ fact: 'approval', run, values });
    }
    if (recordsInputs(mine) && !recordsInputs(other)) {
      const values = mine.flatMap((step) => step.toolCalls).filter((call) => call.input !== undefined && call.input !== null).map((call) => `${call.name}: ${preview(call.input, 60) ?? ''}`);
      if (values.length > 0) out.push({ fact: 'input', run, values });
    }
    // Per call: the failures of calls whose counterpart's file does not say whether it failed.
    const failed = calls.map(([callA, callB]) => (run === 'a' ? [callA, callB] : [callB, callA])).filter(([call, counterpart]) => call!.error !== undefined && counterpart!.failureUnrecorded === true && call!.failureUnrecorded === undefined);
    if (failed.length > 0) out.push({ fact: 'error', run, values: failed.map(([call]) => `${call!.name}: ${call!.error!}`) });
    for (const figure of ['tokens', 'costUsd'] as const) {
      // The pairs where the other run's step records no such figure: `run` is the one that does.
      const steps = pairs.filter((pair) => pair.delta.unrecordedOn?.[figure] === (run === 'a' ? 'b' : 'a')).map((pair) => pair[run]!.id);
      if (steps.length > 0) out.push({ fact: figure === 'costUsd' ? 'cost' : 'tokens', run, values: steps });
    }
    if (recordsTurnEnds(mine) && !recordsAllTurnEnds(other)) {
      // Against a trajectory that records the ends that did not complete, those were compared: what is left is a turn
      // resumed or completed after them.
      const partly = recordsTurnEnds(other);
      const values = mine
        .filter((step) => step.turnEnds !== undefined && step.turnEnds.join(', ') !== 'completed' && !(partly && step.turnEnds.every(isUnfinishedEnd)))
        .map((step) => `“${preview(step.message, 40) ?? ''}”: ${step.turnEnds!.join(', ')}`);
      if (values.length > 0) out.push({ fact: 'turn', run, values });
    }
  }
  return out;
}

/** One line per fact only one run records: `only b's file records approval decisions (not compared): issue_refund: once`. */
export function onlyRecordedText(note: OnlyRecorded): string {
  if (note.fact === 'tokens' || note.fact === 'cost') {
    const other = note.run === 'a' ? 'b' : 'a';
    const what = note.fact === 'cost' ? 'cost' : 'token counts';
    const count = note.values.length;
    return `${what} not recorded on ${other} for ${count} step${count === 1 ? '' : 's'} ${note.run} records (not compared, left out of the delta): ${listSome(note.values, 8)}`;
  }
  const what =
    note.fact === 'approval'
      ? 'approval decisions'
      : note.fact === 'turn'
        ? 'how turns ended'
        : note.fact === 'input'
          ? 'what calls ran with, edited from what the model asked'
          : note.fact === 'remote'
            ? "another process's sessions, which the other file references and does not hold"
            : 'that calls which ran a sub-agent failed';
  return `only ${note.run}'s file records ${what} (not compared): ${note.values.join('; ')}`;
}
