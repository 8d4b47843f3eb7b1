/**
 * Setup that undoes itself: a helper that starts a chain, a server and a browser must stop what
 * it already started when a later step throws, or the processes outlive the caller.
 *
 *   return settingUp(async (undo) => {
 *     const chain = await startChain();
 *     undo(() => chain.stop());
 *     const stack = await startStack({ chain });   // throws: the chain is stopped, the error rethrown
 *     ...
 *   });
 */
export async function settingUp<T>(setup: (undo: (step: () => unknown) => void) => Promise<T>): Promise<T> {
  const steps: Array<() => unknown> = [];
  try {
    return await setup((step) => void steps.push(step));
  } catch (error) {
    // Newest first; a failing undo must not hide the error that made setup fail.
    await stopAll(...steps.reverse()).catch(() => {});
    throw error;
  }
}

/** Runs every stop in order, each even when an earlier one throws; then rethrows the first error. */
export async function stopAll(...stops: Array<(() => unknown) | undefined>): Promise<void> {
  let first: { error: unknown } | undefined;
  for (const stop of stops) {
    try {
      await stop?.();
    } catch (error) {
      first ??= { error };
    }
  }
  if (first) throw first.error;
}
