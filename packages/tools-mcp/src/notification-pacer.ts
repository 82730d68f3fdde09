/**
 * Notifications that tell the application to look again (resources or prompts changed, a
 * subscribed resource updated), passed on at most once per interval: a server sending them as
 * fast as it can write had the application list or read back to back, once per notification.
 * The first one is passed on at once; those within the interval after it become one call at
 * its end, so the last state is still seen.
 */

/** Default interval between two calls of a paced notification, in ms. */
export const notificationIntervalMs = 1_000;

/** A paced callback: `notify` for each notification, `cancel` when the connection closes. */
export interface PacedNotification {
  notify(): void;
  cancel(): void;
}

/** Paces `callback` (see the module comment); errors it throws go to `onError`. */
export function pacedNotification(
  callback: () => void,
  onError: (error: unknown) => void,
  intervalMs = notificationIntervalMs,
): PacedNotification {
  let last = Number.NEGATIVE_INFINITY;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const fire = () => {
    timer = undefined;
    last = performance.now();
    try {
      callback();
    } catch (error) {
      onError(error);
    }
  };
  return {
    notify() {
      if (timer !== undefined) return;
      const wait = last + intervalMs - performance.now();
      if (wait <= 0) fire();
      else {
        timer = setTimeout(fire, wait);
        // A notification owed must not keep the host process alive on its own.
        timer.unref?.();
      }
    },
    cancel() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}
