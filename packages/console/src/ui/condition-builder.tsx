import {
  CONDITION_LOGICS,
  CONDITION_UNITS,
  type ConditionFilter,
  type ConditionGroup,
  type ConditionTree,
  type Segment,
} from '@pigeon/sdk';
import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { useProject } from '../session';
import {
  ACTIVITIES,
  CONTACT_FIELDS,
  fieldOf,
  kindOf,
  newFilter,
  newGroup,
  OPERATOR_LABELS,
  operatorsOf,
  parseValue,
  refit,
  ruleOf,
  type Scope,
  type Source,
  sourceOf,
  sourcesOf,
} from './condition-model';

export { emptyCondition, isComplete } from './condition-model';

/** What the pickers offer: the project's custom data keys, event names and segments. */
interface Choices {
  dataKeys: string[];
  eventNames: string[];
  segments: Segment[];
  listIds: { data: string; event: string };
  scope: Scope;
}

interface Props {
  value: ConditionTree;
  onChange: (tree: ConditionTree) => void;
  /** The legend of the whole builder. */
  label: string;
  /** The API's field errors (`fieldErrors` of a 400/422), shown on the filter they name. */
  errors?: Record<string, string>;
  /** The body field the tree is sent as (`condition`, `audienceCondition`): error paths start with it. */
  prefix?: string;
  /** `workflow`: a CONDITION step's tree, which may also read the trigger event's and the workflow's data. */
  scope?: Scope;
}

/** The API's condition trees, built with pickers: AND/OR groups, nested groups, every field kind and operator. */
export function ConditionBuilder({
  value,
  onChange,
  label,
  errors = {},
  prefix = 'condition',
  scope = 'contacts',
}: Props) {
  const { project, api } = useProject();
  const id = useId();
  const fields = useQuery({ queryKey: ['contact-fields', project.id], queryFn: () => api.contacts.fields() });
  const events = useQuery({ queryKey: ['event-names', project.id], queryFn: () => api.events.names() });
  const segments = useQuery({ queryKey: ['segments', project.id], queryFn: () => api.segments.list() });
  const choices: Choices = {
    dataKeys: (fields.data?.fields ?? []).filter((f) => f.kind === 'custom').map((f) => f.field.replace(/^data\./, '')),
    eventNames: (events.data ?? []).map((e) => e.name),
    segments: segments.data ?? [],
    listIds: { data: `${id}-data`, event: `${id}-events` },
    scope,
  };
  return (
    <fieldset className="condition">
      <legend>{label}</legend>
      <datalist id={choices.listIds.data}>
        {choices.dataKeys.map((key) => (
          <option key={key} value={key} />
        ))}
      </datalist>
      <datalist id={choices.listIds.event}>
        {choices.eventNames.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      <TreeEditor tree={value} onChange={onChange} path={prefix} name="" depth={1} choices={choices} errors={errors} />
    </fieldset>
  );
}

interface Level {
  path: string;
  /** `1`, `1.2`: where a group sits, for its legend. */
  name: string;
  depth: number;
  choices: Choices;
  errors: Record<string, string>;
}

/** The engine's limit on nesting (CONDITION_LIMITS.maxDepth). */
const MAX_DEPTH = 5;

function TreeEditor({
  tree,
  onChange,
  ...level
}: Level & { tree: ConditionTree; onChange: (tree: ConditionTree) => void }) {
  const setGroup = (i: number, group: ConditionGroup | null) =>
    onChange({
      ...tree,
      groups: group ? tree.groups.map((g, j) => (j === i ? group : g)) : tree.groups.filter((_, j) => j !== i),
    });
  return (
    <div className="condition-tree">
      <label className="condition-logic">
        Match{' '}
        <select
          value={tree.logic}
          onChange={(e) => onChange({ ...tree, logic: e.target.value as ConditionTree['logic'] })}
        >
          {CONDITION_LOGICS.map((logic) => (
            <option key={logic} value={logic}>
              {logic === 'AND' ? 'all of these groups' : 'any of these groups'}
            </option>
          ))}
        </select>
      </label>
      {tree.groups.map((group, i) => (
        <GroupEditor
          // biome-ignore lint/suspicious/noArrayIndexKey: groups have no identity but their place
          key={i}
          group={group}
          onChange={(g) => setGroup(i, g)}
          onRemove={tree.groups.length > 1 ? () => setGroup(i, null) : undefined}
          {...level}
          path={`${level.path}.groups.${i}`}
          name={`${level.name}${i + 1}`}
        />
      ))}
      <button
        type="button"
        className="secondary"
        onClick={() => onChange({ ...tree, groups: [...tree.groups, newGroup()] })}
      >
        Add group{level.name ? ` in group ${level.name.replace(/\.$/, '')}` : ''}
      </button>
    </div>
  );
}

function GroupEditor({
  group,
  onChange,
  onRemove,
  ...level
}: Level & { group: ConditionGroup; onChange: (g: ConditionGroup) => void; onRemove?: () => void }) {
  const setFilter = (i: number, filter: ConditionFilter | null) =>
    onChange({
      ...group,
      filters: filter ? group.filters.map((f, j) => (j === i ? filter : f)) : group.filters.filter((_, j) => j !== i),
    });
  const { conditions, ...withoutNested } = group;
  return (
    <fieldset className="condition-group">
      <legend>Group {level.name}: all of</legend>
      {group.filters.map((filter, i) => (
        <FilterRow
          // biome-ignore lint/suspicious/noArrayIndexKey: filters have no identity but their place
          key={i}
          filter={filter}
          label={`Condition ${i + 1} in group ${level.name}`}
          onChange={(f) => setFilter(i, f)}
          onRemove={group.filters.length > 1 || conditions ? () => setFilter(i, null) : undefined}
          choices={level.choices}
          error={errorUnder(level.errors, `${level.path}.filters.${i}`)}
        />
      ))}
      {conditions ? (
        <div className="condition-nested">
          <TreeEditor
            tree={conditions}
            onChange={(tree) => onChange({ ...group, conditions: tree })}
            {...level}
            path={`${level.path}.conditions`}
            name={`${level.name}.`}
            depth={level.depth + 1}
          />
          <button type="button" className="secondary" onClick={() => onChange(withoutNested)}>
            Remove the groups nested in group {level.name}
          </button>
        </div>
      ) : null}
      <div className="condition-actions">
        <button
          type="button"
          className="secondary"
          onClick={() => onChange({ ...group, filters: [...group.filters, newFilter()] })}
        >
          Add condition to group {level.name}
        </button>
        {!conditions && level.depth < MAX_DEPTH ? (
          <button
            type="button"
            className="secondary"
            onClick={() => onChange({ ...group, conditions: { logic: 'OR', groups: [newGroup()] } })}
          >
            Nest groups in group {level.name}
          </button>
        ) : null}
        {onRemove ? (
          <button type="button" className="danger" onClick={onRemove}>
            Remove group {level.name}
          </button>
        ) : null}
      </div>
      {errorUnder(level.errors, level.path, true) ? (
        <small className="field-error">{errorUnder(level.errors, level.path, true)}</small>
      ) : null}
    </fieldset>
  );
}

/** The first error at `path` or below it (`exact`: at the group itself only). */
function errorUnder(errors: Record<string, string>, path: string, exact = false): string | undefined {
  for (const [field, message] of Object.entries(errors)) {
    if (field === path || (!exact && field.startsWith(`${path}.`))) return message;
  }
  return undefined;
}

function FilterRow({
  filter,
  label,
  onChange,
  onRemove,
  choices,
  error,
}: {
  filter: ConditionFilter;
  label: string;
  onChange: (f: ConditionFilter) => void;
  onRemove?: () => void;
  choices: Choices;
  error?: string;
}) {
  const { scope } = choices;
  const { source, name } = sourceOf(filter, scope);
  // Another kind of field starts from its first operator; the same kind keeps the chosen one.
  const setField = (next: Source, nextName: string) => {
    const kind = kindOf(next, nextName);
    const operator = kind === kindOf(source, name) ? filter.operator : operatorsOf(kind)[0];
    onChange(refit({ ...filter, field: fieldOf(next, nextName), operator: operator ?? filter.operator }, scope));
  };
  const firstName = (s: Source) =>
    s === 'segment' ? (choices.segments[0]?.id ?? '') : s === 'event' ? (choices.eventNames[0] ?? '') : '';
  return (
    <fieldset className="condition-filter" aria-invalid={error ? true : undefined}>
      <legend className="sr-only">{label}</legend>
      <select
        aria-label="Source"
        value={source}
        onChange={(e) => setField(e.target.value as Source, firstName(e.target.value as Source))}
      >
        {sourcesOf(scope).map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
      <FieldName source={source} name={name} choices={choices} onChange={(n) => setField(source, n)} />
      <select
        aria-label="Operator"
        value={filter.operator}
        onChange={(e) => onChange(refit({ ...filter, operator: e.target.value as ConditionFilter['operator'] }, scope))}
      >
        {operatorsOf(kindOf(source, name)).map((op) => (
          <option key={op} value={op}>
            {OPERATOR_LABELS[op]}
          </option>
        ))}
      </select>
      <ValueInput filter={filter} scope={scope} onChange={onChange} />
      {onRemove ? (
        <button type="button" className="danger" aria-label={`Remove ${label.toLowerCase()}`} onClick={onRemove}>
          Remove
        </button>
      ) : null}
      {error ? <small className="field-error">{error}</small> : null}
    </fieldset>
  );
}

function FieldName({
  source,
  name,
  choices,
  onChange,
}: {
  source: Source;
  name: string;
  choices: Choices;
  onChange: (name: string) => void;
}) {
  if (source === 'contact' || source === 'activity' || source === 'segment') {
    const options: Array<[string, string]> =
      source === 'contact'
        ? CONTACT_FIELDS
        : source === 'activity'
          ? ACTIVITIES
          : choices.segments.map((s) => [s.id, s.name]);
    const label = source === 'contact' ? 'Contact field' : source === 'activity' ? 'Activity' : 'Segment';
    return (
      <select aria-label={label} value={name} onChange={(e) => onChange(e.target.value)}>
        {source === 'segment' && !name ? <option value="">Choose a segment</option> : null}
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    );
  }
  const [label, list, placeholder] = {
    data: ['Data key', choices.listIds.data, 'plan'],
    event: ['Event name', choices.listIds.event, 'signup'],
    trigger: ['Trigger event key', undefined, 'total'],
    workflow: ['Workflow data key', undefined, 'plan'],
  }[source];
  return (
    <input
      aria-label={label}
      list={list}
      placeholder={placeholder}
      value={name}
      onChange={(e) => onChange(e.target.value.trim())}
    />
  );
}

function ValueInput({
  filter,
  scope,
  onChange,
}: {
  filter: ConditionFilter;
  scope: Scope;
  onChange: (f: ConditionFilter) => void;
}) {
  const rule = ruleOf(filter, scope);
  const text = filter.value === undefined || filter.value === null ? '' : String(filter.value);
  const set = (value: unknown) => onChange({ ...filter, value });
  if (rule === 'none') return null;
  if (rule === 'boolean') {
    return (
      <select aria-label="Value" value={String(filter.value === true)} onChange={(e) => set(e.target.value === 'true')}>
        <option value="true">yes</option>
        <option value="false">no</option>
      </select>
    );
  }
  if (rule === 'amount') {
    return (
      <>
        <input
          aria-label="Amount"
          type="number"
          min={1}
          value={text}
          onChange={(e) => set(parseValue(e.target.value, rule))}
        />
        <select
          aria-label="Unit"
          value={filter.unit ?? 'days'}
          onChange={(e) => onChange({ ...filter, unit: e.target.value as ConditionFilter['unit'] })}
        >
          {CONDITION_UNITS.map((unit) => (
            <option key={unit} value={unit}>
              {unit}
            </option>
          ))}
        </select>
      </>
    );
  }
  if (rule === 'date') {
    return <input aria-label="Value" type="date" value={text.slice(0, 10)} onChange={(e) => set(e.target.value)} />;
  }
  if (rule === 'scalar') {
    const as = typeof filter.value === 'number' ? 'number' : typeof filter.value === 'boolean' ? 'boolean' : 'text';
    return (
      <>
        <select
          aria-label="Value type"
          value={as}
          onChange={(e) => set(parseValue(text, rule, e.target.value as typeof as))}
        >
          <option value="text">text</option>
          <option value="number">number</option>
          <option value="boolean">yes/no</option>
        </select>
        {as === 'boolean' ? (
          <select aria-label="Value" value={text} onChange={(e) => set(e.target.value === 'true')}>
            <option value="true">yes</option>
            <option value="false">no</option>
          </select>
        ) : (
          <input
            aria-label="Value"
            inputMode={as === 'number' ? 'decimal' : undefined}
            value={text}
            onChange={(e) => set(parseValue(e.target.value, rule, as))}
          />
        )}
      </>
    );
  }
  return (
    <input
      aria-label="Value"
      placeholder={rule === 'numberOrDate' ? '42 or 2026-01-31' : undefined}
      value={text}
      onChange={(e) => set(parseValue(e.target.value, rule))}
    />
  );
}
