/**
 * A signal that never aborts: its controller is dropped here, so nothing can. A call made without a
 * signal of its own (`executeTool` without `signal`) runs under it, and the batch skips listening
 * to it — one controller and one listener less per call.
 */
export const neverAborted: AbortSignal = new AbortController().signal;
