/** scripts/test-leftovers.ts against real processes that carry (or not) a run's marker. */
import { afterEach, describe, expect, test } from "bun:test";
import { leftoverProcesses, markedProcesses, TEST_RUN_MARKER } from "../../scripts/test-leftovers.ts";

const started: Bun.Subprocess[] = [];
afterEach(async () => {
  for (const proc of started.splice(0)) {
    proc.kill("SIGKILL");
    await proc.exited;
  }
});

function sleeper(marker: string): Bun.Subprocess {
  const proc = Bun.spawn(["/bin/sleep", "600"], {
    env: { [TEST_RUN_MARKER]: marker },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
  });
  started.push(proc);
  return proc;
}

describe("processes a test run leaves behind", () => {
  test("a live process with the run's marker is found, with its command; once stopped it is not", async () => {
    const marker = crypto.randomUUID();
    const proc = sleeper(marker);
    expect(markedProcesses(marker)).toEqual([{ pid: proc.pid, ppid: process.pid, command: "/bin/sleep 600" }]);
    proc.kill();
    await proc.exited;
    expect(markedProcesses(marker)).toEqual([]);
  });

  test("only this run's marker counts, not another run's nor one that merely starts with it", () => {
    const marker = crypto.randomUUID();
    sleeper(`${marker}0`);
    sleeper(crypto.randomUUID());
    expect(markedProcesses(marker)).toEqual([]);
  });

  test("leftovers: what is still alive once the grace is over; nothing when all exited in it", async () => {
    const marker = crypto.randomUUID();
    const stays = sleeper(marker);
    expect((await leftoverProcesses(marker, 200)).map((p) => p.pid)).toEqual([stays.pid]);

    stays.kill();
    await stays.exited;
    // A process on its way out within the grace is no leftover.
    const exiting = sleeper(marker);
    setTimeout(() => exiting.kill(), 100);
    expect(await leftoverProcesses(marker, 30_000)).toEqual([]);
  });
});
