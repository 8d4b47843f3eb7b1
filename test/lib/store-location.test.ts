/** Where the store is, as the startup log names it, and the shape a database URL must have. */
import { describe, expect, test } from "bun:test";
import { checkedDatabaseUrl, describeStore } from "../../src/lib/store-location.ts";

describe("describeStore", () => {
  test("names the host and database, never the password", () => {
    const line = describeStore({ dataDir: "/d", databaseUrl: "postgres://u:secret@db.internal:5432/shop" });
    expect(line).toBe("postgresql at db.internal:5432/shop");
  });

  test("a Unix socket's URL (?host=<directory>) names the socket's directory, as libpq reads it", () => {
    const url = "postgres://u:secret@localhost/shop?host=/var/run/postgresql";
    expect(describeStore({ dataDir: "/d", databaseUrl: url })).toBe(
      "postgresql at localhost/shop through the Unix socket in /var/run/postgresql",
    );
  });

  test("SQLite is its data directory", () => {
    expect(describeStore({ dataDir: "/var/lib/stablegate", databaseUrl: null })).toBe("sqlite in /var/lib/stablegate");
  });
});

describe("checkedDatabaseUrl", () => {
  test("a URL with no host says how to name a socket, and never repeats the URL", () => {
    let message = "";
    try {
      checkedDatabaseUrl("postgres:///shop?password=secret", "STABLEGATE_DATABASE_URL");
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      "STABLEGATE_DATABASE_URL: the URL names no host; for a Unix socket name its directory: " +
        "postgres://user:password@localhost/database?host=/var/run/postgresql",
    );
  });

  test("a socket URL with a host passes unchanged", () => {
    const url = "postgres://u:p@localhost/shop?host=/var/run/postgresql";
    expect(checkedDatabaseUrl(url, "STABLEGATE_DATABASE_URL")).toBe(url);
  });
});
