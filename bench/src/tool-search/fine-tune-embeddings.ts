/**
 * Fine-tunes word vectors for tool search on API documentation: GloVe knows English, not how API
 * documents name things ("remove" ≈ `DELETE`, "build" ≈ "pipeline", "cancel" ≈ "void"). A text's
 * vector is what `WordEmbeddings.embed` of `@agent/tool-search-data` computes — the unit-length,
 * weighted mean of its words' vectors — and training moves the word vectors so that each
 * training operation's summary lands nearest to its own operation (operation id, what its HTTP
 * method does, path, tags) and its description nearest to the same plus its summary, against the
 * other operations of the batch (contrastive, InfoNCE in both directions); users' requests for an
 * operation (user-requests.ts) land nearest to the same plus its summary. Batches are built from
 * runs of operations of the same API, so the negatives are the operations a search has to tell
 * apart: deleting an event from getting one, not from sending an SMS.
 *
 * Plain TypeScript, no dependency: ~290k pairs (~111k from the documents, four copies of ~48k
 * requests), eight epochs as the build runs it, ~12–25 minutes on one core. Deterministic (a seeded
 * shuffle, one thread).
 */
import { specOperations } from './corpus.js';
import { operationRef } from './user-requests.js';

/** One training pair: the word rows of a query-like text and of its operation's text. */
export interface TrainingPair {
  spec: string;
  query: Int32Array;
  operation: Int32Array;
}

/** What fine-tuning needs: the vectors (rows × dimensions, changed in place) and word weights. */
export interface WordTable {
  dimensions: number;
  vectors: Float32Array;
  /** Per row, the word's weight in a text (0–1), as the shipped embeddings apply it. */
  weights: Float32Array;
}

/** Options of `fineTune` (the defaults are the measured ones). */
export interface FineTuneOptions {
  epochs?: number;
  batchSize?: number;
  /** Softmax temperature of the contrastive loss. */
  temperature?: number;
  learningRate?: number;
  /** Operations of one API kept together in a batch. */
  runLength?: number;
  seed?: number;
  onEpoch?: (epoch: number, loss: number) => void;
}

// The words WordEmbeddings.embed skips (keep in step with packages/tool-search-data/src/embeddings.ts).
const stopWords = new Set(
  'a an and are as at be by can could did do does for from get has have how i in into is it its me my of on or our should so some that the their them then there they this to us use used using via was we what when which will with would you your'.split(
    ' ',
  ),
);

/** A text's word rows as `WordEmbeddings.embed` reads it (at most 60 words). */
export function textRows(text: string, rowOf: (word: string) => number | undefined): Int32Array {
  const rows: number[] = [];
  const spaced = text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase();
  for (const word of spaced.split(/[^a-z0-9]+/)) {
    if (word.length < 2 || stopWords.has(word) || /^\d+$/.test(word)) continue;
    const row = rowOf(word) ?? (word.endsWith('s') ? rowOf(word.slice(0, -1)) : undefined);
    if (row !== undefined) rows.push(row);
    if (rows.length === 60) break;
  }
  return Int32Array.from(rows);
}

/** What an HTTP method does to a path, in the words a summary would use. */
function methodAction(method: string, route: string): string {
  if (method === 'get') return /\}\/?$/.test(route) ? 'get' : 'list';
  if (method === 'post') return 'create';
  if (method === 'delete') return 'delete';
  return 'update';
}

/**
 * The training pairs of the given specs (each operation once per API, by summary and id): summary
 * → operation, and description → operation + summary.
 */
export function trainingPairs(
  specs: readonly string[],
  rowOf: (word: string) => number | undefined,
  requests: ReadonlyMap<string, ReadonlyMap<string, readonly string[]>> = new Map(),
  requestCopies = 1,
): TrainingPair[] {
  const pairs: TrainingPair[] = [];
  const seen = new Set<string>();
  for (const spec of specs) {
    for (const operation of specOperations(spec)) {
      // keywords: "<tags> <method> <path>" (see corpus.ts).
      const found = /^(.*?)\s*\b(get|put|post|delete|patch) (\S*)\s*$/.exec(operation.keywords);
      const route = found?.[3] ?? '';
      const target = `${operation.name} ${found === null ? '' : methodAction(found[2] as string, route)} ${route} ${found?.[1] ?? ''}`;
      const summary = operation.summary.trim();
      const description = operation.description.trim();
      const key = `${spec.split('/')[0]}\n${summary}\n${operation.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const add = (query: string, operationText: string): void => {
        const queryRows = textRows(query, rowOf);
        const operationRows = textRows(operationText, rowOf);
        if (queryRows.length > 0 && operationRows.length > 0)
          pairs.push({ spec, query: queryRows, operation: operationRows });
      };
      if (summary !== '') add(summary, target);
      if (description !== '' && description !== summary)
        add(description.slice(0, 300), summary === '' ? target : `${target} ${summary}`);
      // A user's request for it → the operation with its summary (or its description's start).
      const known = summary === '' ? description.slice(0, 160) : summary;
      for (const request of requests.get(spec)?.get(operationRef(operation)) ?? [])
        for (let copy = 0; copy < requestCopies; copy++) add(request, `${target} ${known}`);
    }
  }
  return pairs;
}

/** A deterministic pseudo-random sequence in [0, 1) (a linear congruential generator). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x80000000;
  };
}

function shuffle<T>(items: T[], next: () => number): void {
  for (let at = items.length - 1; at > 0; at--) {
    const other = Math.floor(next() * (at + 1));
    [items[at], items[other]] = [items[other] as T, items[at] as T];
  }
}

/** Batches of pair indices: shuffled, then runs of one API kept together, the runs shuffled. */
function batches(
  pairs: readonly TrainingPair[],
  options: Required<FineTuneOptions>,
  next: () => number,
): number[][] {
  const order = pairs.map((_, at) => at);
  shuffle(order, next);
  // A stable sort by API keeps the shuffled order within each API.
  order.sort((a, b) => {
    const left = (pairs[a] as TrainingPair).spec;
    const right = (pairs[b] as TrainingPair).spec;
    return left < right ? -1 : left > right ? 1 : 0;
  });
  const runs: number[][] = [];
  for (let at = 0; at < order.length; at += options.runLength)
    runs.push(order.slice(at, at + options.runLength));
  shuffle(runs, next);
  const flat = runs.flat();
  const out: number[][] = [];
  for (let at = 0; at + options.batchSize <= flat.length; at += options.batchSize)
    out.push(flat.slice(at, at + options.batchSize));
  return out;
}

/**
 * Trains `table.vectors` in place (Adam on the rows a batch touches); returns the last epoch's
 * mean loss.
 */
export function fineTune(
  table: WordTable,
  pairs: readonly TrainingPair[],
  options: FineTuneOptions = {},
): number {
  const settings: Required<FineTuneOptions> = {
    epochs: 4,
    batchSize: 256,
    temperature: 0.05,
    learningRate: 0.01,
    runLength: 32,
    seed: 12345,
    onEpoch: () => undefined,
    ...options,
  };
  const { dimensions: size, vectors, weights } = table;
  const rowCount = weights.length;
  const firstMoment = new Float32Array(rowCount * size);
  const secondMoment = new Float32Array(rowCount * size);
  const steps = new Int32Array(rowCount);
  const gradient = new Float32Array(rowCount * size);
  const touched = new Uint8Array(rowCount);
  const next = random(settings.seed);
  const batchSize = settings.batchSize;
  const texts = 2 * batchSize;
  const units = new Float32Array(texts * size);
  const norms = new Float32Array(texts);
  const logits = new Float32Array(batchSize * batchSize);
  const logitGradient = new Float32Array(batchSize * batchSize);
  const unitGradient = new Float32Array(texts * size);
  const scratch = new Float32Array(size);
  const beta1 = 0.9;
  const beta2 = 0.999;
  let loss = 0;
  for (let epoch = 0; epoch < settings.epochs; epoch++) {
    let lossSum = 0;
    let counted = 0;
    for (const batch of batches(pairs, settings, next)) {
      const rowsOf = (text: number): Int32Array => {
        const pair = pairs[batch[text % batchSize] as number] as TrainingPair;
        return text < batchSize ? pair.query : pair.operation;
      };
      // Forward: each text's unit vector (queries first, then operations).
      for (let text = 0; text < texts; text++) {
        scratch.fill(0);
        for (const row of rowsOf(text)) {
          const weight = weights[row] as number;
          for (let at = 0; at < size; at++)
            scratch[at] = (scratch[at] as number) + weight * (vectors[row * size + at] as number);
        }
        let norm = 0;
        for (const value of scratch) norm += value * value;
        norm = Math.sqrt(norm) || 1e-6;
        norms[text] = norm;
        for (let at = 0; at < size; at++) units[text * size + at] = (scratch[at] as number) / norm;
      }
      for (let query = 0; query < batchSize; query++)
        for (let operation = 0; operation < batchSize; operation++) {
          let dot = 0;
          const left = query * size;
          const right = (batchSize + operation) * size;
          for (let at = 0; at < size; at++)
            dot += (units[left + at] as number) * (units[right + at] as number);
          logits[query * batchSize + operation] = dot / settings.temperature;
        }
      // Loss and its gradient: softmax cross-entropy over rows (query → operation) and columns.
      logitGradient.fill(0);
      for (const byRow of [true, false]) {
        for (let line = 0; line < batchSize; line++) {
          const cell = (other: number): number =>
            byRow ? line * batchSize + other : other * batchSize + line;
          let largest = Number.NEGATIVE_INFINITY;
          for (let other = 0; other < batchSize; other++)
            largest = Math.max(largest, logits[cell(other)] as number);
          let sum = 0;
          for (let other = 0; other < batchSize; other++)
            sum += Math.exp((logits[cell(other)] as number) - largest);
          if (byRow) lossSum -= (logits[cell(line)] as number) - largest - Math.log(sum);
          for (let other = 0; other < batchSize; other++) {
            const probability = Math.exp((logits[cell(other)] as number) - largest) / sum;
            logitGradient[cell(other)] =
              (logitGradient[cell(other)] as number) +
              (probability - (other === line ? 1 : 0)) / (2 * batchSize);
          }
        }
      }
      counted += batchSize;
      // Backward to the unit vectors, through the normalisation, to the word rows.
      unitGradient.fill(0);
      for (let query = 0; query < batchSize; query++)
        for (let operation = 0; operation < batchSize; operation++) {
          const factor =
            (logitGradient[query * batchSize + operation] as number) / settings.temperature;
          const left = query * size;
          const right = (batchSize + operation) * size;
          for (let at = 0; at < size; at++) {
            unitGradient[left + at] =
              (unitGradient[left + at] as number) + factor * (units[right + at] as number);
            unitGradient[right + at] =
              (unitGradient[right + at] as number) + factor * (units[left + at] as number);
          }
        }
      const rows: number[] = [];
      for (let text = 0; text < texts; text++) {
        let along = 0;
        for (let at = 0; at < size; at++)
          along += (unitGradient[text * size + at] as number) * (units[text * size + at] as number);
        for (let at = 0; at < size; at++)
          scratch[at] =
            ((unitGradient[text * size + at] as number) -
              along * (units[text * size + at] as number)) /
            (norms[text] as number);
        for (const row of rowsOf(text)) {
          if (touched[row] === 0) {
            touched[row] = 1;
            rows.push(row);
          }
          const weight = weights[row] as number;
          for (let at = 0; at < size; at++)
            gradient[row * size + at] =
              (gradient[row * size + at] as number) + weight * (scratch[at] as number);
        }
      }
      // Adam, per touched row (each row counts its own steps for the bias correction).
      for (const row of rows) {
        touched[row] = 0;
        const step = (steps[row] as number) + 1;
        steps[row] = step;
        const correction1 = 1 - beta1 ** step;
        const correction2 = 1 - beta2 ** step;
        for (let at = row * size; at < (row + 1) * size; at++) {
          const value = gradient[at] as number;
          gradient[at] = 0;
          firstMoment[at] = beta1 * (firstMoment[at] as number) + (1 - beta1) * value;
          secondMoment[at] = beta2 * (secondMoment[at] as number) + (1 - beta2) * value * value;
          vectors[at] =
            (vectors[at] as number) -
            (settings.learningRate * ((firstMoment[at] as number) / correction1)) /
              (Math.sqrt((secondMoment[at] as number) / correction2) + 1e-8);
        }
      }
    }
    loss = lossSum / Math.max(1, counted);
    settings.onEpoch(epoch, loss);
  }
  return loss;
}
