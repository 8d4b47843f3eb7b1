/**
 * Finds the exact source text of a top-level member's value in a JSON object document, so it
 * can be stored and echoed byte for byte. Assumes `text` already parsed as JSON (the caller
 * checked); returns null when the member is absent. A duplicated key yields its last value, as
 * JSON.parse does.
 */
export function rawMemberText(text: string, key: string): string | null {
  let i = skipSpace(text, 0);
  if (text[i] !== "{") return null;
  i++;
  let found: string | null = null;
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] === "}") return found;
    const keyEnd = skipString(text, i);
    const name = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd) + 1; // past ':'
    const start = skipSpace(text, i);
    const end = skipValue(text, start);
    if (name === key) found = text.slice(start, end);
    i = skipSpace(text, end);
    if (text[i] === ",") i++;
    else return found;
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  return i;
}

/** `i` is at an opening quote; returns the index just past the closing one. */
function skipString(text: string, i: number): number {
  for (i++; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i + 1;
  }
  return i;
}

function skipValue(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return skipString(text, i);
  if (first !== "{" && first !== "[") {
    while (i < text.length && !",}] \t\n\r".includes(text[i]!)) i++;
    return i;
  }
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = skipString(text, i) - 1;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return i;
}

/** The deepest nesting of objects and arrays in `text`, counted without parsing it. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = skipString(text, i) - 1;
    else if (c === "{" || c === "[") deepest = Math.max(deepest, ++depth);
    else if (c === "}" || c === "]") depth--;
  }
  return deepest;
}

/** The names of a JSON object document's top-level members, decoded, duplicates included. */
export function memberNames(text: string): string[] {
  const names: string[] = [];
  let i = skipSpace(text, 0);
  if (text[i] !== "{") return names;
  i++;
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] !== '"') return names;
    const keyEnd = skipString(text, i);
    names.push(JSON.parse(text.slice(i, keyEnd)) as string);
    i = skipSpace(text, skipSpace(text, keyEnd) + 1);
    i = skipSpace(text, skipValue(text, i));
    if (text[i] !== ",") return names;
    i++;
  }
}

/**
 * `text` without the whitespace between tokens; strings, escapes, numbers and member order are
 * kept exactly as written. Assumes `text` is valid JSON.
 */
export function withoutSpace(text: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') i = skipString(text, i) - 1;
    else if (" \t\n\r".includes(c)) {
      out += text.slice(from, i);
      from = i + 1;
    }
  }
  return out + text.slice(from);
}
