import type { TransitionBranch, WorkflowDetail } from '@pigeon/sdk';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { projectPath, useProject } from '../session';
import { ConfirmDialog } from '../ui/dialog';
import { ErrorNote, Field, Form, Loading, Notice, PageHeader } from '../ui/kit';
import { WorkflowGraph } from '../ui/workflow-graph';
import { NO_PROBLEMS, type Problems, problemsOf, stepSummary } from '../ui/workflow-model';
import { AddStep } from './workflow/add-step';
import { Executions } from './workflow/executions';
import { useRefreshWorkflow, useTemplates, useWorkflow } from './workflow/shared';
import { StepPanel } from './workflow/step-panel';

/**
 * One workflow: its graph (select a step to edit it, drag between steps to connect them), the
 * step forms, enable/disable with the API's reasons shown on the steps they name, its settings,
 * and its executions.
 */
export default function WorkflowPage() {
  const { workflowId = '' } = useParams();
  const workflow = useWorkflow(workflowId);
  if (workflow.isPending) return <Loading />;
  if (workflow.error) return <ErrorNote error={workflow.error} />;
  return <Editor workflow={workflow.data} />;
}

function Editor({ workflow }: { workflow: WorkflowDetail }) {
  const { project, api } = useProject();
  const navigate = useNavigate();
  const refresh = useRefreshWorkflow(workflow.id);
  const templates = useTemplates();
  const [params, setParams] = useSearchParams();
  const [problems, setProblems] = useState<Problems>(NO_PROBLEMS);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const selectedId = params.get('step');
  const adding = params.get('add') === '1';
  const selected = workflow.steps.find((s) => s.id === selectedId) ?? null;
  /** The panel beside the graph: a step (`?step=`), the new-step form (`?add=1`, after the step), or neither. */
  const show = (panel: { step?: string; add?: boolean }) => {
    const next = new URLSearchParams(params);
    next.delete('step');
    next.delete('add');
    if (panel.step) next.set('step', panel.step);
    if (panel.add) next.set('add', '1');
    setParams(next, { replace: true });
  };
  /** After a graph change: the API's reasons the graph cannot run (an enabled workflow's edit), or none. */
  const changed = (error?: unknown) => setProblems(error ? problemsOf(error, workflow.steps) : NO_PROBLEMS);
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => api.workflows.update(workflow.id, { enabled }),
    onSuccess: async () => {
      setProblems(NO_PROBLEMS);
      await refresh();
    },
    onError: (error) => setProblems(problemsOf(error, workflow.steps)),
  });
  const connect = useMutation({
    mutationFn: (t: { fromStepId: string; toStepId: string; branch: TransitionBranch | null }) =>
      api.workflows.transitions.add(workflow.id, t),
    onSuccess: async () => {
      changed();
      await refresh();
    },
    onError: (error) => changed(error),
  });
  const remove = useMutation({
    mutationFn: () => api.workflows.delete(workflow.id),
    onSuccess: async () => {
      await refresh();
      navigate(projectPath(project.id, 'workflows'));
    },
  });
  return (
    <>
      <p>
        <Link to={projectPath(project.id, 'workflows')}>← Workflows</Link>
      </p>
      <PageHeader title={workflow.name}>
        <span className={`chip ${workflow.enabled ? 'ok' : 'plain'}`}>{workflow.enabled ? 'enabled' : 'disabled'}</span>
        <button
          type="button"
          className={workflow.enabled ? undefined : 'primary'}
          onClick={() => toggle.mutate(!workflow.enabled)}
          disabled={toggle.isPending}
        >
          {workflow.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" className="danger" onClick={() => setConfirmDelete(true)}>
          Delete
        </button>
      </PageHeader>
      <ErrorNote error={toggle.error} />
      {problems.general.length > 0 ? (
        <div className="note error">
          <ul>
            {problems.general.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {workflow.enabled ? (
        <Notice tone="ok">
          Enabled: tracking “{workflow.triggerConfig.eventName}” for a contact starts an execution. Every change must
          keep the workflow runnable; disable it to rebuild it.
        </Notice>
      ) : null}
      <div className="wf-editor">
        <section className="card wf-graph-card" aria-labelledby="graph-title">
          <div className="card-header">
            <h2 id="graph-title">Steps</h2>
            <div className="actions">
              <button type="button" onClick={() => show({ add: true, step: selected?.id })} aria-expanded={adding}>
                Add a step
              </button>
            </div>
          </div>
          <ErrorNote error={connect.error} />
          {workflow.steps.length === 0 ? (
            <p className="muted">No step yet: add the first one (a Send email, or a Delay before it).</p>
          ) : null}
          <WorkflowGraph
            label={`The steps of ${workflow.name}`}
            steps={workflow.steps}
            transitions={workflow.transitions}
            eventName={workflow.triggerConfig.eventName}
            summary={(s) => stepSummary(s, templates.name)}
            selected={selected?.id}
            onSelect={(id) => show({ step: id })}
            onConnect={(fromStepId, toStepId, branch) => connect.mutate({ fromStepId, toStepId, branch })}
            problems={problems}
          />
          <p className="muted wf-graph-hint">
            Select a step to edit it. Drag from the dot under a step to another step to connect them (a Condition has a
            “yes” dot on the left and a “no” dot on the right), or use the step’s form.
          </p>
        </section>
        {adding ? (
          <AddStep
            key={selected?.id ?? 'end'}
            workflow={workflow}
            after={selectedId}
            onAdded={(id, error) => {
              changed(error);
              show({ step: id });
            }}
            onCancel={() => show({})}
          />
        ) : selected ? (
          <StepPanel
            workflow={workflow}
            step={selected}
            problems={problems.byStep.get(selected.id) ?? []}
            onChanged={changed}
            onDeleted={() => show({})}
          />
        ) : (
          <Settings key={workflow.updatedAt} workflow={workflow} />
        )}
      </div>
      <Executions workflow={workflow} />
      <ConfirmDialog
        open={confirmDelete}
        title={`Delete “${workflow.name}”?`}
        confirm="Delete the workflow"
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setConfirmDelete(false)}
      >
        <ErrorNote error={remove.error} />
        <p>
          Its {workflow.steps.length} steps and the record of its {workflow.executions.total.toLocaleString()}{' '}
          executions are deleted. Running or waiting executions must be cancelled first.
        </p>
      </ConfirmDialog>
    </>
  );
}

/** Name, trigger, re-entry and description (shown while no step is selected). */
function Settings({ workflow }: { workflow: WorkflowDetail }) {
  const { api } = useProject();
  const refresh = useRefreshWorkflow(workflow.id);
  const [name, setName] = useState(workflow.name);
  const [eventName, setEventName] = useState(workflow.triggerConfig.eventName);
  const [description, setDescription] = useState(workflow.description ?? '');
  const [allowReentry, setAllowReentry] = useState(workflow.allowReentry);
  const save = useMutation({
    mutationFn: () =>
      api.workflows.update(workflow.id, {
        name,
        triggerConfig: { eventName },
        description: description.trim() || null,
        allowReentry,
      }),
    onSuccess: refresh,
  });
  return (
    <Form className="card wf-panel" onSubmit={() => save.mutate()} aria-labelledby="settings-title">
      <h2 id="settings-title">Workflow</h2>
      <p className="muted">Select a step in the graph to edit it, or add one.</p>
      <ErrorNote error={save.error} />
      <Field
        label="Name"
        name="name"
        required
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={save.error}
      />
      <Field
        label="Trigger event"
        name="triggerConfig.eventName"
        required
        value={eventName}
        onChange={(e) => setEventName(e.target.value)}
        error={save.error}
      />
      <Field
        label="Description (optional)"
        name="description"
        value={description}
        onChange={(e) => setDescription(e.target.value)}
        error={save.error}
      />
      <label className="inline">
        <input type="checkbox" checked={allowReentry} onChange={(e) => setAllowReentry(e.target.checked)} /> A contact
        may go through it more than once
      </label>
      <div>
        <button type="submit" disabled={save.isPending}>
          Save
        </button>
        {save.isSuccess ? <span className="muted"> Saved.</span> : null}
      </div>
    </Form>
  );
}
