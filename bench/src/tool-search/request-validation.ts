/**
 * A validation split of the users' requests (user-requests.ts): the requests of one API in ten
 * (chosen by a hash of its id, so the same APIs whatever else changes). With `--hold-validation`
 * the embeddings build (build-search-embeddings.ts) leaves those APIs out of fine-tuning
 * altogether (documents and requests), and `score-requests.ts` then scores the search on them:
 * 1,926 requests (963 goals, 963 casual) of 90 APIs the vectors never saw, five times the dev
 * sets, for choosing how to train. The shipped build trains on every API (its validation figures
 * are then not honest and only the four task sets are reported).
 */

/** FNV-1a of a string (32 bits). */
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let at = 0; at < text.length; at++) {
    value ^= text.charCodeAt(at);
    value = Math.imul(value, 0x01000193) >>> 0;
  }
  return value;
}

/** Whether an API's requests are the validation split. */
export function isValidationSpec(spec: string): boolean {
  return hash(spec) % 10 === 0;
}
