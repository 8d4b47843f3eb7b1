/**
 * Statements as tagged templates: `sql\`SELECT * FROM payments WHERE id = ${id}\``. The text
 * between the values is the statement; each value is a parameter, or, when it is itself a `Sql`
 * (another `sql` template, `raw`, `list`), spliced in where it stands. Each engine joins the parts
 * with its own placeholders (`?` for SQLite, `$n` for PostgreSQL), so no statement text is ever
 * parsed or rewritten, and a parameter can never end up outside the place it was written.
 */
export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  return new Sql(strings, values);
}

/** Trusted SQL text (a constant fragment, a column list built from constants), never a value. */
export const raw = (text: string): Sql => new Sql([text], []);

/** Parts joined by `separator`, e.g. `list(ids.map((id) => sql\`${id}\`))` for `IN (...)`. */
export function list(parts: readonly Sql[], separator = ", "): Sql {
  if (parts.length === 0) throw new Error("list() needs at least one part");
  return new Sql(["", ...Array<string>(parts.length - 1).fill(separator), ""], parts);
}

/** A statement as one engine sends it: text with placeholders, and the parameters in order. */
export interface Compiled {
  text: string;
  values: unknown[];
}

/**
 * An engine's compiler: joins the parts with `placeholder(n)` for the n-th parameter (1-based).
 * The text of a statement without nested fragments is joined once per call site (a template's
 * strings array is the same object on every call) and remembered.
 */
export function compilerFor(placeholder: (n: number) => string): (query: Sql) => Compiled {
  const texts = new WeakMap<readonly string[], string>();
  return (query) => {
    if (!query.values.some((value) => value instanceof Sql)) {
      let text = texts.get(query.strings);
      if (text === undefined) {
        text = query.strings[0]!;
        for (let i = 1; i < query.strings.length; i++) text += placeholder(i) + query.strings[i];
        texts.set(query.strings, text);
      }
      return { text, values: query.values as unknown[] };
    }
    const values: unknown[] = [];
    const text = flatten(query, values, placeholder);
    return { text, values };
  };
}

function flatten(query: Sql, values: unknown[], placeholder: (n: number) => string): string {
  let text = query.strings[0]!;
  query.values.forEach((value, i) => {
    if (value instanceof Sql) text += flatten(value, values, placeholder);
    else {
      values.push(value);
      text += placeholder(values.length);
    }
    text += query.strings[i + 1];
  });
  return text;
}
