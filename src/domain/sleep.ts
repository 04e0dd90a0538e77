/**
 * Waiting that a Stop can end: resolves after `ms`, or rejects at once with the signal's
 * reason when it aborts (or already has), leaving no timer or listener behind either way.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A pause that a signal cuts short: resolves after `ms`, or at once when the signal aborts
 * (or already has), never rejecting; for loops that wait between passes and are woken or
 * stopped through the signal. Leaves no timer or listener behind either way.
 */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  // The sleep rejects only when the signal aborts: that ends the pause.
  return sleep(ms, signal).catch(() => {});
}
