/** Scoring a retrieval run: top-1, top-5 and mean reciprocal rank over a task set. */
import path from 'node:path';
import type { AnyAgentTool } from '@agent/core';
import { toolSearchEmbeddings, WordEmbeddings } from '@agent/tool-search-data';

/** A search under evaluation: built once per catalogue, then asked for the best `limit` names. */
export type Ranker = (tools: readonly AnyAgentTool[]) => (query: string, limit: number) => string[];

/** What a retrieval task needs for scoring. */
export interface ScoredTask {
  task: string;
  expected: readonly string[];
}

/** Top-k shares and MRR of one run. */
export interface RetrievalScore {
  tasks: number;
  top1: number;
  top5: number;
  /** Mean reciprocal rank of the first expected tool within the top 10 (0 when absent). */
  mrr: number;
  /** The tasks whose expected tool was not in the top 5 (for reading, not for tuning). */
  misses: ScoredTask[];
}

/** Ranks every task's query with `search` and scores where its first expected tool landed. */
export function scoreTasks(
  tasks: readonly ScoredTask[],
  search: (query: string, limit: number) => string[],
): RetrievalScore {
  let top1 = 0;
  let top5 = 0;
  let reciprocal = 0;
  const misses: ScoredTask[] = [];
  for (const task of tasks) {
    const rank = search(task.task, 10).findIndex((name) => task.expected.includes(name));
    if (rank === 0) top1++;
    if (rank >= 0 && rank < 5) top5++;
    else misses.push(task);
    if (rank >= 0) reciprocal += 1 / (rank + 1);
  }
  const count = Math.max(1, tasks.length);
  return {
    tasks: tasks.length,
    top1: top1 / count,
    top5: top5 / count,
    mrr: reciprocal / count,
    misses,
  };
}

/** Sums scores of disjoint task sets (weighted by their task counts). */
export function combineScores(scores: readonly RetrievalScore[]): RetrievalScore {
  const tasks = scores.reduce((sum, score) => sum + score.tasks, 0);
  const weighted = (pick: (score: RetrievalScore) => number) =>
    scores.reduce((sum, score) => sum + pick(score) * score.tasks, 0) / Math.max(1, tasks);
  return {
    tasks,
    top1: weighted((score) => score.top1),
    top5: weighted((score) => score.top5),
    mrr: weighted((score) => score.mrr),
    misses: scores.flatMap((score) => score.misses),
  };
}

/** `[top-1, top-5, MRR]` as table cells. */
export function scoreCells(score: RetrievalScore): string[] {
  return [
    `${(100 * score.top1).toFixed(1)}%`,
    `${(100 * score.top5).toFixed(1)}%`,
    score.mrr.toFixed(3),
  ];
}

/**
 * The embeddings a scoring script ranks with: the built package's, or with `--embeddings FILE` a
 * generated module's (`build-search-embeddings.ts --out FILE`).
 */
export async function embeddingsOfArguments(
  argv: readonly string[] = process.argv,
): Promise<WordEmbeddings> {
  const at = argv.indexOf('--embeddings');
  const file = at === -1 ? undefined : argv[at + 1];
  if (at !== -1 && file === undefined) throw new Error('--embeddings needs a file');
  return file === undefined
    ? toolSearchEmbeddings()
    : new WordEmbeddings(await import(path.resolve(file)));
}
