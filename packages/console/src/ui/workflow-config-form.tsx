import { PigeonError, stepConfigSchemas, type WorkflowStepType } from '@pigeon/sdk';
import { type ReactNode, useId } from 'react';

/**
 * A step's config form, generated from the contract's zod schema of its type (the schema the API
 * checks the config with): objects become fieldsets, strings text inputs, numbers number inputs
 * with their bounds, enums selects (the default named), and what has no simple shape (records,
 * unknown values, a condition tree) a JSON textarea. `widgets` replaces the input of a field by
 * its path (`templateId`: a template picker). The API's 422 messages show under the field they name.
 */

/** The few parts of a zod (v3) schema this form reads. */
interface Schema {
  _def: {
    typeName: string;
    description?: string;
    innerType?: Schema;
    schema?: Schema;
    in?: Schema;
    shape?: () => Record<string, Schema>;
    values?: readonly string[];
    options?: readonly Schema[];
    checks?: Array<{ kind: string; value?: number }>;
    defaultValue?: () => unknown;
  };
  safeParse: (value: unknown) => { success: boolean };
}

interface Common {
  /** Dotted path inside the config (`recipient.customEmail`), as the API names it after `config.`. */
  path: string;
  label: string;
  hint?: string;
  required: boolean;
  defaultValue?: unknown;
}
export type FieldSpec =
  | (Common & { kind: 'object'; fields: FieldSpec[] })
  | (Common & { kind: 'text'; inputType: 'text' | 'email'; maxLength?: number })
  | (Common & { kind: 'number'; min?: number; max?: number; integer: boolean })
  | (Common & { kind: 'choice'; options: readonly string[] })
  | (Common & { kind: 'boolean' })
  | (Common & { kind: 'json' });

/** The form's values by path: strings as typed (JSON as text), booleans for checkboxes. */
export type Draft = Record<string, string | boolean>;

const label = (key: string) => {
  const words = key
    .replace(/Id$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .replace(/\burl\b/, 'URL');
  return words.charAt(0).toUpperCase() + words.slice(1);
};
const hint = (text: string | undefined) => text?.replace(/`/g, '');

/** The fields of a step type's config; a union shows the form of its option that `value` fits (the first for a new step). */
export function stepFields(type: WorkflowStepType, value?: unknown): FieldSpec[] {
  const root = describe(stepConfigSchemas[type] as unknown as Schema, '', 'config', value);
  return root.kind === 'object' ? root.fields : [root];
}

function describe(schema: Schema, path: string, key: string, value: unknown): FieldSpec {
  let s = schema;
  let required = true;
  let defaultValue: unknown;
  let description = s._def.description;
  for (;;) {
    const t = s._def.typeName;
    if (t === 'ZodOptional' || t === 'ZodNullable') required = false;
    else if (t === 'ZodDefault') {
      required = false;
      defaultValue = s._def.defaultValue?.();
    } else if (t === 'ZodUnion' && s._def.options) {
      const options = s._def.options;
      s = (value !== undefined && options.find((o) => o.safeParse(value).success)) || (options[0] as Schema);
      description ??= s._def.description;
      continue;
    } else if (t !== 'ZodEffects') break;
    s = (s._def.innerType ?? s._def.schema) as Schema;
    description ??= s._def.description;
  }
  const common: Common = { path, label: label(key), hint: hint(description), required, defaultValue };
  const checks = s._def.checks ?? [];
  switch (s._def.typeName) {
    case 'ZodObject': {
      const shape = s._def.shape?.() ?? {};
      const inner = (value ?? {}) as Record<string, unknown>;
      return {
        ...common,
        kind: 'object',
        fields: Object.entries(shape).map(([k, v]) => describe(v, path ? `${path}.${k}` : k, k, inner[k])),
      };
    }
    case 'ZodString':
      return {
        ...common,
        kind: 'text',
        inputType: checks.some((c) => c.kind === 'email') ? 'email' : 'text',
        maxLength: checks.find((c) => c.kind === 'max')?.value,
      };
    case 'ZodNumber':
      return {
        ...common,
        kind: 'number',
        min: checks.find((c) => c.kind === 'min')?.value,
        max: checks.find((c) => c.kind === 'max')?.value,
        integer: checks.some((c) => c.kind === 'int'),
      };
    case 'ZodEnum':
      return { ...common, kind: 'choice', options: s._def.values ?? [] };
    case 'ZodBoolean':
      return { ...common, kind: 'boolean' };
    default:
      return { ...common, kind: 'json' };
  }
}

const at = (value: unknown, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), value);

/** The draft of an existing config (or of a new step: empty fields, defaults shown as such). */
export function draftOf(fields: FieldSpec[], config: unknown = {}): Draft {
  const draft: Draft = {};
  const fill = (list: FieldSpec[]) => {
    for (const f of list) {
      if (f.kind === 'object') {
        fill(f.fields);
        continue;
      }
      const v = at(config, f.path);
      if (f.kind === 'boolean') draft[f.path] = Boolean(v ?? f.defaultValue);
      else if (v === undefined || v === null) draft[f.path] = '';
      else if (f.kind === 'json') draft[f.path] = JSON.stringify(v, null, 2);
      else draft[f.path] = String(v);
    }
  };
  fill(fields);
  return draft;
}

/** A field's text the form could not turn into a value (JSON that does not parse). */
export class DraftError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** The config the draft stands for: empty optional fields left out, numbers as numbers, JSON parsed. */
export function configOf(fields: FieldSpec[], draft: Draft): Record<string, unknown> {
  const build = (list: FieldSpec[]): Record<string, unknown> | undefined => {
    const out: Record<string, unknown> = {};
    for (const f of list) {
      const key = f.path.split('.').pop() as string;
      const value = fieldValue(f);
      if (value !== undefined) out[key] = value;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  };
  const fieldValue = (f: FieldSpec): unknown => {
    if (f.kind === 'object') return build(f.fields) ?? (f.required ? {} : undefined);
    const raw = draft[f.path];
    if (f.kind === 'boolean') return raw === true;
    const text = typeof raw === 'string' ? raw.trim() : '';
    if (text === '') return f.required && f.kind === 'text' ? '' : undefined;
    if (f.kind === 'number') return Number(text);
    if (f.kind === 'json') {
      try {
        return JSON.parse(text);
      } catch (e) {
        throw new DraftError(f.path, `Not valid JSON: ${(e as Error).message}`);
      }
    }
    return text;
  };
  return build(fields) ?? {};
}

/** The API's (or the form's own) message for a field: its own path or anything inside it (`config.condition.groups.0…`). */
function errorAt(error: unknown, path: string, exact = false): string | undefined {
  if (error instanceof DraftError) return error.path === path ? error.message : undefined;
  if (!(error instanceof PigeonError)) return undefined;
  const name = `config.${path}`;
  const found = error.errors?.find((e) => e.field === name || (!exact && e.field.startsWith(`${name}.`)));
  if (!found) return undefined;
  return found.field === name ? found.message : `${found.field.slice(name.length + 1)}: ${found.message}`;
}

/**
 * A field's own input in place of the generated one: the draft's text in, text out. One with
 * `ownLabel` labels itself (a fieldset with its legend) instead of under the field's label.
 */
export type Widget = ((props: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  describedBy?: string;
  invalid: boolean;
  /** The last failed save (the API's field errors inside the field are the widget's to show). */
  error: unknown;
}) => ReactNode) & { ownLabel?: boolean };

/** The generated fields of a config, bound to `draft`. */
export function ConfigFields({
  fields,
  draft,
  onChange,
  error,
  widgets = {},
}: {
  fields: FieldSpec[];
  draft: Draft;
  onChange: (draft: Draft) => void;
  error: unknown;
  widgets?: Record<string, Widget>;
}) {
  return (
    <>
      {fields.map((f) => (
        <ConfigField key={f.path} field={f} draft={draft} onChange={onChange} error={error} widgets={widgets} />
      ))}
    </>
  );
}

function ConfigField({
  field: f,
  draft,
  onChange,
  error,
  widgets,
}: {
  field: FieldSpec;
  draft: Draft;
  onChange: (draft: Draft) => void;
  error: unknown;
  widgets: Record<string, Widget>;
}) {
  const id = useId();
  if (f.kind === 'object') {
    return (
      <fieldset className="config-group">
        <legend>
          {f.label}
          {f.required ? '' : ' (optional)'}
        </legend>
        {f.hint ? <p className="muted">{f.hint}</p> : null}
        <ConfigFields fields={f.fields} draft={draft} onChange={onChange} error={error} widgets={widgets} />
      </fieldset>
    );
  }
  const Custom = widgets[f.path];
  const message = errorAt(error, f.path, Boolean(Custom));
  const set = (value: string | boolean) => onChange({ ...draft, [f.path]: value });
  const value = draft[f.path];
  const text = typeof value === 'string' ? value : '';
  // A choice names its default among its options.
  const defaultText =
    f.defaultValue === undefined || f.kind === 'choice' ? undefined : `default: ${String(f.defaultValue)}`;
  const note = message ?? [f.hint, defaultText].filter(Boolean).join(' · ');
  const noteId = note ? `${id}-note` : undefined;
  const shared = {
    id,
    name: `config.${f.path}`,
    'aria-invalid': message ? true : undefined,
    'aria-describedby': noteId,
  } as const;
  let input: ReactNode;
  if (Custom)
    input = (
      <Custom
        id={id}
        label={f.label}
        value={text}
        onChange={set}
        describedBy={noteId}
        invalid={Boolean(message)}
        error={error}
      />
    );
  else if (f.kind === 'boolean')
    input = <input {...shared} type="checkbox" checked={value === true} onChange={(e) => set(e.target.checked)} />;
  else if (f.kind === 'choice')
    input = (
      <select {...shared} required={f.required} value={text} onChange={(e) => set(e.target.value)}>
        {f.required && f.defaultValue === undefined ? (
          <option value="" disabled>
            Choose…
          </option>
        ) : (
          <option value="">{f.defaultValue === undefined ? '—' : `${String(f.defaultValue)} (default)`}</option>
        )}
        {f.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  else if (f.kind === 'number')
    input = (
      <input
        {...shared}
        type="number"
        inputMode="numeric"
        required={f.required}
        min={f.min}
        max={f.max}
        step={f.integer ? 1 : 'any'}
        value={text}
        onChange={(e) => set(e.target.value)}
      />
    );
  else if (f.kind === 'json')
    input = (
      <textarea
        {...shared}
        className="json"
        rows={5}
        spellCheck={false}
        required={f.required}
        placeholder="JSON"
        value={text}
        onChange={(e) => set(e.target.value)}
      />
    );
  else
    input = (
      <input
        {...shared}
        type={f.inputType}
        required={f.required}
        maxLength={f.maxLength}
        value={text}
        onChange={(e) => set(e.target.value)}
      />
    );
  return (
    <div className={f.kind === 'boolean' ? 'field checkbox' : 'field'}>
      {Custom?.ownLabel ? null : (
        <label htmlFor={id}>
          {f.label}
          {f.required || f.kind === 'boolean' ? '' : ' (optional)'}
        </label>
      )}
      {input}
      {note ? (
        <small id={noteId} className={message ? 'field-error' : 'muted'}>
          {note}
        </small>
      ) : null}
    </div>
  );
}
