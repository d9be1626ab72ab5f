import type { ConditionTree } from '@pigeon/sdk';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { fieldErrors } from '../../api';
import { useProject } from '../../session';
import { isComplete } from '../../ui/condition-builder';
import { useDebounced } from '../../ui/use-debounced';

/** How many contacts the condition matches now, asked again when editing pauses (POST /segments/count). */
export function LiveCount({ condition }: { condition: ConditionTree }) {
  const { project, api } = useProject();
  const settled = useDebounced(condition, 400);
  const complete = isComplete(settled);
  const count = useQuery({
    queryKey: ['segment-count', project.id, settled],
    queryFn: () => api.segments.count(settled),
    enabled: complete,
    placeholderData: keepPreviousData,
    staleTime: 5_000,
  });
  const problem = Object.values(fieldErrors(count.error))[0] ?? (count.error as Error | null)?.message;
  return (
    <p className="live-count" aria-live="polite">
      {!complete ? (
        <span className="muted">Fill in every condition to see how many contacts match.</span>
      ) : problem ? (
        <span className="field-error">{problem}</span>
      ) : count.data ? (
        <>
          {count.data.sampled ? '≈ ' : ''}
          <strong>{count.data.count.toLocaleString()}</strong> contact{count.data.count === 1 ? '' : 's'} match now
          {count.data.sampled ? (
            <span className="muted">
              {' '}
              (estimated from {count.data.sampleSize.toLocaleString()} contacts; saving counts them all)
            </span>
          ) : null}
          {count.isFetching ? <span className="muted"> (counting…)</span> : null}
        </>
      ) : (
        <span className="muted">Counting…</span>
      )}
    </p>
  );
}
