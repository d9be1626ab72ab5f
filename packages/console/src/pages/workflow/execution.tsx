import type { ExecutionDetail, WorkflowDetail } from '@pigeon/sdk';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { projectPath, useProject } from '../../session';
import { ConfirmDialog } from '../../ui/dialog';
import { ErrorNote, Loading, PageHeader, Table, Time } from '../../ui/kit';
import { type ExecutionMarks, WorkflowGraph } from '../../ui/workflow-graph';
import { isActive, stepSummary, typeLabel } from '../../ui/workflow-model';
import { ContactLink, RunChip, useRefreshWorkflow, useTemplates, useWorkflow } from './shared';

/**
 * One execution: its path through the graph (the steps it passed, the one it is at), its timer (a
 * Delay's wake-up, a wait's deadline), status, the record of each step run, and cancel. Followed
 * live while it runs or waits.
 */
export default function ExecutionPage() {
  const { workflowId = '', executionId = '' } = useParams();
  const { api } = useProject();
  const workflow = useWorkflow(workflowId);
  const execution = useQuery({
    queryKey: ['execution', workflowId, executionId],
    queryFn: () => api.workflows.executions.get(workflowId, executionId),
    refetchInterval: (q) => (q.state.data && !isActive(q.state.data.status) ? false : 1000),
  });
  if (workflow.isPending || execution.isPending) return <Loading />;
  if (workflow.error || execution.error) return <ErrorNote error={workflow.error ?? execution.error} />;
  return <ExecutionView workflow={workflow.data} execution={execution.data} />;
}

/** Where the execution went: each step it ran (its last status), and the steps it moved between, in order. */
function marksOf(execution: ExecutionDetail): ExecutionMarks {
  const runs = [...execution.steps].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const passed = new Map<string, string>();
  const followed = new Set<string>();
  let previous: string | null = null;
  for (const run of runs) {
    if (!run.stepId) continue;
    passed.set(run.stepId, run.status);
    if (previous && previous !== run.stepId) followed.add(`${previous}>${run.stepId}`);
    previous = run.stepId;
  }
  return { passed, current: isActive(execution.status) ? execution.currentStepId : null, followed };
}

function ExecutionView({ workflow, execution }: { workflow: WorkflowDetail; execution: ExecutionDetail }) {
  const { project, api } = useProject();
  const queryClient = useQueryClient();
  const refresh = useRefreshWorkflow(workflow.id);
  const templates = useTemplates();
  const [confirmCancel, setConfirmCancel] = useState(false);
  const cancel = useMutation({
    mutationFn: () => api.workflows.executions.cancel(workflow.id, execution.id),
    onSuccess: async () => {
      setConfirmCancel(false);
      await Promise.all([
        refresh(),
        queryClient.invalidateQueries({ queryKey: ['execution', workflow.id, execution.id] }),
        queryClient.invalidateQueries({ queryKey: ['executions', workflow.id] }),
      ]);
    },
  });
  const current = workflow.steps.find((s) => s.id === execution.currentStepId);
  const active = isActive(execution.status);
  const runs = [...execution.steps].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  return (
    <>
      <p>
        <Link to={projectPath(project.id, `workflows/${workflow.id}`)}>← {workflow.name}</Link>
      </p>
      <PageHeader title={`Execution of ${workflow.name}`}>
        {active ? (
          <button type="button" className="danger" onClick={() => setConfirmCancel(true)}>
            Cancel execution
          </button>
        ) : null}
      </PageHeader>
      <ErrorNote error={cancel.error} />
      <dl className="facts" aria-live="polite">
        <dt>Status</dt>
        <dd>
          <RunChip status={execution.status} />
          {execution.exitReason ? <span className="muted"> {execution.exitReason}</span> : null}
        </dd>
        <dt>Contact</dt>
        <dd>
          <ContactLink contactId={execution.contactId} />
        </dd>
        {active && current ? (
          <>
            <dt>At step</dt>
            <dd>
              {current.name} ({typeLabel(current.type)})
            </dd>
          </>
        ) : null}
        <Timer execution={execution} stepType={current?.type} />
        <dt>Started</dt>
        <dd>
          <Time iso={execution.startedAt} />
        </dd>
        <dt>{execution.status === 'CANCELLED' ? 'Cancelled' : 'Ended'}</dt>
        <dd>
          <Time iso={execution.completedAt} />
        </dd>
      </dl>
      <section className="card" aria-labelledby="path-title">
        <h2 id="path-title">Path</h2>
        <WorkflowGraph
          label={`The path of this execution through ${workflow.name}`}
          steps={workflow.steps}
          transitions={workflow.transitions}
          eventName={workflow.triggerConfig.eventName}
          summary={(s) => stepSummary(s, templates.name)}
          marks={marksOf(execution)}
        />
      </section>
      <section className="card" aria-labelledby="runs-title">
        <h2 id="runs-title">Steps run</h2>
        {runs.length === 0 ? <p className="muted">No step has run yet.</p> : null}
        {runs.length > 0 ? (
          <Table
            caption="Steps run, in order"
            headings={['Step', 'Status', 'Started', 'Finished', 'Attempts', 'Result']}
          >
            {runs.map((r) => (
              <tr key={r.id}>
                <td>
                  {r.stepName} <span className="muted">({typeLabel(r.stepType)})</span>
                </td>
                <td>
                  <RunChip status={r.status} />
                </td>
                <td>
                  <Time iso={r.startedAt} />
                </td>
                <td>
                  <Time iso={r.finishedAt} />
                </td>
                <td>{r.attempts}</td>
                <td>
                  {r.error ? <div className="error-text">{r.error}</div> : null}
                  {r.output && Object.keys(r.output).length > 0 ? (
                    <details>
                      <summary>Output</summary>
                      <pre>{JSON.stringify(r.output, null, 2)}</pre>
                    </details>
                  ) : null}
                </td>
              </tr>
            ))}
          </Table>
        ) : null}
      </section>
      <section className="card" aria-labelledby="context-title">
        <h2 id="context-title">Context</h2>
        <p className="muted">What the steps can use: the trigger (or awaited) event’s data, and the start context.</p>
        <pre>{JSON.stringify(execution.context, null, 2)}</pre>
      </section>
      <ConfirmDialog
        open={confirmCancel}
        title="Cancel this execution?"
        confirm="Cancel the execution"
        busy={cancel.isPending}
        onConfirm={() => cancel.mutate()}
        onClose={() => setConfirmCancel(false)}
      >
        <p>
          It stops at {current ? `“${current.name}”` : 'its current step'}; its timer is dropped and nothing more is
          sent.
        </p>
      </ConfirmDialog>
    </>
  );
}

/** The execution's timer, named by what it waits for. */
function Timer({ execution, stepType }: { execution: ExecutionDetail; stepType?: string }) {
  if (!isActive(execution.status)) return null;
  const at = execution.nextRunAt;
  if (execution.waitingFor) {
    return (
      <>
        <dt>Waiting for</dt>
        <dd>
          “{execution.waitingFor}”{' '}
          {at ? (
            <>
              until <Time iso={at} /> (<Time iso={at} relative />)
            </>
          ) : (
            '(no deadline)'
          )}
        </dd>
      </>
    );
  }
  if (!at) return null;
  return (
    <>
      <dt>{stepType === 'DELAY' ? 'Wakes up' : 'Next attempt'}</dt>
      <dd>
        <Time iso={at} /> (<Time iso={at} relative />)
      </dd>
    </>
  );
}
