import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { acquireServeLock } from "../../src/db/serve-lock.ts";
import { freePort } from "../../src/lib/free-port.ts";
import { type ServeProcess, spawnServe } from "../support/serve-process.ts";
import { makeTempDir, testEnv } from "../support/server.ts";

const dirs: string[] = [];
const started: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = makeTempDir("stablegate-lock-");
  dirs.push(dir);
  return dir;
}

async function serve(dataDir: string): Promise<ServeProcess> {
  const server = spawnServe({
    ...testEnv(dataDir),
    STABLEGATE_HOST: "127.0.0.1",
    STABLEGATE_PORT: String(await freePort()),
  });
  started.push(server);
  return server;
}

describe("one serve per data directory", () => {
  test("a stale serve.pid naming a live, unrelated process does not block start-up", async () => {
    const dir = tempDir();
    // After a reboot the old pid may belong to anything: here, a sleeping process.
    const unrelated = Bun.spawn(["sleep", "600"], { stdout: "ignore", stderr: "ignore" });
    try {
      writeFileSync(join(dir, "serve.pid"), `${unrelated.pid}\n`);
      const release = acquireServeLock(dir);
      release();
    } finally {
      unrelated.kill("SIGKILL");
      await unrelated.exited;
    }
  });

  test("while the lock is held, a second acquirer is refused, in this process too; released, it is free again", () => {
    const dir = tempDir();
    const release = acquireServeLock(dir);
    try {
      expect(() => acquireServeLock(dir)).toThrow(
        `${dir} is in use by another stablegate serve (pid ${process.pid}); stop it first`,
      );
    } finally {
      release();
    }
    expect(existsSync(join(dir, "serve.pid"))).toBe(false);
    acquireServeLock(dir)();
  });

  test("a refused attempt in the holder's own process does not loosen the lock for other processes", async () => {
    const dir = tempDir();
    const release = acquireServeLock(dir);
    try {
      // Closing any descriptor of the lock file would drop this process's POSIX lock on it.
      expect(() => acquireServeLock(dir)).toThrow("is in use by another stablegate serve");
      const script = `import { acquireServeLock } from ${JSON.stringify(join(import.meta.dir, "../../src/db/serve-lock.ts"))};
        try { acquireServeLock(${JSON.stringify(dir)}); console.log("acquired"); } catch { console.log("refused"); }`;
      const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "inherit" });
      expect((await new Response(child.stdout).text()).trim()).toBe("refused");
      expect(await child.exited).toBe(0);
    } finally {
      release();
    }
  });

  test("servers started at the same moment after a crash: exactly one serves, the others exit naming it", async () => {
    const dir = tempDir();
    // What a crash leaves behind: a pid file naming a process that is gone.
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    writeFileSync(join(dir, "serve.pid"), `${dead.pid}\n`);

    const servers = await Promise.all(Array.from({ length: 5 }, () => serve(dir)));
    // Each either listens (code null) or exits on its own (its code).
    const outcomes = await Promise.all(
      servers.map((s) =>
        s.listening().then(
          () => ({ s, code: null }),
          async () => ({ s, code: await s.exited }),
        ),
      ),
    );
    const winners = outcomes.filter((o) => o.code === null);
    expect(winners).toHaveLength(1);
    const winner = winners[0]!.s;
    for (const { s, code } of outcomes.filter((o) => o.code !== null)) {
      expect(code).toBe(1);
      expect((await s.stderr()).trim()).toBe(
        `stablegate: ${dir} is in use by another stablegate serve (pid ${winner.proc.pid}); stop it first`,
      );
    }
    expect((await fetch(`${winner.url}/healthz`)).status).toBe(200);
    expect(winner.proc.exitCode).toBeNull();
  });

  test("after kill -9 a new server starts at once on the same data directory", async () => {
    const dir = tempDir();
    const first = await serve(dir);
    await first.listening();
    first.proc.kill("SIGKILL");
    await first.exited;
    expect(existsSync(join(dir, "serve.pid"))).toBe(true); // left behind, and harmless

    const second = await serve(dir);
    await second.listening();
    expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
  });
});
