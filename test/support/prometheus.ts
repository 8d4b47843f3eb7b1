/**
 * A reader of the Prometheus text format (0.0.4) strict enough to catch a malformed exposition:
 * every sample belongs to a family announced by `# TYPE`, label values are quoted and unescaped,
 * values are numbers. For tests that scrape /metrics.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Each family's type and help, by name. */
  families: Map<string, { type: string; help: string | undefined }>;
  samples: Sample[];
  /** The value of the one sample named `name` whose labels are exactly `labels`; undefined when none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SUFFIXES: Record<string, string[]> = { histogram: ["_bucket", "_sum", "_count"], summary: ["_sum", "_count"] };

export function parseExposition(text: string): Exposition {
  const families = new Map<string, { type: string; help: string | undefined }>();
  const helps = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const comment = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (comment) {
      const [, kind, name, rest] = comment as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      if (kind === "HELP") helps.set(name, rest);
      else if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest))
        throw new Error(`bad type in: ${line}`);
      else families.set(name, { type: rest, help: helps.get(name) });
      continue;
    }
    if (line.startsWith("#")) continue;
    const sample = parseSample(line);
    if (!familyOf(sample.name, families)) throw new Error(`sample without a # TYPE line: ${line}`);
    samples.push(sample);
  }
  return {
    families,
    samples,
    value(name, labels = {}) {
      const found = samples.filter((s) => s.name === name && sameLabels(s.labels, labels));
      if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
      return found[0]?.value;
    },
  };
}

/** The family a sample belongs to: its own name, or a histogram's or summary's with the suffix taken off. */
function familyOf(sample: string, families: Exposition["families"]) {
  if (families.has(sample)) return families.get(sample);
  for (const [name, family] of families)
    if ((SUFFIXES[family.type] ?? []).some((suffix) => sample === name + suffix)) return family;
  return undefined;
}

function parseSample(line: string): Sample {
  const head = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{)?/.exec(line);
  if (!head) throw new Error(`bad sample: ${line}`);
  const name = head[1]!;
  const labels: Record<string, string> = {};
  let rest = line.slice(name.length);
  if (head[2]) {
    rest = rest.slice(1);
    for (;;) {
      if (rest.startsWith("}")) break;
      const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,?)/.exec(rest);
      if (!label) throw new Error(`bad labels in: ${line}`);
      labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
      rest = rest.slice(label[0].length);
      if (!label[3] && !rest.startsWith("}")) throw new Error(`bad labels in: ${line}`);
    }
    rest = rest.slice(1);
  }
  const value = /^ (\S+)(?: -?\d+)?$/.exec(rest)?.[1];
  const number = value === "+Inf" ? Infinity : value === "-Inf" ? -Infinity : Number(value);
  if (value === undefined || (Number.isNaN(number) && value !== "NaN")) throw new Error(`bad value in: ${line}`);
  return { name, labels, value: number };
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
