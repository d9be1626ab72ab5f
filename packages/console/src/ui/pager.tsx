import { useLocation, useNavigate, useSearchParams } from 'react-router';

/**
 * Cursor paging kept in the URL (`?cursor=`), so a page is a deep link and reload keeps it.
 * "Next" pushes a history entry; "Previous" goes back to the page before when the person came
 * from it, else to the first page. Only one page of rows is ever loaded.
 */
export function useCursor() {
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const location = useLocation();
  const cursor = params.get('cursor') ?? undefined;
  const cameForward = (location.state as { paged?: boolean } | null)?.paged === true;
  return {
    cursor,
    next: (to: string) => {
      const nextParams = new URLSearchParams(params);
      nextParams.set('cursor', to);
      setParams(nextParams, { state: { paged: true } });
    },
    previous: () => {
      if (cameForward) return navigate(-1);
      const first = new URLSearchParams(params);
      first.delete('cursor');
      setParams(first);
    },
    isFirst: cursor === undefined,
  };
}

export function Pager({
  page,
  pager,
  label,
}: {
  page: { hasMore: boolean; cursor: string | null } | undefined;
  pager: ReturnType<typeof useCursor>;
  label: string;
}) {
  if (!page) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" onClick={pager.previous} disabled={pager.isFirst}>
        Previous
      </button>
      <button
        type="button"
        onClick={() => page.cursor && pager.next(page.cursor)}
        disabled={!page.hasMore || !page.cursor}
      >
        Next
      </button>
    </nav>
  );
}

/** A URL search parameter as state: reading it, and setting it (from the first page again). */
export function useFilter(name: string): [string, (value: string) => void] {
  const [params, setParams] = useSearchParams();
  return [
    params.get(name) ?? '',
    (value) => {
      const next = new URLSearchParams(params);
      if (value) next.set(name, value);
      else next.delete(name);
      next.delete('cursor');
      next.delete('page'); // offset-paged lists start again too
      setParams(next, { replace: true });
    },
  ];
}

/** The `page` of an offset-paged list kept in the URL (from 1): a deep link; changing a filter drops it. */
export function usePageParam(): [number, (page: number) => void] {
  const [params, setParams] = useSearchParams();
  return [
    Number(params.get('page')) || 1,
    (page) => {
      const next = new URLSearchParams(params);
      if (page > 1) next.set('page', String(page));
      else next.delete('page');
      setParams(next);
    },
  ];
}

/** Previous / next over numbered pages (the offset-paged lists: templates, campaigns, a segment's members). */
export function OffsetPager({
  page,
  totalPages,
  onPage,
  label,
  children,
}: {
  page: number;
  totalPages: number;
  onPage: (page: number) => void;
  label: string;
  /** What the pages hold, after "Page n of m" (e.g. "(12 templates)"). */
  children?: React.ReactNode;
}) {
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" className="secondary" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {Math.max(1, totalPages)} {children}
      </span>
      <button type="button" className="secondary" disabled={page >= totalPages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
