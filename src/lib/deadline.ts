/**
 * Waits for `work` for at most `ms`: "late" when the deadline comes first, and the work goes on
 * unawaited. A rejection of `work` within the deadline is thrown.
 */
export async function withinDeadline(work: Promise<unknown>, ms: number): Promise<"done" | "late"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  try {
    return await Promise.race([work.then(() => "done" as const), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
