import type { ExecutionStatus, StepRunStatus } from '@pigeon/sdk';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { projectPath, useProject } from '../../session';
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
