/** A page of a list, newest first: `has_more` says whether `starting_after` the last item finds more. */
export interface List<T> {
  object: "list";
  data: T[];
  has_more: boolean;
}

/**
 * A list call: await it for one page, or iterate it with `for await` for every item across all
 * pages, each next page fetched `starting_after` the last item of the one before.
 */
export type PagePromise<T> = Promise<List<T>> & AsyncIterable<T>;

export function paged<T extends { id: string }, Q extends { starting_after?: string }>(
  fetchPage: (query: Q) => Promise<List<T>>,
  query: Q,
): PagePromise<T> {
  const first = fetchPage(query);
  async function* all(): AsyncGenerator<T> {
    let page = await first;
    for (;;) {
      yield* page.data;
      const last = page.data.at(-1);
      if (!page.has_more || last === undefined) return;
      page = await fetchPage({ ...query, starting_after: last.id });
    }
  }
  return Object.assign(first, { [Symbol.asyncIterator]: all });
}
