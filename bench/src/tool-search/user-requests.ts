/**
 * Requests in users' words for operations of the training corpus (`user-requests/*.tsv`: spec,
 * operation as `operationRef` names it, request — README there): what a person types to an agent ("the customer sent
 * the shoes back, give them their money") for an operation named in the API's words. Written by
 * language-model helpers that saw only a sample of training operations (never an evaluation API or
 * task), they teach the word vectors how users say what an operation does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isTrainingSpec } from './corpus.js';

/** One request for one operation of the training corpus. */
export interface UserRequest {
  spec: string;
  /** The operation: `METHOD /path`, or its name where the corpus has no path (`operationRef`). */
  operation: string;
  request: string;
}

const directory = new URL('./user-requests/', import.meta.url);

/** Every request of `user-requests/*.tsv`; throws on a line that is not `spec\toperation\trequest`. */
export function readUserRequests(): UserRequest[] {
  const found: UserRequest[] = [];
  for (const file of readdirSync(directory)
    .filter((name) => name.endsWith('.tsv'))
    .sort()) {
    readFileSync(new URL(file, directory), 'utf8')
      .split('\n')
      .forEach((line, at) => {
        if (line.trim() === '') return;
        const [spec, operation, request, extra] = line.split('\t');
        if (
          spec === undefined ||
          operation === undefined ||
          request === undefined ||
          extra !== undefined
        )
          throw new Error(`${file}:${at + 1}: expected spec, operation and request, tab-separated`);
        // An evaluation API never teaches the search (the request files are built from the
        // training corpus only; this keeps it so).
        if (!isTrainingSpec(spec))
          throw new Error(`${file}:${at + 1}: ${spec} is an evaluation API`);
        found.push({ spec, operation, request: request.trim() });
      });
  }
  return found;
}

/** The requests by spec, then by operation name. */
export function userRequestsBySpec(
  requests: readonly UserRequest[] = readUserRequests(),
): Map<string, Map<string, string[]>> {
  const bySpec = new Map<string, Map<string, string[]>>();
  for (const { spec, operation, request } of requests) {
    const byOperation = bySpec.get(spec) ?? new Map<string, string[]>();
    bySpec.set(spec, byOperation);
    const list = byOperation.get(operation) ?? [];
    list.push(request);
    byOperation.set(operation, list);
  }
  return bySpec;
}

/**
 * How a request file names an operation: its method and path, a parameter shown as `{}`
 * (`GET /realms/{}/users`: unique in a spec, where many operations have no id), else its name.
 */
export function operationRef(operation: { name: string; keywords: string }): string {
  // keywords: "<tags> <method> <path with each {parameter} blanked>" (corpus.ts).
  const found = /^(?:.*\s)?(get|put|post|delete|patch) (\/.*)$/.exec(operation.keywords);
  if (found === null) return operation.name;
  return `${(found[1] as string).toUpperCase()} ${(found[2] as string).trimEnd().replace(/ +/g, '{}')}`;
}
