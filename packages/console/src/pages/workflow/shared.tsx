import type { ExecutionStatus, StepRunStatus } from '@pigeon/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { projectPath, useProject } from '../../session';
import type { Widget } from '../../ui/workflow-config-form';
import { statusTone } from '../../ui/workflow-model';

/** A workflow with its steps and transitions (one cache entry for the editor and the execution view). */
export function useWorkflow(workflowId: string) {
  const { api } = useProject();
  return useQuery({ queryKey: ['workflow', workflowId], queryFn: () => api.workflows.get(workflowId) });
}

/** Reloads what a change to a workflow touches: the workflow, and the list (its state and counts). */
export function useRefreshWorkflow(workflowId: string) {
  const { project } = useProject();
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['workflow', workflowId] }),
      queryClient.invalidateQueries({ queryKey: ['workflows', project.id] }),
    ]);
}

/** The project's templates (the first 100, newest first), for SEND_EMAIL steps' names and picker. */
export function useTemplates() {
  const { project, api } = useProject();
  const templates = useQuery({
    queryKey: ['templates', project.id, 'workflow-picker'],
    queryFn: () => api.templates.list({ pageSize: 100 }),
  });
  const list = templates.data?.data ?? [];
  return { list, name: (id: string) => list.find((t) => t.id === id)?.name, query: templates };
}

/** SEND_EMAIL's `templateId` as a choice among the project's templates. */
export const TemplatePicker: Widget = ({ id, value, onChange, describedBy, invalid }) => {
  const { list, query } = useTemplates();
  const { project } = useProject();
  const known = list.some((t) => t.id === value);
  return (
    <>
      <select
        id={id}
        name="config.templateId"
        required
        value={value}
        aria-describedby={describedBy}
        aria-invalid={invalid || undefined}
        onChange={(e) => onChange(e.target.value)}
      >
        <option value="" disabled>
          {query.isPending ? 'Loading templates…' : list.length ? 'Choose a template…' : 'No template yet'}
        </option>
        {value && !known ? <option value={value}>{value}</option> : null}
        {list.map((t) => (
          <option key={t.id} value={t.id}>
            {t.name} — {t.subject}
          </option>
        ))}
      </select>
      {list.length === 0 && !query.isPending ? (
        <small className="muted">
          Create one on the <Link to={projectPath(project.id, 'templates')}>Templates</Link> page first.
        </small>
      ) : null}
    </>
  );
};

const CONDITION_EXAMPLE = JSON.stringify(
  { logic: 'AND', groups: [{ filters: [{ field: 'data.plan', operator: 'equals', value: 'pro' }] }] },
  null,
  2,
);

/**
 * CONDITION's tree as JSON (groups of filters; `GET /workflows/fields` names the fields), with an
 * example to start from. To be replaced by the console's condition builder once it exists.
 */
export const ConditionJson: Widget = ({ id, value, onChange, describedBy, invalid }) => (
  <textarea
    id={id}
    name="config.condition"
    className="json"
    rows={9}
    required
    spellCheck={false}
    placeholder={CONDITION_EXAMPLE}
    aria-describedby={describedBy}
    aria-invalid={invalid || undefined}
    value={value}
    onChange={(e) => onChange(e.target.value)}
  />
);

export function RunChip({ status }: { status: ExecutionStatus | StepRunStatus }) {
  return <span className={`chip ${statusTone(status)}`}>{status}</span>;
}

/** A contact by its email, linking to its page (the id until it loads). */
export function ContactLink({ contactId }: { contactId: string }) {
  const { project, api } = useProject();
  const contact = useQuery({
    queryKey: ['contact', contactId],
    queryFn: () => api.contacts.get(contactId),
    staleTime: 300_000,
  });
  return (
    <Link to={projectPath(project.id, `contacts/${contactId}`)}>{contact.data?.email ?? contactId.slice(0, 8)}</Link>
  );
}
