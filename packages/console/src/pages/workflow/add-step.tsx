import type { TransitionBranch, WorkflowDetail, WorkflowStepInput, WorkflowStepType } from '@pigeon/sdk';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { useProject } from '../../session';
import { ErrorNote, Field, Form, SelectField } from '../../ui/kit';
import { ConfigFields, configOf, type Draft, draftOf, stepFields } from '../../ui/workflow-config-form';
import { BRANCHES, branchLabel, STEP_TYPES } from '../../ui/workflow-model';
import { useRefreshWorkflow } from './shared';
import { WIDGETS } from './widgets';

/** Where a new step can go: after a step, on one of its branches no transition uses yet. */
function openEnds(workflow: WorkflowDetail) {
  return workflow.steps.flatMap((s) =>
    BRANCHES[s.type]
      .filter((b) => !workflow.transitions.some((t) => t.fromStepId === s.id && t.branch === b))
      .map((b) => ({ value: `${s.id}|${b ?? ''}`, text: b ? `${s.name} (${branchLabel(b)})` : s.name, stepId: s.id })),
  );
}

/**
 * A new step: its type, name and config (the type's generated form), and the step it follows
 * (by default the selected step, else the last open end), connected in the same go.
 */
export function AddStep({
  workflow,
  after,
  onAdded,
  onCancel,
}: {
  workflow: WorkflowDetail;
  after: string | null;
  onAdded: (stepId: string, error?: unknown) => void;
  onCancel: () => void;
}) {
  const { api } = useProject();
  const refresh = useRefreshWorkflow(workflow.id);
  const ends = openEnds(workflow);
  const [type, setType] = useState<WorkflowStepType>(workflow.steps.length === 0 ? 'SEND_EMAIL' : 'DELAY');
  const fields = stepFields(type);
  const [name, setName] = useState('');
  const [draft, setDraft] = useState<Draft>(() => draftOf(fields));
  // After the selected step, else the newest step with a way out left; on its first free branch.
  const [from, setFrom] = useState(() => {
    const stepId = ends.some((e) => e.stepId === after) ? after : ends[ends.length - 1]?.stepId;
    return ends.find((e) => e.stepId === stepId)?.value ?? '';
  });
  const add = useMutation({
    mutationFn: async () => {
      // The config is built from the type's own schema (and checked by the API against it).
      const body = { type, name: name.trim() || undefined, config: configOf(fields, draft) } as WorkflowStepInput;
      const step = await api.workflows.steps.add(workflow.id, body);
      if (from) {
        const [fromStepId = '', branch = ''] = from.split('|');
        await api.workflows.transitions
          .add(workflow.id, { fromStepId, toStepId: step.id, branch: (branch || null) as TransitionBranch | null })
          .catch(async (error) => {
            // The step is there: show it, with why it is not connected.
            await refresh();
            onAdded(step.id, error);
            throw error;
          });
      }
      return step;
    },
    onSuccess: async (step) => {
      await refresh();
      onAdded(step.id);
    },
  });
  const description = STEP_TYPES.find(([t]) => t === type)?.[2];
  return (
    <Form className="card wf-panel" onSubmit={() => add.mutate()} aria-labelledby="add-step-title">
      <h2 id="add-step-title">Add a step</h2>
      <ErrorNote error={add.error} />
      <SelectField
        label="Step type"
        value={type}
        onChange={(e) => {
          const next = e.target.value as WorkflowStepType;
          setType(next);
          setDraft(draftOf(stepFields(next)));
          add.reset();
        }}
        options={STEP_TYPES.map(([t, label]): [string, string] => [t, label])}
      />
      {description ? <p className="muted wf-type-hint">{description}</p> : null}
      <Field
        label="Step name (optional)"
        name="name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={add.error}
      />
      <ConfigFields key={type} fields={fields} draft={draft} onChange={setDraft} error={add.error} widgets={WIDGETS} />
      {workflow.steps.length > 0 ? (
        <SelectField
          label="After"
          value={from}
          onChange={(e) => setFrom(e.target.value)}
          options={[['', 'Nothing (not connected yet)'], ...ends.map((e): [string, string] => [e.value, e.text])]}
        />
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={add.isPending}>
          Add step
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </Form>
  );
}
