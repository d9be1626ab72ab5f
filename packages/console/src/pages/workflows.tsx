import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { projectPath, useProject } from '../session';
import { EmptyState, ErrorNote, Field, Form, Loading, PageHeader, Table, Time } from '../ui/kit';

/** The project's workflows (trigger, state, executions), and a form to start a new one. */
export default function WorkflowsPage() {
  const { project, api } = useProject();
  const workflows = useQuery({ queryKey: ['workflows', project.id], queryFn: () => api.workflows.list() });
  return (
    <>
      <PageHeader title="Workflows" />
      <p className="muted">
        A workflow starts for a contact when your app tracks its trigger event, then walks its steps: emails, delays,
        waits for another event, conditions, webhooks, contact updates.
      </p>
      <ErrorNote error={workflows.error} />
      {workflows.isPending ? <Loading /> : null}
      {workflows.data?.length === 0 ? (
        <EmptyState title="No workflow yet">
          <p>
            Create one below with the event that starts it, add its steps, and enable it. Your backend then tracks the
            event for a contact:
          </p>
          <pre>{`await pigeon.events.track({ email: 'ada@example.com', event: 'signup' });`}</pre>
        </EmptyState>
      ) : null}
      {workflows.data?.length ? (
        <Table caption="Workflows" headings={['Name', 'Trigger event', 'State', 'Executions', 'Updated']}>
          {workflows.data.map((w) => (
            <tr key={w.id}>
              <td>
                <Link to={projectPath(project.id, `workflows/${w.id}`)}>{w.name}</Link>
                {w.description ? <div className="muted">{w.description}</div> : null}
              </td>
              <td>
                <code>{w.triggerConfig.eventName}</code>
              </td>
              <td>
                <span className={`chip ${w.enabled ? 'ok' : 'plain'}`}>{w.enabled ? 'enabled' : 'disabled'}</span>
              </td>
              <td>
                {w.executions.active.toLocaleString()} running · {w.executions.total.toLocaleString()} in all
              </td>
              <td>
                <Time iso={w.updatedAt} />
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
      <NewWorkflow />
    </>
  );
}

function NewWorkflow() {
  const { project, api } = useProject();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [eventName, setEventName] = useState('');
  const [allowReentry, setAllowReentry] = useState(false);
  // Events this project has tracked, offered as trigger names.
  const names = useQuery({ queryKey: ['event-names', project.id], queryFn: () => api.events.names() });
  const create = useMutation({
    mutationFn: () => api.workflows.create({ name, triggerConfig: { eventName }, allowReentry }),
    onSuccess: async (workflow) => {
      await queryClient.invalidateQueries({ queryKey: ['workflows', project.id] });
      navigate(projectPath(project.id, `workflows/${workflow.id}`));
    },
  });
  return (
    <Form className="card" onSubmit={() => create.mutate()}>
      <h2>New workflow</h2>
      <ErrorNote error={create.error} />
      <Field
        label="Name"
        name="name"
        required
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={create.error}
      />
      <Field
        label="Trigger event"
        name="triggerConfig.eventName"
        required
        list="workflow-event-names"
        placeholder="signup"
        hint="Tracking this event for a contact starts an execution (once the workflow is enabled)."
        value={eventName}
        onChange={(e) => setEventName(e.target.value)}
        error={create.error}
      />
      <datalist id="workflow-event-names">
        {names.data?.map((n) => (
          <option key={n.name} value={n.name} />
        ))}
      </datalist>
      <label className="inline">
        <input type="checkbox" checked={allowReentry} onChange={(e) => setAllowReentry(e.target.checked)} /> A contact
        may go through it more than once
      </label>
      <div>
        <button type="submit" className="primary" disabled={create.isPending}>
          Create workflow
        </button>
      </div>
    </Form>
  );
}
