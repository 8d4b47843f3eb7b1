/**
 * Reads a child process's output to its end in the background, keeping only its last `keep`
 * characters: a pipe nobody reads fills up, and the child then blocks on its next write.
 */
export function drainTail(stream: ReadableStream<Uint8Array>, keep = 16_384): () => Promise<string> {
  let tail = "";
  const decoder = new TextDecoder();
  const done = (async () => {
    const reader = stream.getReader();
    for (;;) {
      const { done: ended, value } = await reader.read();
      if (ended) return;
      tail = (tail + decoder.decode(value, { stream: true })).slice(-keep);
    }
  })().catch(() => {});
  return async () => {
    await Promise.race([done, Bun.sleep(200)]);
    return tail;
  };
}
