/** The shape of a cursor-paginated response. */
export interface CursorPage<T> {
  data: T[];
  cursor: string | null;
  hasMore: boolean;
}

/**
 * Yields every item of a cursor-paginated list, one page request at a time: starts at `cursor`
 * (the first page when undefined) and follows each page's `cursor` until `hasMore` is false.
 * Nothing is requested until iteration starts; breaking out of the loop stops the requests.
 */
export async function* paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<CursorPage<T>>,
  cursor?: string,
): AsyncGenerator<T, void, undefined> {
  let next = cursor;
  for (;;) {
    const page = await fetchPage(next);
    yield* page.data;
    if (!page.hasMore || !page.cursor) return;
    next = page.cursor;
  }
}
