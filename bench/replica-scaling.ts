/**
 * Do N replicas on one database make more creates than one? Asked of the same servers on the same
 * database, in short phases that alternate (1, N, N, 1, ...): runs minutes apart (`bench/api.ts
 * --replicas 1`, then `--replicas 2`) see a machine that drifts by a third within minutes here, and
 * a second process still compiling its hot paths. The first replica takes the whole load in the
 * "1" phases while the others stay up, idle: an idle replica's background loops cost about 1% of a
 * core, measured on this machine.
 */
import { CREATE_BODY, type LoadResult, median, runLoad } from "./lib.ts";

export interface Replicas {
  bases: string[];
  headers: Record<string, string>;
  /** The replicas' processes and the database's, whose CPU each phase counts. */
  pids: number[];
  databaseOf?: () => number[];
}

/** The rounds' rates, CPU per create and ratios, and their median, as lines to print. */
export async function replicaScaling(
  replicas: Replicas,
  opts: { clients: number; seconds: number; rounds: number },
): Promise<string[]> {
  const n = replicas.bases.length;
  const phase = (bases: string[]): Promise<LoadResult> => {
    let turn = 0;
    return runLoad({
      name: `creates on ${bases.length}`,
      clients: opts.clients,
      seconds: opts.seconds,
      request: () =>
        fetch(`${bases[turn++ % bases.length]}/api/v1/payments`, {
          method: "POST",
          headers: replicas.headers,
          body: CREATE_BODY,
        }),
      cpuOf: replicas.pids,
      databaseOf: replicas.databaseOf,
    });
  };
  const lines = [
    `Creates on 1 replica against ${n}, same database, ${opts.seconds} s phases alternating 1, ${n}, ${n}, 1, ...`,
    `${"round".padEnd(7)}${"1 replica/s".padStart(12)}${`${n} replicas/s`.padStart(14)}${`${n}/1`.padStart(7)}   ${"servers' CPU µs/create 1".padStart(24)}${String(n).padStart(6)}`,
  ];
  const ratios: number[] = [];
  for (let round = 1; round <= opts.rounds; round++) {
    const order = round % 2 === 1 ? [1, n] : [n, 1];
    const results = new Map<number, LoadResult>();
    for (const count of order) results.set(count, await phase(replicas.bases.slice(0, count)));
    const one = results.get(1)!;
    const all = results.get(n)!;
    const failed = [one, all].find((r) => r.errors > 0);
    if (failed) lines.push(`! ${failed.name}: ${failed.errors} errors, first: ${failed.firstError}`);
    ratios.push(all.perSecond / one.perSecond);
    lines.push(
      `${String(round).padEnd(7)}${one.perSecond.toFixed(0).padStart(12)}${all.perSecond.toFixed(0).padStart(14)}${ratios.at(-1)!.toFixed(2).padStart(7)}   ${cpu(one).padStart(24)}${cpu(all).padStart(6)}`,
    );
  }
  const atLeastOne = ratios.filter((r) => r >= 1).length;
  lines.push(
    `median ${n} replicas / 1: ${median(ratios).toFixed(2)}x (${atLeastOne} of ${ratios.length} rounds at 1x or more)`,
  );
  return lines;
}

function cpu(result: LoadResult): string {
  return result.cpu?.processUs.toFixed(0) ?? "-";
}
