import type { ConditionTree, ExecutionStatus, StepRunStatus } from '@pigeon/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { fieldErrors } from '../../api';
import { projectPath, useProject } from '../../session';
import { ConditionBuilder, emptyCondition } from '../../ui/condition-builder';
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

const parseTree = (text: string): ConditionTree | undefined => {
  try {
    const tree = JSON.parse(text) as ConditionTree;
    return tree && typeof tree === 'object' && Array.isArray(tree.groups) ? tree : undefined;
  } catch {
    return undefined;
  }
};

/**
 * CONDITION's tree with the console's condition builder, or as JSON for what the builder does not
 * pick (a `workflow.*` field of the start context, say). The API's errors inside the tree show on
 * the filter they name.
 */
export const ConditionField: Widget = ({ id, label, value, onChange, describedBy, invalid, error }) => {
  const tree = parseTree(value);
  const [asJson, setAsJson] = useState(false);
  // A new step starts from an empty condition, so that what the builder shows is what is saved.
  useEffect(() => {
    if (!value) onChange(JSON.stringify(emptyCondition(), null, 2));
  }, [value, onChange]);
  if (asJson || (value && !tree)) {
    return (
      <>
        <label htmlFor={id}>{label} (JSON)</label>
        <textarea
          id={id}
          name="config.condition"
          className="json"
          rows={9}
          required
          spellCheck={false}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
        <div>
          <button type="button" className="small" disabled={!tree} onClick={() => setAsJson(false)}>
            Edit with the builder
          </button>
        </div>
      </>
    );
  }
  return (
    <>
      <ConditionBuilder
        label={label}
        value={tree ?? emptyCondition()}
        onChange={(next) => onChange(JSON.stringify(next, null, 2))}
        errors={fieldErrors(error)}
        prefix="config.condition"
      />
      <div>
        <button type="button" className="small" onClick={() => setAsJson(true)}>
          Edit as JSON
        </button>
      </div>
    </>
  );
};
ConditionField.ownLabel = true;

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
