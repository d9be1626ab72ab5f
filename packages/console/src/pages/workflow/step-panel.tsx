import type { TransitionBranch, WorkflowDetail, WorkflowStep } from '@pigeon/sdk';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { useProject } from '../../session';
import { ConfirmDialog } from '../../ui/dialog';
import { ErrorNote, Field, Form, SelectField } from '../../ui/kit';
import { ConfigFields, configOf, type Draft, draftOf, stepFields } from '../../ui/workflow-config-form';
import { BRANCHES, branchLabel, editableConfig, typeLabel } from '../../ui/workflow-model';
import { useRefreshWorkflow } from './shared';
import { WIDGETS } from './widgets';

/**
 * The selected step: its name and config (the form of its type), where it leads (transitions,
 * one per branch), the API's reasons it keeps the workflow from running, and delete.
 */
export function StepPanel({
  workflow,
  step,
  problems,
  onChanged,
  onDeleted,
}: {
  workflow: WorkflowDetail;
  step: WorkflowStep;
  problems: string[];
  /** After a change went through, or failed (the graph errors of an enabled workflow come back here). */
  onChanged: (error?: unknown) => void;
  onDeleted: () => void;
}) {
  return (
    <section className="card wf-panel" aria-labelledby="step-title">
      <h2 id="step-title">
        {typeLabel(step.type)}: {step.name}
      </h2>
      {problems.length > 0 ? (
        <div className="note error" role="alert">
          <strong>This step keeps the workflow from running:</strong>
          <ul>
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {/* A new form per step (and per saved version), so the fields start from what is stored. */}
      <StepForm key={`${step.id}:${step.updatedAt}`} workflow={workflow} step={step} onChanged={onChanged} />
      <Transitions workflow={workflow} step={step} onChanged={onChanged} />
      <DeleteStep workflow={workflow} step={step} onChanged={onChanged} onDeleted={onDeleted} />
    </section>
  );
}

function StepForm({
  workflow,
  step,
  onChanged,
}: {
  workflow: WorkflowDetail;
  step: WorkflowStep;
  onChanged: (error?: unknown) => void;
}) {
  const { api } = useProject();
  const refresh = useRefreshWorkflow(workflow.id);
  const config = editableConfig(step);
  const fields = stepFields(step.type, config);
  const [name, setName] = useState(step.name);
  const [draft, setDraft] = useState<Draft>(() => draftOf(fields, config));
  const save = useMutation({
    mutationFn: () => api.workflows.steps.update(workflow.id, step.id, { name, config: configOf(fields, draft) }),
    onSuccess: async () => {
      await refresh();
      onChanged();
    },
    onError: (error) => onChanged(error),
  });
  return (
    <Form onSubmit={() => save.mutate()} aria-label={`Edit ${step.name}`}>
      <ErrorNote error={save.error} />
      <Field
        label="Step name"
        name="name"
        required
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={save.error}
      />
      <ConfigFields fields={fields} draft={draft} onChange={setDraft} error={save.error} widgets={WIDGETS} />
      <button type="submit" className="primary" disabled={save.isPending}>
        Save step
      </button>
    </Form>
  );
}

function Transitions({
  workflow,
  step,
  onChanged,
}: {
  workflow: WorkflowDetail;
  step: WorkflowStep;
  onChanged: (error?: unknown) => void;
}) {
  const { api } = useProject();
  const refresh = useRefreshWorkflow(workflow.id);
  const out = workflow.transitions.filter((t) => t.fromStepId === step.id);
  const free = BRANCHES[step.type].filter((b) => !out.some((t) => t.branch === b));
  const others = workflow.steps.filter((s) => s.id !== step.id);
  const [branch, setBranch] = useState('');
  const [to, setTo] = useState('');
  const chosenBranch = free.some((b) => (b ?? '') === branch) ? branch : (free[0] ?? '');
  const done = {
    onSuccess: async () => {
      await refresh();
      onChanged();
      setTo('');
    },
    onError: (error: unknown) => onChanged(error),
  };
  const connect = useMutation({
    mutationFn: () =>
      api.workflows.transitions.add(workflow.id, {
        fromStepId: step.id,
        toStepId: to,
        branch: (chosenBranch || null) as TransitionBranch | null,
      }),
    ...done,
  });
  const disconnect = useMutation({
    mutationFn: (transitionId: string) => api.workflows.transitions.remove(workflow.id, transitionId),
    ...done,
  });
  const name = (id: string) => workflow.steps.find((s) => s.id === id)?.name ?? id;
  if (BRANCHES[step.type].length === 0)
    return <p className="muted">An Exit step ends the execution: nothing follows it.</p>;
  return (
    <div className="wf-transitions">
      <h3>Then</h3>
      <ErrorNote error={connect.error ?? disconnect.error} />
      {out.length === 0 ? <p className="muted">Nothing follows this step yet: the execution ends here.</p> : null}
      <ul className="plain-list">
        {out.map((t) => (
          <li key={t.id}>
            {t.branch ? <span className="chip plain">{branchLabel(t.branch)}</span> : null}→ {name(t.toStepId)}{' '}
            <button
              type="button"
              className="small"
              onClick={() => disconnect.mutate(t.id)}
              disabled={disconnect.isPending}
              aria-label={`Remove the transition${t.branch ? ` “${branchLabel(t.branch)}”` : ''} to ${name(t.toStepId)}`}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      {free.length > 0 && others.length > 0 ? (
        <Form className="inline-form" onSubmit={() => connect.mutate()} aria-label="Connect to a step">
          {free.length > 1 || free[0] !== null ? (
            <SelectField
              label="Branch"
              value={chosenBranch}
              onChange={(e) => setBranch(e.target.value)}
              options={free.map((b): [string, string] => [b ?? '', branchLabel(b)])}
            />
          ) : null}
          <SelectField
            label="Go to"
            required
            value={to}
            onChange={(e) => setTo(e.target.value)}
            options={[['', 'Choose a step…'], ...others.map((s): [string, string] => [s.id, s.name])]}
          />
          <div className="field">
            <button type="submit" disabled={connect.isPending || !to}>
              Connect
            </button>
          </div>
        </Form>
      ) : null}
    </div>
  );
}

function DeleteStep({
  workflow,
  step,
  onChanged,
  onDeleted,
}: {
  workflow: WorkflowDetail;
  step: WorkflowStep;
  onChanged: (error?: unknown) => void;
  onDeleted: () => void;
}) {
  const { api } = useProject();
  const refresh = useRefreshWorkflow(workflow.id);
  const [open, setOpen] = useState(false);
  const outCount = workflow.transitions.filter((t) => t.fromStepId === step.id).length;
  const inCount = workflow.transitions.filter((t) => t.toStepId === step.id).length;
  const [splice, setSplice] = useState(true);
  const canSplice = outCount === 1 && inCount > 0;
  const remove = useMutation({
    mutationFn: () => api.workflows.steps.remove(workflow.id, step.id, { splice: canSplice && splice }),
    onSuccess: async () => {
      setOpen(false);
      await refresh();
      onChanged();
      onDeleted();
    },
    onError: (error) => onChanged(error),
  });
  return (
    <div className="wf-delete">
      <button type="button" className="danger" onClick={() => setOpen(true)}>
        Delete step
      </button>
      <ConfirmDialog
        open={open}
        title={`Delete “${step.name}”?`}
        confirm="Delete the step"
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
        onClose={() => setOpen(false)}
      >
        <ErrorNote error={remove.error} />
        <p>The step and its transitions are deleted. Executions waiting at it keep it from being deleted.</p>
        {canSplice ? (
          <label className="inline">
            <input type="checkbox" checked={splice} onChange={(e) => setSplice(e.target.checked)} /> Connect the steps
            before it to the step after it
          </label>
        ) : null}
      </ConfirmDialog>
    </div>
  );
}
