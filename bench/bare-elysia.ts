/**
 * The floor for bench/api.ts: an Elysia app with one trivial route per method and nothing else
 * (no auth, validation, storage). Listens on 127.0.0.1:$PORT until killed.
 */
import { Elysia } from "elysia";

new Elysia()
  .post("/x", () => ({ ok: true }))
  .get("/x", () => ({ ok: true }))
  .listen({ hostname: "127.0.0.1", port: Number(process.env.PORT) });
