/**
 * Ends a child process with this one, however this one ends (kill -9 included), where the child
 * would otherwise live on, holding its port: a shell that waits for its stdin, a pipe from this
 * process, to close, then kills the child. `release()` stands it down once the child is stopped,
 * so a pid reused later is never killed.
 */
export function watchChild(pid: number): { release(): Promise<void> } {
  const guard = Bun.spawn(
    ["sh", "-c", 'trap "" HUP INT TERM; cat >/dev/null; kill "$1" 2>/dev/null', "watchdog", String(pid)],
    {
      stdin: "pipe",
      stdout: "ignore",
      stderr: "ignore",
    },
  );
  // It must not keep this process alive; only release() waits for it.
  guard.unref();
  return {
    release: async () => {
      guard.kill("SIGKILL");
      await guard.exited;
    },
  };
}
