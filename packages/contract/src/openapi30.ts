import type { OpenAPIObject as OpenApi30Object } from 'openapi3-ts/oas30';
import type { OpenAPIObject } from 'openapi3-ts/oas31';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keys whose value is one schema, and keys whose value is a list or a map of schemas. */
const SCHEMA_KEYS = new Set(['schema', 'items', 'additionalProperties', 'not']);
const SCHEMA_LIST_KEYS = new Set(['anyOf', 'oneOf', 'allOf']);
const SCHEMA_MAP_KEYS = new Set(['properties', 'patternProperties']);
const isNullSchema = (s: unknown) => isObject(s) && s.type === 'null' && Object.keys(s).length === 1;
/** zod-to-json-schema's marker for "may be absent" in an optional header or query value. */
const isNever = (s: unknown) => isObject(s) && isObject(s.not) && Object.keys(s.not).length === 0;

/**
 * The OpenAPI 3.0.3 rendering of the (3.1) document, for generators that read only 3.0: `null`
 * alternatives become `nullable`, `const` becomes a one-value `enum`, numeric exclusive bounds
 * become 3.0's booleans, and the `anyOf: [{not: {}}, …]` of optional parameters becomes the plain
 * schema. Only schema positions are rewritten; examples and other values are copied as they are.
 */
export function toOpenApi30(document: OpenAPIObject): OpenApi30Object {
  const { openapi: _version, ...rest } = structuredClone(document) as unknown as Json;
  components = (document.components?.schemas ?? {}) as Record<string, Json>;
  return { openapi: '3.0.3', ...(walk(rest) as Json) } as unknown as OpenApi30Object;
}

/** The document's named schemas, for the `type` a nullable `$ref` needs in 3.0 (set per conversion). */
let components: Record<string, Json> = {};
const refType = (ref: unknown) =>
  typeof ref === 'string' ? components[ref.replace('#/components/schemas/', '')]?.type : undefined;

/** Walks any value; the children of schema positions are rewritten by `schema30`. */
function walk(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(walk);
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === 'example' || key === 'examples') out[key] = child;
    else if (key === 'schemas' && isObject(child)) out[key] = mapValues(child, schema30);
    else if (key === 'schema') out[key] = schema30(child);
    else out[key] = walk(child);
  }
  return out;
}

const mapValues = (map: Json, fn: (v: unknown) => unknown): Json =>
  Object.fromEntries(Object.entries(map).map(([k, v]) => [k, fn(v)]));

function schema30(value: unknown): unknown {
  if (!isObject(value)) return value;
  let node: Json = {};
  for (const [key, child] of Object.entries(value)) {
    if (SCHEMA_KEYS.has(key)) node[key] = schema30(child);
    else if (SCHEMA_LIST_KEYS.has(key) && Array.isArray(child)) node[key] = child.map(schema30);
    else if (SCHEMA_MAP_KEYS.has(key) && isObject(child)) node[key] = mapValues(child, schema30);
    else node[key] = child;
  }
  node = withoutNullAlternatives(node);
  if (Array.isArray(node.examples)) {
    const { examples, ...rest } = node;
    node = { ...rest, example: examples[0] };
  }
  if ('propertyNames' in node) {
    // 3.0 has no `propertyNames`: the key rule stays in words (the 3.1 document keeps the schema).
    const { propertyNames: _keys, ...rest } = node;
    node = rest;
  }
  if ('const' in node) {
    const { const: only, ...rest } = node;
    node = { ...rest, enum: [only] };
  }
  if (Array.isArray(node.type)) node = singleType(node, node.type);
  // A 3.0 `$ref` ignores its siblings: wrap it so the description (and `nullable`) count.
  if ('$ref' in node && Object.keys(node).length > 1) {
    const { $ref, ...siblings } = node;
    node = { ...siblings, allOf: [{ $ref }] };
  }
  if (node.nullable === true && node.type === undefined) node = typedNullable(node);
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof node[flag] === 'number') node = { ...node, [bound]: node[flag], [flag]: true };
  }
  return node;
}

/** `type: [a, 'null']` → `type: a, nullable`; several types → `anyOf` of one type each. */
function singleType(node: Json, list: unknown[]): Json {
  const types = list.filter((t) => t !== 'null');
  const nullable = types.length < list.length ? { nullable: true } : {};
  const { type: _list, ...rest } = node;
  if (types.length === 1) return { ...rest, type: types[0], ...nullable };
  return { ...rest, anyOf: types.map((type) => ({ type, ...nullable })) };
}

/** 3.0 tools refuse `nullable` without `type`: take it from the `$ref`, or push it into each alternative. */
function typedNullable(node: Json): Json {
  if ('$ref' in node) {
    const { $ref, ...rest } = node;
    return typedNullable({ ...rest, allOf: [{ $ref }] });
  }
  const all = node.allOf;
  if (Array.isArray(all) && all.length === 1) {
    const type = refType((all[0] as Json).$ref);
    if (type) return { ...node, type };
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = node[key];
    if (!Array.isArray(options)) continue;
    const { nullable: _flag, ...rest } = node;
    return { ...rest, [key]: options.map((o) => typedNullable({ ...(o as Json), nullable: true })) };
  }
  return node;
}

/** `anyOf: [X, {type: null}]` → X with `nullable: true`; `anyOf: [{not: {}}, X]` → X. */
function withoutNullAlternatives(node: Json): Json {
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = node[key];
    if (!Array.isArray(options)) continue;
    const kept = options.filter((o) => !isNullSchema(o) && !isNever(o));
    if (kept.length === options.length) continue;
    const nullable = kept.length < options.filter((o) => !isNever(o)).length;
    const { [key]: _dropped, ...rest } = node;
    const flag = nullable ? { nullable: true } : {};
    if (kept.length !== 1) return { ...rest, [key]: kept, ...flag };
    const only = kept[0] as Json;
    // A 3.0 `$ref` ignores its siblings: wrap it to keep the description and `nullable`.
    if ('$ref' in only) return { ...rest, allOf: [only], ...flag };
    return { ...rest, ...only, ...flag };
  }
  return node;
}
