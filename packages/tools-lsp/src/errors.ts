const lspErrorBrand = Symbol.for('agent.error.LspError');

/** Why a language-server operation failed. */
export type LspErrorCode =
  /** No server binary for the language was found; the message says how to install one. */
  | 'server-not-found'
  /** The server process could not be started or exited before answering. */
  | 'server-exited'
  /** The server answered the request with an error. */
  | 'request-failed'
  /** The workspace was closed. */
  | 'closed'
  /** The request was aborted by its signal. */
  | 'cancelled';

/** Options of {@link LspError}. */
export interface LspErrorOptions {
  code: LspErrorCode;
  cause?: unknown;
}

/**
 * The one error class of `@agent/tools-lsp`. Check with `LspError.isInstance`, which works across
 * duplicated installs (a `Symbol.for` brand). The tools turn it into a `ToolError` the model reads.
 */
export class LspError extends Error {
  readonly [lspErrorBrand] = true;
  /** What went wrong. */
  readonly code: LspErrorCode;

  constructor(message: string, options: LspErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LspError';
    this.code = options.code;
  }

  /** True for any `LspError`, even from another copy of this package. */
  static isInstance(error: unknown): error is LspError {
    return typeof error === 'object' && error !== null && lspErrorBrand in error;
  }
}
