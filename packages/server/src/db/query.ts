import type pg from 'pg';
import type { Queryable } from './sql.js';

/**
 * A small SQL query builder: fragments are written as tagged templates whose interpolations are
 * parameters, never text, and are numbered only when the whole query is assembled. Nothing built
 * here can carry user input into the SQL text, and no file glues `$n` positions to another's.
 *
 *   const where = sql`c.project_id = ${projectId} AND ${condition}`;
 *   const { text, values } = toQuery(sql`SELECT count(*) FROM contacts c WHERE ${where}`);
 */
export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  return new Sql(strings, values);
}

/** Trusted SQL text from the code itself (an identifier or keyword chosen from a fixed list). */
export const raw = (text: string): Sql => new Sql([text], []);

export const join = (fragments: Sql[], separator: string): Sql => {
  if (fragments.length === 0) return raw('');
  const strings = ['', ...fragments.slice(1).map(() => separator), ''];
  return new Sql(strings, fragments);
};

/** Combines boolean fragments; an empty AND is true and an empty OR is false. */
export const and = (parts: Sql[]): Sql => (parts.length ? sql`(${join(parts, ' AND ')})` : raw('true'));
export const or = (parts: Sql[]): Sql => (parts.length ? sql`(${join(parts, ' OR ')})` : raw('false'));

/** Numbers the parameters of a fragment tree into `$1..$n`. */
export function toQuery(fragment: Sql): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const text = render(fragment, values);
  return { text, values };
}

function render(fragment: Sql, values: unknown[]): string {
  let text = fragment.strings[0] ?? '';
  fragment.values.forEach((value, i) => {
    if (value instanceof Sql) {
      text += render(value, values);
    } else {
      values.push(value);
      text += `$${values.length}`;
    }
    text += fragment.strings[i + 1] ?? '';
  });
  return text;
}

/** Runs a built query and returns its rows. */
export async function queryRows<R extends pg.QueryResultRow>(db: Queryable, fragment: Sql): Promise<R[]> {
  const { text, values } = toQuery(fragment);
  const result = await db.query<R>(text, values);
  return result.rows;
}

/** Runs a built statement for its effect and answers how many rows it touched. */
export async function runStatement(db: Queryable, fragment: Sql): Promise<number> {
  const { text, values } = toQuery(fragment);
  const result = await db.query(text, values);
  return result.rowCount ?? 0;
}

/**
 * Runs a built query as a named prepared statement (planned once per connection, DESIGN.md §7),
 * for fixed-shape queries on hot paths: one name must always build the same SQL text.
 */
export async function preparedRows<R extends pg.QueryResultRow>(
  db: Queryable,
  name: string,
  fragment: Sql,
): Promise<R[]> {
  const { text, values } = toQuery(fragment);
  const result = await db.query<R>({ name, text, values });
  return result.rows;
}
