import { WEBHOOK_EVENT_TYPES } from '@pigeon/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { projectPath, useProject } from '../session';
import { EmptyState, ErrorNote, Field, Form, Loading, Notice, PageHeader, StatusChip, Table, Time } from '../ui/kit';

/** Event webhook endpoints (OWNER and ADMIN): the list, and a form for a new one. */
export default function WebhooksPage() {
  const { project, api, canManage } = useProject();
  const endpoints = useQuery({
    queryKey: ['webhook-endpoints', project.id],
    queryFn: () => api.webhooks.endpoints.list(),
    enabled: canManage,
  });
  if (!canManage) return <Notice>Webhook endpoints need the OWNER or ADMIN role.</Notice>;
  return (
    <>
      <PageHeader title="Webhooks" />
      <ErrorNote error={endpoints.error} />
      {endpoints.isPending ? <Loading /> : null}
      {endpoints.data?.length === 0 ? (
        <EmptyState title="No endpoint yet">
          <p>Pigeon POSTs signed events (sent, delivered, opened, bounced…) to your endpoints as they happen.</p>
        </EmptyState>
      ) : null}
      {endpoints.data?.length ? (
        <Table caption="Webhook endpoints" headings={['URL', 'Events', 'State', 'Created']}>
          {endpoints.data.map((e) => (
            <tr key={e.id}>
              <td>
                <Link to={projectPath(project.id, `webhooks/${e.id}`)}>{e.url}</Link>
                {e.description ? <div className="muted">{e.description}</div> : null}
              </td>
              <td>{e.eventTypes.join(', ')}</td>
              <td>
                <StatusChip status={e.enabled ? 'enabled' : 'disabled'} />
                {e.failingSince ? (
                  <div className="muted">
                    failing since <Time iso={e.failingSince} />
                  </div>
                ) : null}
              </td>
              <td>
                <Time iso={e.createdAt} />
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
      <NewEndpoint />
    </>
  );
}

function NewEndpoint() {
  const { project, api } = useProject();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState<string[]>(['*']);
  const create = useMutation({
    mutationFn: () => api.webhooks.endpoints.create({ url, eventTypes: types, description: description || null }),
    onSuccess: async (endpoint) => {
      await queryClient.invalidateQueries({ queryKey: ['webhook-endpoints', project.id] });
      navigate(projectPath(project.id, `webhooks/${endpoint.id}`));
    },
  });
  const toggle = (type: string) =>
    setTypes((current) => {
      const rest = current.filter((t) => t !== '*' && t !== type);
      if (type === '*') return current.includes('*') ? [] : ['*'];
      return current.includes(type) ? rest : [...rest, type];
    });
  return (
    <Form className="card" onSubmit={() => create.mutate()}>
      <h2>Add an endpoint</h2>
      <ErrorNote error={create.error} />
      <Field
        label="URL"
        name="url"
        type="url"
        required
        placeholder="https://api.example.com/pigeon-webhooks"
        value={url}
        onChange={(e) => setUrl(e.target.value)}
        error={create.error}
      />
      <Field
        label="Description"
        name="description"
        value={description}
        onChange={(e) => setDescription(e.target.value)}
        error={create.error}
      />
      <fieldset>
        <legend>Events</legend>
        <label className="inline">
          <input type="checkbox" checked={types.includes('*')} onChange={() => toggle('*')} /> Every event
        </label>
        {WEBHOOK_EVENT_TYPES.filter((t) => t !== 'webhook.test').map((t) => (
          <label className="inline" key={t}>
            <input
              type="checkbox"
              checked={types.includes('*') || types.includes(t)}
              disabled={types.includes('*')}
              onChange={() => toggle(t)}
            />{' '}
            {t}
          </label>
        ))}
      </fieldset>
      <button type="submit" className="primary" disabled={create.isPending || types.length === 0}>
        Add endpoint
      </button>
    </Form>
  );
}
