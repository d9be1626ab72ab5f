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
