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

/** The shape of an offset-paginated (page-numbered) response. */
export interface OffsetPage<T> {
  data: T[];
  page: number;
  totalPages: number;
}

/**
 * Yields every item of an offset-paginated list, one page request at a time: starts at `page`
 * (default 1) and requests the next page number until the answered `page` reaches `totalPages`.
 * Nothing is requested until iteration starts; breaking out of the loop stops the requests.
 */
export async function* paginateOffset<T>(
  fetchPage: (page: number) => Promise<OffsetPage<T>>,
  page = 1,
): AsyncGenerator<T, void, undefined> {
  let next = page;
  for (;;) {
    const result = await fetchPage(next);
    yield* result.data;
    if (result.data.length === 0 || result.page >= result.totalPages) return;
    // Always move forward, even if the server answered an earlier page than the one asked for.
    next = Math.max(result.page, next) + 1;
  }
}

/** The shape of a page-numbered response that carries a `total` but no `totalPages`. */
export interface TotalPage<T> {
  data: T[];
  page: number;
  pageSize: number;
  total: number;
}

/**
 * Yields every item of a page-numbered list, one page request at a time: starts at `page`
 * (default 1) and stops after an empty or short page (fewer items than its `pageSize`). `total`
 * is not trusted to stop early: a segment's total is a cached count, and live members may
 * outnumber it. Lazy like {@link paginate}.
 */
export async function* paginateTotal<T>(
  fetchPage: (page: number) => Promise<TotalPage<T>>,
  page = 1,
): AsyncGenerator<T, void, undefined> {
  let next = page;
  for (;;) {
    const result = await fetchPage(next);
    yield* result.data;
    const { length } = result.data;
    if (length === 0 || length < result.pageSize) return;
    next = Math.max(result.page, next) + 1;
  }
}
