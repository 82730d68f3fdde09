const agentErrorBrand = Symbol.for('agent.error.AgentError');
const toolErrorBrand = Symbol.for('agent.error.ToolError');
const providerErrorBrand = Symbol.for('agent.error.ProviderError');
const runLimitErrorBrand = Symbol.for('agent.error.RunLimitError');

/** Options shared by every error of the toolkit. */
export interface AgentErrorOptions {
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * Base class of every error the `@agent/*` packages throw. Check with `AgentError.isInstance`,
 * which works across duplicated installs (a `Symbol.for` brand, not `instanceof`).
 */
export class AgentError extends Error {
  readonly [agentErrorBrand] = true;

  constructor(message: string, options: AgentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AgentError';
  }

  /** True for any `AgentError` (or subclass), even from another copy of this package. */
  static isInstance(error: unknown): error is AgentError {
    return hasBrand(error, agentErrorBrand);
  }
}

/** Why a tool call did not produce a normal result. */
export type ToolErrorKind =
  | 'failed'
  | 'not-found'
  | 'invalid-args'
  | 'cancelled'
  | 'timeout'
  | 'denied'
  /** The process running the call died before it finished: its effects are unknown. */
  | 'interrupted';

/** Options for {@link ToolError}. */
export interface ToolErrorOptions extends AgentErrorOptions {
  /** What went wrong; defaults to `failed`. */
  kind?: ToolErrorKind;
  /** The tool's wire name, when known. */
  toolName?: string;
  /** When true the error ends the whole run instead of becoming an `isError` result. */
  fatal?: boolean;
}

/**
 * The one error class for tool failures. Thrown from `execute` (or made by the loop), it becomes
 * an `isError` tool result the model can read; only `fatal: true` ends the run.
 */
export class ToolError extends AgentError {
  readonly [toolErrorBrand] = true;
  /** What went wrong. */
  readonly kind: ToolErrorKind;
  /** The tool's wire name, when known. */
  readonly toolName: string | undefined;
  /** When true the error ends the whole run. */
  readonly fatal: boolean;

  constructor(message: string, options: ToolErrorOptions = {}) {
    super(message, options);
    this.name = 'ToolError';
    this.kind = options.kind ?? 'failed';
    this.toolName = options.toolName;
    this.fatal = options.fatal ?? false;
  }

  /** True for any `ToolError`, even from another copy of this package. */
  static override isInstance(error: unknown): error is ToolError {
    return hasBrand(error, toolErrorBrand);
  }

  /** `Tool not found: X`. */
  static notFound(toolName: string, available: readonly string[] = []): ToolError {
    const shown =
      available.length > 40
        ? `${available.slice(0, 40).join(', ')}, … (${available.length} in all)`
        : available.join(', ');
    const hint = available.length > 0 ? ` Available tools: ${shown}` : '';
    return new ToolError(`Tool not found: ${toolName}.${hint}`, { kind: 'not-found', toolName });
  }

  /** `Invalid arguments: …`. */
  static invalidArguments(toolName: string, detail: string): ToolError {
    return new ToolError(`Invalid arguments: ${detail}`, { kind: 'invalid-args', toolName });
  }

  /** `Cancelled` (with an optional reason). */
  static cancelled(toolName?: string, reason?: string): ToolError {
    const message = reason === undefined ? 'Cancelled' : `Cancelled: ${reason}`;
    return new ToolError(message, {
      kind: 'cancelled',
      ...(toolName === undefined ? {} : { toolName }),
    });
  }

  /** `Tool exceeded timeout of N ms`. */
  static timeout(toolName: string, timeoutMs: number): ToolError {
    return new ToolError(`Tool exceeded timeout of ${timeoutMs} ms`, { kind: 'timeout', toolName });
  }

  /** `Permission denied: reason`. */
  static denied(toolName: string, reason: string): ToolError {
    return new ToolError(`Permission denied: ${reason}`, { kind: 'denied', toolName });
  }
}

/** Options for {@link ProviderError}. */
export interface ProviderErrorOptions extends AgentErrorOptions {
  /** HTTP status code, when the failure came from an HTTP response. */
  statusCode?: number;
  /** True when the same request may succeed if sent again (429, 5xx, connection reset). */
  isRetryable?: boolean;
  /** Provider id, e.g. `anthropic`. */
  provider?: string;
  /** The response body or the vendor's error message, verbatim. */
  responseBody?: string;
  /**
   * What the server said, without the provider's framing (its name, the status): `message` says
   * it all; a caller that shows the provider and the status itself shows this instead.
   */
  detail?: string;
  /**
   * True when the request did not fit the model's context window (Anthropic's "prompt is too
   * long", OpenAI's `context_length_exceeded`, Gemini's "input token count … exceeds"): the same
   * request fails again, but a compacted conversation can succeed.
   */
  contextOverflow?: boolean;
}

/** A failure of an LLM provider call; it reaches the loop as the stream's `error` event. */
export class ProviderError extends AgentError {
  readonly [providerErrorBrand] = true;
  /** HTTP status code, when the failure came from an HTTP response. */
  readonly statusCode: number | undefined;
  /** True when the same request may succeed if sent again. */
  readonly isRetryable: boolean;
  /** Provider id, e.g. `anthropic`. */
  readonly provider: string | undefined;
  /** The response body or the vendor's error message, verbatim. */
  readonly responseBody: string | undefined;
  /** What the server said, without the provider's name and the status (see the option). */
  readonly detail: string | undefined;
  /** True when the request did not fit the model's context window (compacting can help). */
  readonly contextOverflow: boolean;

  constructor(message: string, options: ProviderErrorOptions = {}) {
    super(message, options);
    this.name = 'ProviderError';
    this.statusCode = options.statusCode;
    this.isRetryable = options.isRetryable ?? false;
    this.provider = options.provider;
    this.responseBody = options.responseBody;
    this.detail = options.detail;
    this.contextOverflow = options.contextOverflow ?? false;
  }

  /** True for any `ProviderError`, even from another copy of this package. */
  static override isInstance(error: unknown): error is ProviderError {
    return hasBrand(error, providerErrorBrand);
  }
}

/**
 * A limit the run was configured with stopped it — a run journal that cannot store a step of
 * that size, say. Thrown from a journal (or another part the loop awaits), it ends the run with
 * stop reason `error` and this message as it is, not as an internal error: the message names the
 * limit and how to raise it.
 */
export class RunLimitError extends AgentError {
  readonly [runLimitErrorBrand] = true;

  constructor(message: string, options: AgentErrorOptions = {}) {
    super(message, options);
    this.name = 'RunLimitError';
  }

  /** True for any `RunLimitError`, even from another copy of this package. */
  static override isInstance(error: unknown): error is RunLimitError {
    return hasBrand(error, runLimitErrorBrand);
  }
}

function hasBrand(error: unknown, brand: symbol): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[brand] === true
  );
}

/** A readable one-line message for any thrown value. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
