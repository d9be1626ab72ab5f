import type { AudienceType } from '@pigeon/sdk';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { fieldErrors } from '../../api';
import { projectPath, useProject } from '../../session';
import { ConditionBuilder, emptyCondition, isComplete } from '../../ui/condition-builder';
import { ErrorNote, SelectField } from '../../ui/kit';
import { audienceOf, type ComposeValues, useDebounced } from './values';

const AUDIENCES: Array<[AudienceType, string, string]> = [
  ['ALL', 'Every contact', 'All contacts of the project'],
  ['SEGMENT', 'A segment', "A saved segment's members when sending starts"],
  ['FILTERED', 'Contacts matching conditions', 'Conditions on contact fields, events and email activity'],
];

/** Who the campaign goes to, and how many that is right now (counted by the server as sending would). */
export function AudienceFields({
  values,
  onChange,
  error,
}: {
  values: ComposeValues;
  onChange: (next: Partial<ComposeValues>) => void;
  error: unknown;
}) {
  const { project, api } = useProject();
  const segments = useQuery({
    queryKey: ['segments', project.id],
    queryFn: () => api.segments.list(),
    enabled: values.audienceType === 'SEGMENT',
  });
  const errors = fieldErrors(error);
  return (
    <fieldset className="audience">
      <legend>Audience</legend>
      {AUDIENCES.map(([type, label, hint]) => (
        <label key={type} className="choice">
          <input
            type="radio"
            name="audienceType"
            value={type}
            checked={values.audienceType === type}
            onChange={() =>
              onChange(
                type === 'FILTERED' && !values.audienceCondition
                  ? { audienceType: type, audienceCondition: emptyCondition() }
                  : { audienceType: type },
              )
            }
          />
          <span>
            {label} <small className="muted">{hint}</small>
          </span>
        </label>
      ))}
      {values.audienceType === 'SEGMENT' ? (
        <>
          <SelectField
            label="Segment"
            value={values.segmentId}
            required
            onChange={(e) => onChange({ segmentId: e.target.value })}
            options={[
              ['', segments.isPending ? 'Loading segments…' : 'Choose a segment'],
              ...(segments.data ?? []).map((s): [string, string] => [s.id, `${s.name} (${s.memberCount})`]),
            ]}
          />
          <ErrorNote error={segments.error} />
          {segments.data?.length === 0 ? (
            <p className="muted">
              No segment yet: <Link to={projectPath(project.id, 'segments')}>create one</Link>.
            </p>
          ) : null}
          {errors.segmentId ? <p className="field-error">{errors.segmentId}</p> : null}
        </>
      ) : null}
      {values.audienceType === 'FILTERED' ? (
        <ConditionBuilder
          label="Contacts matching"
          value={values.audienceCondition ?? emptyCondition()}
          onChange={(audienceCondition) => onChange({ audienceCondition })}
          errors={errors}
          prefix="audienceCondition"
        />
      ) : null}
      {errors.audienceCondition ? <p className="field-error">{errors.audienceCondition}</p> : null}
      <RecipientCount values={values} />
    </fieldset>
  );
}

function RecipientCount({ values }: { values: ComposeValues }) {
  const { project, api } = useProject();
  const audience = useDebounced(audienceOf(values));
  const incomplete =
    (audience.audienceType === 'SEGMENT' && !audience.segmentId) ||
    (audience.audienceType === 'FILTERED' && !(audience.audienceCondition && isComplete(audience.audienceCondition)));
  const count = useQuery({
    queryKey: ['audience-count', project.id, audience],
    queryFn: () => api.campaigns.audienceCount(audience),
    enabled: !incomplete,
    placeholderData: keepPreviousData,
    retry: false,
  });
  return (
    <div className="recipient-count" aria-live="polite">
      {incomplete ? <p className="muted">Complete the audience to see how many it reaches.</p> : null}
      {!incomplete && count.data ? (
        <p>
          <strong>{count.data.count.toLocaleString()}</strong> recipient{count.data.count === 1 ? '' : 's'} if sent now
          <span className="muted">
            {' '}
            ({values.type === 'TRANSACTIONAL' ? '' : 'subscribed contacts only, '}suppressed addresses left out)
          </span>
        </p>
      ) : null}
      {!incomplete && count.isFetching && !count.data ? <p className="muted">Counting recipients…</p> : null}
      {!incomplete ? <ErrorNote error={count.error} /> : null}
    </div>
  );
}
