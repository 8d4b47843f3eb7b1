/**
 * The layers, checked rather than hoped for: services and stores know nothing of HTTP, a store
 * never reaches up into a service, the configuration module knows no capability, and the server
 * only assembles what each capability's factory builds. Type-only imports count too: a type from
 * `src/http/` in a service is HTTP knowledge all the same.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { Glob } from "bun";

const ROOT = resolve(import.meta.dir, "..");
const SOURCES = [...new Glob("src/**/*.ts").scanSync(ROOT)].sort();

/** Every module a source file imports (type-only, side-effect-only and re-exports included), as written. */
function specifiersOf(file: string): string[] {
  const text = readFileSync(resolve(ROOT, file), "utf8");
  return [
    ...text.matchAll(
      /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s*["']([^"']+)["']/g,
    ),
  ].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** Project files a source file imports, relative to the root. */
function importsOf(file: string): string[] {
  return specifiersOf(file)
    .filter((s) => s.startsWith("."))
    .map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)));
}

const isRoutes = (file: string) => /(^|\/|-)routes\.ts$/.test(file);
/** Where HTTP is allowed: the HTTP layer itself, the route modules, and the app that mounts them. */
const speaksHttp = (file: string) => file.startsWith("src/http/") || isRoutes(file) || file === "src/app.ts";
const isStore = (file: string) => /(^|\/|-)store\.ts$/.test(file);
/** Shared plumbing: knows no capability. */
const isPlumbing = (file: string) => file.startsWith("src/lib/") || file.startsWith("src/db/");
/** A capability's factory: its folder's index.ts (the chain side's is src/chain/index.ts). */
const isFactory = (file: string) => /^src\/[a-z0-9-]+\/index\.ts$/.test(file);
/** The chain side's activities, each a folder of src/chain/ beside the plumbing they share. */
const CHAIN_ACTIVITIES = ["watching", "settling", "bridging", "redeeming", "recovering"];

/** `file`'s imports that `allowed` refuses, as "file -> target" lines. */
function offendersOf(file: string, allowed: (target: string) => boolean): string[] {
  return importsOf(file)
    .filter((target) => !allowed(target))
    .map((target) => `${file} -> ${target}`);
}

describe("layers", () => {
  test("the walk sees the source tree (a check over nothing would pass vacuously)", () => {
    expect(SOURCES.length).toBeGreaterThan(50);
    expect(importsOf("src/app.ts")).toContain("src/http/errors.ts");
    for (const activity of CHAIN_ACTIVITIES) {
      expect(SOURCES.filter((file) => file.startsWith(`src/chain/${activity}/`)).length).toBeGreaterThan(1);
    }
    expect(SOURCES).toContain("src/html/template.ts");
  });

  test("nothing outside src/http/, the routes and src/app.ts imports from src/http/", () => {
    const offenders = SOURCES.filter((file) => !speaksHttp(file)).flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith("src/http/"))
        .map((target) => `${file} -> ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  test("stores import only the database, shared plumbing and other stores, never a service", () => {
    const allowed = (target: string) =>
      target.startsWith("src/db/") || target.startsWith("src/lib/") || isStore(target);
    const offenders = SOURCES.filter(isStore).flatMap((file) =>
      importsOf(file)
        .filter((target) => !allowed(target))
        .map((target) => `${file} -> ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  test("shared plumbing in src/lib/ and src/db/ depends on no capability", () => {
    const offenders = SOURCES.filter(isPlumbing).flatMap((file) =>
      offendersOf(file, (target) => !target.startsWith("src/") || isPlumbing(target)),
    );
    expect(offenders).toEqual([]);
  });

  test("the HTML kit in src/html/ depends on no capability: it imports only itself and src/lib/", () => {
    const offenders = SOURCES.filter((file) => file.startsWith("src/html/")).flatMap((file) =>
      importsOf(file)
        .filter((target) => !target.startsWith("src/html/") && !target.startsWith("src/lib/"))
        .map((target) => `${file} -> ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  test("the chain side's plumbing, loops, services and stores import no HTTP route module, of any capability", () => {
    const offenders = SOURCES.filter((file) => file.startsWith("src/chain/") && !isRoutes(file)).flatMap((file) =>
      importsOf(file)
        .filter(isRoutes)
        .map((target) => `${file} -> ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  test("src/config.ts depends on no capability and no database code: only src/lib/, node and viem", () => {
    expect(importsOf("src/config.ts")).toContain("src/lib/env.ts");
    const packages = specifiersOf("src/config.ts").filter((s) => !s.startsWith("."));
    expect(packages.filter((s) => s !== "viem" && !s.startsWith("node:"))).toEqual([]);
    expect(offendersOf("src/config.ts", (target) => target.startsWith("src/lib/"))).toEqual([]);
  });

  test("src/server.ts only assembles: capability factories, the app and its context, the config, src/db/, src/lib/", () => {
    const assembly = ["src/app.ts", "src/context.ts", "src/config.ts"];
    const allowed = (target: string) => isFactory(target) || assembly.includes(target) || isPlumbing(target);
    expect(importsOf("src/server.ts")).toContain("src/payments/index.ts");
    expect(offendersOf("src/server.ts", allowed)).toEqual([]);
  });

  test("nothing but the command line imports src/server.ts", () => {
    const commandLine = (file: string) => file === "src/main.ts" || file.startsWith("src/cli/");
    const importers = SOURCES.filter((file) => importsOf(file).includes("src/server.ts"));
    expect(importers).toContain("src/cli/serve.ts");
    expect(importers.filter((file) => !commandLine(file))).toEqual([]);
  });

  test("the application's context is the routes' alone: only route modules, src/app.ts and src/server.ts import it", () => {
    const importers = SOURCES.filter((file) => importsOf(file).includes("src/context.ts"));
    expect(importers).toContain("src/payments/routes.ts");
    const allowed = (file: string) => isRoutes(file) || file === "src/app.ts" || file === "src/server.ts";
    expect(importers.filter((file) => !allowed(file))).toEqual([]);
  });

  test("the TypeScript client stands alone: it imports only its own files and its declared dependencies", () => {
    const client = "clients/typescript";
    const files = [...new Glob(`${client}/src/**/*.ts`).scanSync(ROOT)].sort();
    expect(files).toContain(`${client}/src/index.ts`);
    const manifest = JSON.parse(readFileSync(resolve(ROOT, client, "package.json"), "utf8"));
    const dependencies = Object.keys(manifest.dependencies ?? {});
    expect(dependencies).toContain("standardwebhooks");
    const offenders = files.flatMap((file) =>
      specifiersOf(file)
        .filter((s) =>
          s.startsWith(".")
            ? !relative(ROOT, resolve(ROOT, dirname(file), s)).startsWith(`${client}/src/`)
            : !dependencies.includes(s),
        )
        .map((s) => `${file} -> ${s}`),
    );
    expect(offenders).toEqual([]);
  });
});
