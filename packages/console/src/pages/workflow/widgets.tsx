import type { ConditionTree } from '@pigeon/sdk';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { fieldErrors } from '../../api';
import { projectPath, useProject } from '../../session';
import { ConditionBuilder, emptyCondition } from '../../ui/condition-builder';
import type { Widget } from '../../ui/workflow-config-form';
import { useTemplates } from './shared';

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
 * CONDITION's tree with the console's condition builder (contact facts, and the trigger event's and
 * the workflow's data), or as JSON. The API's errors inside the tree show on the filter they name.
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
        scope="workflow"
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

/** Fields whose input is the console's own rather than the generated one. */
export const WIDGETS = { templateId: TemplatePicker, condition: ConditionField };
