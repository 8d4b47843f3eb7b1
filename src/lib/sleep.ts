/** Resolves after `ms`, or at once when `signal` aborts (loops then see `signal.aborted`). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return createWaker().wait(ms, signal);
}

/**
 * A loop's pause that other code can cut short: `wait` resolves early on `wake()` or abort. A
 * wake while the loop is busy is kept for its next wait, so work handed over mid-round is taken
 * up at once rather than a whole pause later.
 */
export function createWaker() {
  let wakeUp: (() => void) | null = null;
  let pending = false;
  return {
    wake: () => {
      if (wakeUp) wakeUp();
      else pending = true;
    },
    wait(ms: number, signal?: AbortSignal): Promise<void> {
      return new Promise((resolve) => {
        if (signal?.aborted || pending) {
          pending = false;
          return resolve();
        }
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          if (wakeUp === done) wakeUp = null;
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener("abort", done, { once: true });
        wakeUp = done;
      });
    },
  };
}
