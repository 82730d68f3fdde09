const brand = Symbol.for('agent.error.SandboxUnavailableError');

/** The sandbox is `required` but cannot run here. */
export class SandboxUnavailableError extends Error {
  readonly [brand] = true;
  constructor(message: string) {
    super(message);
    this.name = 'SandboxUnavailableError';
  }

  /** Works across duplicated installs. */
  static isInstance(value: unknown): value is SandboxUnavailableError {
    return value !== null && typeof value === 'object' && brand in value;
  }
}
