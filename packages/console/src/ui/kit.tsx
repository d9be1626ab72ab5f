import { type FormHTMLAttributes, type ReactNode, useId, useState } from 'react';
import { fieldErrors, messageOf } from '../api';

/** A date in the viewer's time zone; the exact ISO value on hover (and for screen readers' `dateTime`). */
export function Time({ iso, relative = false }: { iso: string | null | undefined; relative?: boolean }) {
  if (!iso) return <span className="muted">—</span>;
  const date = new Date(iso);
  const text = relative ? relativeTime(date) : DATE_TIME.format(date);
  return (
    <time dateTime={iso} title={iso}>
      {text}
    </time>
  );
}

const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

function relativeTime(date: Date): string {
  const seconds = Math.round((date.getTime() - Date.now()) / 1000);
  const units: Array<[Intl.RelativeTimeFormatUnit, number]> = [
    ['day', 86_400],
    ['hour', 3_600],
    ['minute', 60],
  ];
  for (const [unit, size] of units)
    if (Math.abs(seconds) >= size) return RELATIVE.format(Math.round(seconds / size), unit);
  return RELATIVE.format(seconds, 'second');
}

/** The API's message for a failed call (and its suggestion), announced to screen readers. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const suggestion = (error as { suggestion?: string }).suggestion;
  return (
    <div className="note error" role="alert">
      <strong>{messageOf(error)}</strong>
      {suggestion ? <p>{suggestion}</p> : null}
    </div>
  );
}

export function Notice({ children, tone = 'info' }: { children: ReactNode; tone?: 'info' | 'warn' | 'ok' }) {
  return <div className={`note ${tone}`}>{children}</div>;
}

/** What to do when a list is empty. */
export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <header className="page-header">
      <h1>{title}</h1>
      {children ? <div className="actions">{children}</div> : null}
    </header>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="muted" aria-live="polite">
      {what}…
    </p>
  );
}

/** A labelled input; the API's message for this field (from a 422) under it. */
export function Field({
  label,
  name,
  error,
  hint,
  ...input
}: { label: string; name: string; error?: unknown; hint?: string } & React.InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  const message = fieldErrors(error)[name];
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        aria-invalid={message ? true : undefined}
        aria-describedby={message || hint ? `${id}-note` : undefined}
        {...input}
      />
      {message || hint ? (
        <small id={`${id}-note`} className={message ? 'field-error' : 'muted'}>
          {message ?? hint}
        </small>
      ) : null}
    </div>
  );
}

/** The required email field of a form (`email` in the API's body); `account` marks a sign-in's (autofill). */
export function EmailField({
  value,
  onChange,
  error,
  account,
}: {
  value: string;
  onChange: (email: string) => void;
  error: unknown;
  account?: boolean;
}) {
  return (
    <Field
      label="Email"
      name="email"
      type="email"
      required
      autoComplete={account ? 'username' : undefined}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      error={error}
    />
  );
}

export function SelectField({
  label,
  options,
  ...select
}: { label: string; options: Array<[string, string]> } & React.SelectHTMLAttributes<HTMLSelectElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} {...select}>
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

const CHIP_TONE: Record<string, string> = {
  SENT: 'ok',
  DELIVERED: 'ok',
  SUCCEEDED: 'ok',
  verified: 'ok',
  completed: 'ok',
  up: 'ok',
  BOUNCED: 'bad',
  COMPLAINED: 'bad',
  FAILED: 'bad',
  failed: 'bad',
  down: 'bad',
  mismatch: 'bad',
  missing: 'warn',
  pending: 'warn',
  QUEUED: 'warn',
  SCHEDULED: 'warn',
  SENDING: 'warn',
  PENDING: 'warn',
  running: 'warn',
  queued: 'warn',
};

export function StatusChip({ status }: { status: string }) {
  return <span className={`chip ${CHIP_TONE[status] ?? 'plain'}`}>{status}</span>;
}

/** Copies `value`; says so for a moment (and to screen readers). */
export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="small"
      onClick={async () => {
        await navigator.clipboard?.writeText(value).catch(() => undefined);
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      <span aria-live="polite">{copied ? 'Copied' : label}</span>
    </button>
  );
}

/** A secret shown only when asked, with a copy button. */
export function Secret({ value, label }: { value: string; label: string }) {
  const [shown, setShown] = useState(false);
  return (
    <div className="secret">
      <span className="sr-only">{label}: </span>
      <code>{shown ? value : `${value.slice(0, 3)}${'•'.repeat(24)}`}</code>
      <button type="button" className="small" onClick={() => setShown((s) => !s)} aria-pressed={shown}>
        {shown ? 'Hide' : 'Show'}
      </button>
      <CopyButton value={value} />
    </div>
  );
}

/** A long operation's progress: a real progress bar with its numbers. */
export function Progress({ label, value, max }: { label: string; value: number; max: number }) {
  const id = useId();
  return (
    <div className="progress">
      <label htmlFor={id}>{label}</label>
      <progress id={id} value={max > 0 ? value : undefined} max={max || 1} />
      <span className="muted">
        {value.toLocaleString()} of {max ? max.toLocaleString() : '?'}
      </span>
    </div>
  );
}

/** A form whose submit runs `onSubmit` (the page does not reload): every form of the console. */
export function Form({
  onSubmit,
  ...rest
}: { onSubmit: () => void } & Omit<FormHTMLAttributes<HTMLFormElement>, 'onSubmit'>) {
  return (
    <form
      {...rest}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    />
  );
}

/**
 * A table that scrolls sideways on a narrow screen, with a caption for screen readers and one
 * column heading per entry of `headings` (text, or a node: a checkbox, a heading read but not shown).
 */
export function Table({
  caption,
  headings,
  children,
}: {
  caption: string;
  headings: React.ReactNode[];
  children: React.ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            {headings.map((heading, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the headings are fixed for a table
              <th scope="col" key={i}>
                {heading}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
