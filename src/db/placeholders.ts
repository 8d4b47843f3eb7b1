/** A statement with PostgreSQL's `$n` placeholders, and how to turn SQLite-style bindings into its parameters. */
export interface PostgresText {
  text: string;
  /** For named placeholders (`$name`, `:name`, `@name`), the name bound to each `$n`; null for positional ones. */
  names: string[] | null;
}

const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const DIGITS = /[0-9]+/y;

/**
 * Rewrites the placeholders SQLite accepts (`?`, `?NNN`, `$name`, `:name`, `@name`) as `$n`,
 * leaving string literals, quoted identifiers, comments, `::` casts and existing `$n` alone, so
 * one statement text serves both engines wherever its SQL does.
 */
export function toPostgresPlaceholders(sql: string): PostgresText {
  let text = "";
  let next = 0;
  const names: string[] = [];
  let i = 0;
  const skipTo = (end: string, from: number) => {
    const at = sql.indexOf(end, from);
    return at === -1 ? sql.length : at + end.length;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    let end = i + 1;
    if (c === "'" || c === '"') {
      end = i + 1;
      for (;;) {
        end = skipTo(c, end);
        if (sql[end] !== c) break; // a doubled quote is an escaped one
        end++;
      }
    } else if (c === "-" && sql[i + 1] === "-") end = skipTo("\n", i);
    else if (c === "/" && sql[i + 1] === "*") end = skipTo("*/", i + 2);
    else if (c === ":" && sql[i + 1] === ":") end = i + 2;
    else if (c === "?") {
      DIGITS.lastIndex = i + 1;
      const digits = DIGITS.exec(sql);
      if (digits) {
        text += `$${digits[0]}`;
        next = Math.max(next, Number(digits[0]));
        i += 1 + digits[0].length;
      } else {
        text += `$${++next}`;
        i++;
      }
      continue;
    } else if (c === "$" && /[0-9]/.test(sql[i + 1] ?? "")) {
      DIGITS.lastIndex = i + 1;
      const digits = DIGITS.exec(sql)![0];
      next = Math.max(next, Number(digits));
      end = i + 1 + digits.length;
    } else if (c === "$" || c === ":" || c === "@") {
      NAME.lastIndex = i + 1;
      const name = NAME.exec(sql)?.[0];
      if (name) {
        let index = names.indexOf(name);
        if (index === -1) index = names.push(name) - 1;
        text += `$${index + 1}`;
        i += 1 + name.length;
        continue;
      }
    }
    text += sql.slice(i, end);
    i = end;
  }
  if (names.length > 0 && next > 0) throw new Error("a statement mixes named and positional placeholders");
  return { text, names: names.length > 0 ? names : null };
}
