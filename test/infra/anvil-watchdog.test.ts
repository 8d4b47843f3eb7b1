/**
 * An anvil goes with the process that started it, however that process ends: kill -9 of a test
 * runner or of `stablegate dev` leaves no chain holding its port. A clean stop leaves nothing
 * waiting behind either.
 */
import { expect, test } from "bun:test";
import { resolve } from "node:path";
import { liveProcesses } from "../../scripts/test-leftovers.ts";
import { waitFor } from "../support/wait.ts";

const OWNER = resolve(import.meta.dir, "../support/anvil-owner.ts");

/** Starts the owner and reads its first line of output. */
async function startOwner(...args: string[]) {
  const owner = Bun.spawn([process.execPath, OWNER, ...args], { stdout: "pipe", stderr: "inherit" });
  const { value } = await owner.stdout.getReader().read();
  return { owner, said: new TextDecoder().decode(value).trim() };
}

const childrenOf = (pid: number) => liveProcesses().filter((p) => p.ppid === pid);

test("kill -9 of the process that started an anvil ends the anvil too", async () => {
  const { owner, said: rpcUrl } = await startOwner();
  const port = new URL(rpcUrl).port;
  const anvil = childrenOf(owner.pid).find((p) => p.command.includes(`--port ${port}`));
  expect(anvil).toBeDefined();
  owner.kill("SIGKILL");
  await owner.exited;
  await waitFor(() => !liveProcesses().some((p) => p.pid === anvil!.pid), 10_000, "the anvil to exit");
  // Its port is free again: a new listener can have it. Not always at once: the process reads as
  // ended when its main thread has, and the socket goes with the last of its threads.
  await waitFor(() => canListen(Number(port)), 10_000, "the anvil's port to be free");
});

function canListen(port: number): boolean {
  try {
    Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } }).stop(true);
    return true;
  } catch {
    return false;
  }
}

test("a clean stop ends the anvil and stands its watchdog down", async () => {
  const { owner, said } = await startOwner("--stop");
  try {
    expect(said).toBe("stopped");
    await waitFor(() => childrenOf(owner.pid).length === 0, 10_000, "no child process left");
  } finally {
    owner.kill("SIGKILL");
    await owner.exited;
  }
});
