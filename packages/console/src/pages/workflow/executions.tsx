import { EXECUTION_STATUSES, type ExecutionStatus, type WorkflowDetail } from '@pigeon/sdk';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { projectPath, useProject } from '../../session';
import { ConfirmDialog } from '../../ui/dialog';
import { ErrorNote, Notice, SelectField, Table, Time } from '../../ui/kit';
import { Pager, useCursor, useFilter } from '../../ui/pager';
import { isActive } from '../../ui/workflow-model';
import { ContactLink, RunChip, useRefreshWorkflow } from './shared';

/** A workflow's executions, newest first, by status; each opens its path through the graph. */
export function Executions({ workflow }: { workflow: WorkflowDetail }) {
  const { project, api } = useProject();
  const queryClient = useQueryClient();
  const refresh = useRefreshWorkflow(workflow.id);
  const pager = useCursor();
  const [status, setStatus] = useFilter('status');
  const [confirmCancel, setConfirmCancel] = useState(false);
  const query = { limit: 25, cursor: pager.cursor, status: (status || undefined) as ExecutionStatus | undefined };
  const executions = useQuery({
    queryKey: ['executions', workflow.id, query],
    queryFn: () => api.workflows.executions.list(workflow.id, query),
    placeholderData: keepPreviousData,
    // Executions move on their own: follow them while any on this page runs or waits, and look for
    // new ones while the trigger can start them.
    refetchInterval: (q) =>
      q.state.data?.data.some((e) => isActive(e.status)) ? 2000 : workflow.enabled ? 3000 : false,
  });
  const cancelAll = useMutation({
    mutationFn: () => api.workflows.executions.cancelAll(workflow.id),
    onSuccess: async () => {
      setConfirmCancel(false);
      await Promise.all([refresh(), queryClient.invalidateQueries({ queryKey: ['executions', workflow.id] })]);
    },
  });
  const stepName = (id: string | null) => workflow.steps.find((s) => s.id === id)?.name ?? '—';
  return (
    <section className="card" aria-labelledby="executions-title">
      <div className="card-header">
        <h2 id="executions-title">Executions</h2>
        <span className="muted">
          {workflow.executions.active.toLocaleString()} running or waiting ·{' '}
          {workflow.executions.total.toLocaleString()} in all
        </span>
        {workflow.executions.active > 0 ? (
          <div className="actions">
            <button type="button" className="danger small" onClick={() => setConfirmCancel(true)}>
              Cancel all running
            </button>
          </div>
        ) : null}
      </div>
      <div className="filters">
        <SelectField
          label="Status"
          value={status}
          onChange={(e) => setStatus(e.target.value)}
          options={[['', 'Any'], ...EXECUTION_STATUSES.map((s): [string, string] => [s, s])]}
        />
      </div>
      <ErrorNote error={executions.error ?? cancelAll.error} />
      {executions.data?.data.length === 0 ? (
        <Notice>
          {status
            ? `No ${status} execution.`
            : `No execution yet. Once the workflow is enabled, tracking “${workflow.triggerConfig.eventName}” for a contact starts one.`}
        </Notice>
      ) : null}
      {executions.data?.data.length ? (
        <Table caption="Executions" headings={['Started', 'Contact', 'Status', 'At step', 'Next timer']}>
          {executions.data.data.map((e) => (
            <tr key={e.id}>
              <td>
                <Link to={projectPath(project.id, `workflows/${workflow.id}/executions/${e.id}`)}>
                  <Time iso={e.startedAt} />
                </Link>
              </td>
              <td>
                <ContactLink contactId={e.contactId} />
              </td>
              <td>
                <RunChip status={e.status} />
              </td>
              <td>{isActive(e.status) ? stepName(e.currentStepId) : '—'}</td>
              <td>{e.nextRunAt ? <Time iso={e.nextRunAt} relative /> : '—'}</td>
            </tr>
          ))}
        </Table>
      ) : null}
      <Pager page={executions.data} pager={pager} label="Executions" />
      <ConfirmDialog
        open={confirmCancel}
        title="Cancel every running execution?"
        confirm="Cancel them"
        busy={cancelAll.isPending}
        onConfirm={() => cancelAll.mutate()}
        onClose={() => setConfirmCancel(false)}
      >
        <p>
          {workflow.executions.active.toLocaleString()} executions stop where they are; their timers are dropped and
          they send nothing more.
        </p>
      </ConfirmDialog>
    </section>
  );
}
