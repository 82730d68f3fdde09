/** A problem the user can fix (missing key, unreadable file, bad config): printed without a stack, exit code 1. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}
