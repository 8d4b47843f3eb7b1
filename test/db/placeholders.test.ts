import { describe, expect, test } from "bun:test";
import { toPostgresPlaceholders } from "../../src/db/placeholders.ts";

describe("SQLite placeholders as PostgreSQL's", () => {
  test("positional ? are numbered in order, ?NNN keep their number", () => {
    expect(toPostgresPlaceholders("SELECT * FROM t WHERE a = ? AND b > ? LIMIT ?")).toEqual({
      text: "SELECT * FROM t WHERE a = $1 AND b > $2 LIMIT $3",
      names: null,
    });
    expect(toPostgresPlaceholders("SELECT ?2, ?1, ?2").text).toBe("SELECT $2, $1, $2");
  });

  test("named placeholders share one number per name, in order of first use", () => {
    expect(toPostgresPlaceholders("UPDATE t SET a = $a, b = :b WHERE id = @id AND a <> $a")).toEqual({
      text: "UPDATE t SET a = $1, b = $2 WHERE id = $3 AND a <> $1",
      names: ["a", "b", "id"],
    });
  });

  test("string literals, quoted identifiers, comments, casts and existing $n are left alone (and counted)", () => {
    const sql = `SELECT '?', 'it''s $x ?', "col?", x::bigint, $1 -- a ? here\n, ? /* and :y here */`;
    expect(toPostgresPlaceholders(sql).text).toBe(
      `SELECT '?', 'it''s $x ?', "col?", x::bigint, $1 -- a ? here\n, $2 /* and :y here */`,
    );
  });

  test("mixing named and positional placeholders is refused", () => {
    expect(() => toPostgresPlaceholders("SELECT ?, $a")).toThrow("mixes named and positional");
  });
});
