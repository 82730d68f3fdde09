import { AgentError, type AgentErrorOptions } from '@agent/core';

const openApiSpecErrorBrand = Symbol.for('agent.error.OpenApiSpecError');

/** Options for {@link OpenApiSpecError}. */
export interface OpenApiSpecErrorOptions extends AgentErrorOptions {
  /** JSON pointer (`#/paths/~1pets/get`) of the part of the document that is wrong; `#` for the whole. */
  pointer?: string;
}

/**
 * An OpenAPI document that cannot be turned into tools: unparseable text, an unsupported
 * version, a malformed part, an unresolvable or external `$ref`. `pointer` names the place.
 */
export class OpenApiSpecError extends AgentError {
  readonly [openApiSpecErrorBrand] = true;
  /** JSON pointer of the problem, e.g. `#/paths/~1pets/get/parameters/0`. */
  readonly pointer: string;

  constructor(message: string, options: OpenApiSpecErrorOptions = {}) {
    super(message, options);
    this.name = 'OpenApiSpecError';
    this.pointer = options.pointer ?? '#';
  }

  /** True for any `OpenApiSpecError`, even from another copy of this package. */
  static override isInstance(error: unknown): error is OpenApiSpecError {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[openApiSpecErrorBrand] === true
    );
  }
}

/** Throws an `OpenApiSpecError` saying what is wrong where. */
export function specError(pointer: string, detail: string, cause?: unknown): never {
  throw new OpenApiSpecError(
    `Invalid OpenAPI document at ${pointer}: ${detail}`,
    cause === undefined ? { pointer } : { pointer, cause },
  );
}
