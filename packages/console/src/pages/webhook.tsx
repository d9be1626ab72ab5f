import { WEBHOOK_DELIVERY_STATUSES, type WebhookDelivery } from '@pigeon/sdk';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { projectPath, useProject } from '../session';
import { ConfirmDialog } from '../ui/dialog';
import {
  ErrorNote,
  Form,
  Loading,
  Notice,
  PageHeader,
  Progress,
  Secret,
  SelectField,
  StatusChip,
  Time,
} from '../ui/kit';
import { Pager, useCursor, useFilter } from '../ui/pager';

/** One endpoint: its secret, enable/disable, a test event, its deliveries (attempts, replay) and recoveries. */
export default function WebhookPage() {
  const { endpointId = '' } = useParams();
  const { project, api } = useProject();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [confirmDelete, setConfirmDelete] = useState(false);
  const endpoint = useQuery({
    queryKey: ['webhook-endpoint', endpointId],
    queryFn: () => api.webhooks.endpoints.get(endpointId),
  });
  const refresh = () => {
    queryClient.invalidateQueries({ queryKey: ['webhook-endpoint', endpointId] });
    queryClient.invalidateQueries({ queryKey: ['webhook-deliveries', endpointId] });
  };
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => api.webhooks.endpoints.update(endpointId, { enabled }),
    onSuccess: refresh,
  });
  const rotate = useMutation({ mutationFn: () => api.webhooks.endpoints.rotateSecret(endpointId), onSuccess: refresh });
  const test = useMutation({ mutationFn: () => api.webhooks.endpoints.test(endpointId), onSuccess: refresh });
  const remove = useMutation({
    mutationFn: () => api.webhooks.endpoints.delete(endpointId),
    onSuccess: () => navigate(projectPath(project.id, 'webhooks')),
  });
  if (endpoint.isPending) return <Loading />;
  if (endpoint.error) return <ErrorNote error={endpoint.error} />;
  const e = endpoint.data;
  return (
    <>
      <p>
        <Link to={projectPath(project.id, 'webhooks')}>← Webhooks</Link>
      </p>
      <PageHeader title={e.url}>
        <button type="button" onClick={() => test.mutate()} disabled={test.isPending}>
          Send a test event
        </button>
        <button type="button" onClick={() => toggle.mutate(!e.enabled)} disabled={toggle.isPending}>
          {e.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" className="danger" onClick={() => setConfirmDelete(true)}>
          Delete
        </button>
      </PageHeader>
      <ErrorNote error={toggle.error ?? rotate.error ?? test.error ?? remove.error} />
      {test.isSuccess ? <Notice tone="ok">A test event was queued; it shows below in a moment.</Notice> : null}
      {!e.enabled ? (
        <Notice tone="warn">Disabled{e.disabledReason ? `: ${e.disabledReason}` : ''}. No event is sent to it.</Notice>
      ) : null}
      <dl className="facts">
        <dt>Events</dt>
        <dd>{e.eventTypes.join(', ')}</dd>
        <dt>Signing secret</dt>
        <dd>
          <Secret value={e.secret} label="Signing secret" />
          <button type="button" className="small" onClick={() => rotate.mutate()} disabled={rotate.isPending}>
            Rotate
          </button>
          {e.previousSecretExpiresAt ? (
            <div className="muted">
              The previous secret also signs until <Time iso={e.previousSecretExpiresAt} />.
            </div>
          ) : null}
        </dd>
      </dl>
      <Deliveries endpointId={endpointId} />
      <Recovery endpointId={endpointId} />
      <ConfirmDialog
        open={confirmDelete}
        title="Delete this endpoint?"
        confirm="Delete the endpoint"
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setConfirmDelete(false)}
      >
        <p>Its deliveries are deleted with it, and nothing more is sent to {e.url}.</p>
      </ConfirmDialog>
    </>
  );
}

function Deliveries({ endpointId }: { endpointId: string }) {
  const { api } = useProject();
  const pager = useCursor();
  const [status, setStatus] = useFilter('status');
  const query = {
    limit: 25,
    cursor: pager.cursor,
    status: (status || undefined) as WebhookDelivery['status'] | undefined,
  };
  const deliveries = useQuery({
    queryKey: ['webhook-deliveries', endpointId, query],
    queryFn: () => api.webhooks.deliveries.list(endpointId, query),
    placeholderData: keepPreviousData,
    refetchInterval: 5000,
  });
  return (
    <section className="card" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <SelectField
        label="Status"
        value={status}
        onChange={(e) => setStatus(e.target.value)}
        options={[['', 'Any'], ...WEBHOOK_DELIVERY_STATUSES.map((s): [string, string] => [s, s])]}
      />
      <ErrorNote error={deliveries.error} />
      {deliveries.data?.data.length === 0 ? <p className="muted">No deliveries.</p> : null}
      <ul className="deliveries">
        {deliveries.data?.data.map((d) => (
          <DeliveryItem key={d.id} endpointId={endpointId} delivery={d} />
        ))}
      </ul>
      <Pager page={deliveries.data} pager={pager} label="Deliveries" />
    </section>
  );
}

function DeliveryItem({ endpointId, delivery }: { endpointId: string; delivery: WebhookDelivery }) {
  const { api } = useProject();
  const queryClient = useQueryClient();
  const replay = useMutation({
    mutationFn: () => api.webhooks.deliveries.replay(endpointId, delivery.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['webhook-deliveries', endpointId] }),
  });
  return (
    <li>
      <details>
        <summary>
          <StatusChip status={delivery.status} /> {delivery.eventType} · <Time iso={delivery.createdAt} /> ·{' '}
          {delivery.attemptCount} attempt{delivery.attemptCount === 1 ? '' : 's'}
        </summary>
        <p>
          <code>webhook-id: {delivery.webhookId}</code>
          {delivery.nextAttemptAt ? (
            <>
              {' '}
              · next attempt <Time iso={delivery.nextAttemptAt} />
            </>
          ) : null}
        </p>
        <ErrorNote error={replay.error} />
        <button type="button" className="small" onClick={() => replay.mutate()} disabled={replay.isPending}>
          Replay
        </button>
        <h3>Attempts</h3>
        <ol className="attempts">
          {delivery.attempts.map((a, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a fixed list in server order, never reordered
            <li key={i}>
              <Time iso={a.at} /> {a.trigger === 'REPLAY' ? '(replay) ' : ''}
              {a.statusCode ? `HTTP ${a.statusCode}` : 'no answer'} in {a.durationMs} ms
              {a.error ? <div className="error-text">{a.error}</div> : null}
              {a.response ? <pre className="response">{a.response}</pre> : null}
            </li>
          ))}
        </ol>
        <h3>Payload</h3>
        <pre>{JSON.stringify(delivery.payload, null, 2)}</pre>
      </details>
    </li>
  );
}

/** `datetime-local` (the viewer's zone) → ISO. */
const fromLocal = (value: string) => (value ? new Date(value).toISOString() : undefined);

/** Sends every FAILED delivery of a time range again (after an outage of the receiver), with live progress. */
function Recovery({ endpointId }: { endpointId: string }) {
  const { api } = useProject();
  const [after, setAfter] = useState('');
  const [before, setBefore] = useState('');
  const [jobId, setJobId] = useFilter('recovery');
  const start = useMutation({
    mutationFn: () =>
      api.webhooks.deliveries.recover(endpointId, { after: fromLocal(after) ?? '', before: fromLocal(before) }),
    onSuccess: (accepted) => setJobId(accepted.jobId),
  });
  const job = useQuery({
    queryKey: ['recovery', endpointId, jobId],
    queryFn: () => api.webhooks.deliveries.recovery(endpointId, jobId),
    enabled: Boolean(jobId),
    refetchInterval: (q) => (q.state.data && ['completed', 'failed'].includes(q.state.data.status) ? false : 500),
  });
  return (
    <section className="card" aria-labelledby="recovery-title">
      <h2 id="recovery-title">Recover failed deliveries</h2>
      <p className="muted">
        After your endpoint was down: every FAILED delivery created in the range is sent once more, with its webhook-id.
      </p>
      <Form className="filters" onSubmit={() => start.mutate()}>
        <div className="field">
          <label htmlFor="recover-after">Created from</label>
          <input
            id="recover-after"
            type="datetime-local"
            required
            value={after}
            onChange={(e) => setAfter(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="recover-before">Until (empty: now)</label>
          <input id="recover-before" type="datetime-local" value={before} onChange={(e) => setBefore(e.target.value)} />
        </div>
        <button type="submit" disabled={start.isPending}>
          Recover
        </button>
      </Form>
      <ErrorNote error={start.error ?? job.error} />
      {job.data ? (
        <div aria-live="polite">
          <StatusChip status={job.data.status} />
          <Progress label="Deliveries looked at" value={job.data.processed} max={job.data.total} />
          <p>
            {job.data.updated.toLocaleString()} sent again, {job.data.skipped.toLocaleString()} skipped
          </p>
        </div>
      ) : null}
    </section>
  );
}
